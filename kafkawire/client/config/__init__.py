"""The Java client's configuration properties, turned into :class:`kafkawire.Client` keyword arguments.

Users of secured clusters already hold a ``client.properties`` file or Spark's ``kafka.*`` options written
for the Java client: ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config`` (a JAAS string such
as ``org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";``),
``ssl.truststore.location/.type/.password`` (JKS, PKCS12, PEM), ``ssl.keystore.*``, the OAUTHBEARER
client-credentials settings (KIP-768). :func:`config_from_properties` accepts those names, and librdkafka's
(``sasl.mechanisms``, ``sasl.username``, ``ssl.ca.location``, ...) that ``kcat -X`` users type, and
returns the keyword arguments of :class:`~kafkawire.client.Client` (an :class:`ssl.SSLContext`, the SASL
credentials or an OAUTHBEARER token provider, timeouts).

Kerberos: ``sasl.mechanism=GSSAPI`` with ``sasl.kerberos.service.name`` and a JAAS
``com.sun.security.auth.module.Krb5LoginModule`` (``useKeyTab``/``keyTab``/``principal``, or
``useTicketCache``/``ticketCache``), or librdkafka's ``sasl.kerberos.principal``/``sasl.kerberos.keytab``.
AWS MSK IAM: ``OAUTHBEARER`` with AWS's ``IAMOAuthBearerLoginCallbackHandler`` (and ``sasl.mechanism=AWS_MSK_IAM``
with AWS's ``IAMLoginModule``, sent as OAUTHBEARER, which MSK's IAM listeners accept too) gets tokens from
:class:`~kafkawire.client.net.oauth.MskIamTokenProvider`.

Like the Java client, an unknown property is reported (a warning naming it) and otherwise ignored; a
property kafkawire knows but cannot honour (a Java callback class, Java cipher-suite names) or a
bad value raises :class:`ConfigError`, whose message names the property.

The mapping lives in one module per job: :mod:`.values` (value converters), :mod:`.jaas` (``sasl.jaas.config``),
:mod:`.sasl` (SASL credentials and token providers), :mod:`.tls` (the TLS context), :mod:`.properties` (the
client's properties and ``.properties`` files) and :mod:`.roles` (the consumer's and the producer's, with
suggestions for misspelt names); every name is importable from here.
"""

from __future__ import annotations

from ..errors import ConfigError
from .jaas import (
    KRB5_MODULE,
    MSK_IAM_CLIENT_HANDLER,
    MSK_IAM_MODULE,
    MSK_OAUTH_HANDLER,
    OAUTH_MODULE,
    PLAIN_MODULE,
    SCRAM_MODULE,
    JaasLoginModule,
    parse_jaas_config,
)
from .properties import bootstrap_from_properties, config_from_properties, load_properties_file
from .roles import (
    CONSUMER_PARAMS,
    IGNORED_COMMON,
    JAVA_ASSIGNORS,
    PRODUCER_PARAMS,
    client_kwargs_from_properties,
    consumer_kwargs_from_properties,
    producer_kwargs_from_properties,
    role_kwargs,
)
from .tls import ssl_context_from_properties
from .values import bool_value, choice, int_value, str_value

__all__ = [
    "CONSUMER_PARAMS",
    "JAVA_ASSIGNORS",
    "KRB5_MODULE",
    "MSK_IAM_CLIENT_HANDLER",
    "MSK_IAM_MODULE",
    "MSK_OAUTH_HANDLER",
    "OAUTH_MODULE",
    "PLAIN_MODULE",
    "PRODUCER_PARAMS",
    "SCRAM_MODULE",
    "IGNORED_COMMON",
    "ConfigError",
    "JaasLoginModule",
    "bool_value",
    "bootstrap_from_properties",
    "choice",
    "client_kwargs_from_properties",
    "config_from_properties",
    "consumer_kwargs_from_properties",
    "int_value",
    "load_properties_file",
    "parse_jaas_config",
    "producer_kwargs_from_properties",
    "role_kwargs",
    "ssl_context_from_properties",
    "str_value",
]
