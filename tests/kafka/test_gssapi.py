"""SASL GSSAPI (Kerberos) against Apache Kafka and a real MIT KDC, both started here.

The KDC (:mod:`kafkawire.testing.kdc`) has its own realm on loopback; the broker logs in as
``kafka/localhost@KAFKAWIRE.TEST`` from a keytab made by ``kadmin.local`` and the client as ``kafkawire@...``
from another. Produce, consume and an admin call from Python with the Java property names (SASL_PLAINTEXT
and SASL_SSL), a ticket cache filled by ``kinit``, one properties file shared with Kafka's console producer
and consumer (the Java client), the CLI with a
``--command-config`` file (in a fresh process that only has ``KRB5_CONFIG``), a Spark batch read with
``kafka.sasl.*`` options, and the failures a user meets: a keytab that does not exist, a principal that is not
in the keytab, a principal the KDC does not know, a wrong service name, an unreachable KDC (bounded by the
call's deadline, not the Kerberos library's retries).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkawire.admin import Admin
from kafkawire.client import AuthenticationFailedError, Client, Consumer
from kafkawire.client.errors import KafkaTimeoutError
from kafkawire.testing import start_broker
from kafkawire.testing.kafka import KERBEROS_CLIENT

pytestmark = pytest.mark.broker

KRB5 = "com.sun.security.auth.module.Krb5LoginModule"


@pytest.fixture(scope="module")
def broker():
    with start_broker("kafka", sasl_mechanisms=("GSSAPI",), tls=True) as b:
        # MIT's library reads KRB5_CONFIG when it makes a context: the test KDC's realm for this process.
        saved = {k: os.environ.get(k) for k in b.kdc.env}
        os.environ.update(b.kdc.env)
        try:
            yield b
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def jaas(keytab: str | Path, principal: str) -> str:
    return f'{KRB5} required useKeyTab=true storeKey=true keyTab="{keytab}" principal="{principal}";'


def props(broker, **overrides: str) -> dict[str, str]:
    kdc = broker.kdc
    base = {
        "bootstrap.servers": broker.bootstrap_for("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "sasl.jaas.config": jaas(kdc.keytab(KERBEROS_CLIENT), kdc.principal(KERBEROS_CLIENT)),
    }
    return {**base, **overrides}


def test_produce_consume_and_admin_with_a_keytab(broker, topic_name):
    topic = topic_name()
    with Client.from_properties(props(broker)) as client:
        client.create_topics({topic: 2})
        sent = [f"kerberos-{i}".encode() for i in range(20)]
        client.produce(topic, sent[:10], partition=0)
        client.produce(topic, sent[10:], partition=1)
    with Admin(client=Client.from_properties(props(broker))) as admin:
        description = admin.describe_cluster()
        assert [b.port for b in description.brokers] == [int(broker.bootstrap_for("SASL_PLAINTEXT").split(":")[1])]
        admin.client.close()
    consumer = Consumer.from_properties({**props(broker), "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 120
        while len(got) < len(sent) and time.monotonic() < deadline:
            for columns in consumer.poll(timeout_ms=2000).values():
                got.extend(r.value for r in columns.to_records())
        consumer.commit()
    finally:
        consumer.close()
    assert sorted(got) == sorted(sent)  # every record once: nothing lost, nothing duplicated


def test_python_keyword_arguments(broker, topic_name):
    kdc, topic = broker.kdc, topic_name()
    with Client(broker.bootstrap_for("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI",
                sasl_kerberos_principal=kdc.principal(KERBEROS_CLIENT),
                sasl_kerberos_keytab=kdc.keytab(KERBEROS_CLIENT)) as client:
        client.create_topics([topic])
        assert client.produce(topic, [b"kw"], partition=0).offset.tolist() == [0]
        assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == [b"kw"]


def test_kerberos_over_tls(broker, topic_name):
    # SASL_SSL: GSSAPI authenticates, TLS encrypts (Kafka negotiates no Kerberos security layer).
    config = props(broker, **{"bootstrap.servers": broker.bootstrap_for("SASL_SSL"), "security.protocol": "SASL_SSL",
                              "ssl.truststore.location": str(broker.ca_file), "ssl.truststore.type": "PEM"})
    with Client.from_properties(config) as client:
        topic = topic_name()
        client.create_topics([topic])
        assert client.produce(topic, [b"sealed"], partition=0).offset.tolist() == [0]
        assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == [b"sealed"]


def test_ticket_cache_filled_by_kinit(broker, topic_name, tmp_path):
    # useKeyTab=false useTicketCache=true: the credentials kinit left in the cache (Java's other usual set-up).
    kdc = broker.kdc
    user = kdc.add_principal("cache-user", password="cache-user-pw", keytab=False)
    cache = tmp_path / "ccache"
    subprocess.run(["kinit", "-c", f"FILE:{cache}", user], input="cache-user-pw\n", text=True, check=True,
                   env={**os.environ, **kdc.env}, capture_output=True, timeout=60)
    config = props(broker, **{"sasl.jaas.config": f'{KRB5} required useTicketCache=true ticketCache="{cache}";'})
    with Client.from_properties(config) as client:
        topic = topic_name()
        client.create_topics([topic])
        assert client.produce(topic, [b"from the cache"], partition=0).offset.tolist() == [0]


def test_cli_with_a_command_config_file_in_a_fresh_process(broker, topic_name, tmp_path):
    kdc, topic = broker.kdc, topic_name()
    config = tmp_path / "client.properties"
    config.write_text(
        "# as for kafka-console-producer --command-config\n"
        f"bootstrap.servers={broker.bootstrap_for('SASL_PLAINTEXT')}\n"
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        f"sasl.jaas.config={KRB5} required \\\n    useKeyTab=true storeKey=true \\\n"
        f"    keyTab=\"{kdc.keytab(KERBEROS_CLIENT)}\" \\\n    principal=\"{kdc.principal(KERBEROS_CLIENT)}\";\n"
    )
    src = tmp_path / "in.txt"
    src.write_text("one\ntwo\nthree\n")
    # Only what a user sets: KRB5_CONFIG for the realm (no ticket cache: the keytab is the login).
    env = {**os.environ, "KRB5_CONFIG": kdc.env["KRB5_CONFIG"], "PYTHONPATH": os.getcwd()}
    env.pop("KRB5CCNAME", None)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kafkawire.cli", *args, "--command-config", str(config)],
                              env=env, capture_output=True, text=True, timeout=180)

    for args in (("topics", "create", topic), ("produce", topic, "--input", str(src)),
                 ("consume", topic, "--format", "values", "-o", str(tmp_path / "out.txt"), "--max-records", "3")):
        res = cli(*args)
        assert res.returncode == 0, (args, res.stdout, res.stderr)
    assert (tmp_path / "out.txt").read_text().split() == ["one", "two", "three"]
    res = cli("topics", "list")
    assert res.returncode == 0 and topic in res.stdout


def test_spark_batch_read_with_kafka_sasl_options(broker, topic_name):
    from pyspark.sql import SparkSession

    from kafkawire.spark import session
    from kafkawire.spark.kafka_jar import spark_jars_config

    topic = topic_name()
    with Client.from_properties(props(broker)) as client:
        client.create_topics([topic])
        client.produce(topic, [b"a", b"b", b"c"], partition=0)
    # Spark's Python workers are forked from this process: they inherit KRB5_CONFIG.
    existing = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    spark = session("local[1]", app_name="kafkawire-gssapi", config=spark_jars_config())
    try:
        reader = spark.read.format("kafkawire").option("subscribe", topic)
        for key, value in props(broker).items():
            reader = reader.option(f"kafka.{key}", value)
        assert sorted(bytes(r.value) for r in reader.load().collect()) == [b"a", b"b", b"c"]
    finally:
        if existing is None:
            spark.stop()


def test_one_client_properties_file_serves_the_java_client_and_kafkawire(broker, topic_name, tmp_path):
    # Kafka's own console producer (the Java client, the JDK's Kerberos) logs in with the same file and
    # the same KDC; kafkawire reads what it wrote, and the reverse.
    from kafkawire.testing.kafka import java_binary, kafka_classpath

    kdc, topic = broker.kdc, topic_name()
    config = tmp_path / "client.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props(broker).items() if k != "bootstrap.servers"))
    with Client.from_properties(props(broker)) as client:
        client.create_topics([topic])
    lines = [f"java-{i}" for i in range(50)]
    res = subprocess.run(
        [java_binary(), "-Xmx256m", f"-Djava.security.krb5.conf={kdc.krb5_conf}", "-cp", kafka_classpath(),
         "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", broker.bootstrap_for("SASL_PLAINTEXT"),
         "--topic", topic, "--command-config", str(config)],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    with Client.from_properties(props(broker)) as client:
        got = [r.value for r in client.fetch(topic, 0, 0, timeout_ms=30_000).to_records()]
        assert got == [line.encode() for line in lines]  # all 50, in order, once
        client.produce(topic, [b"from-kafkawire"], partition=0)
    res = subprocess.run(
        [java_binary(), "-Xmx256m", f"-Djava.security.krb5.conf={kdc.krb5_conf}", "-cp", kafka_classpath(),
         "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server",
         broker.bootstrap_for("SASL_PLAINTEXT"), "--topic", topic, "--from-beginning", "--max-messages", "51",
         "--timeout-ms", "60000", "--command-config", str(config)],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == [*lines, "from-kafkawire"]


def test_a_broker_that_ends_sessions_kip368(broker, topic_name):
    # Kerberos clusters often set connections.max.reauth.ms (KIP-368): the broker closes a connection whose
    # session ended instead of answering on it. kafkawire re-authenticates on a new connection (the Java
    # client re-authenticates in place): a producer and a reader going on for several sessions lose and
    # duplicate nothing. The second broker shares the first one's KDC (and its kafka/localhost key).
    topic = topic_name()
    with start_broker("kafka", sasl_mechanisms=("GSSAPI",), kdc=broker.kdc,
                      config={"connections.max.reauth.ms": "3000"}) as other:
        assert not other._owns_kdc and other.kdc is broker.kdc
        config = props(broker, **{"bootstrap.servers": other.bootstrap_for("SASL_PLAINTEXT")})
        sent = [f"session-{i}".encode() for i in range(8)]
        with Client.from_properties(config) as client:
            client.create_topics([topic])
            for value in sent:
                client.produce(topic, [value], partition=0)
                time.sleep(1.0)  # 8 s: past two session ends
            assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == sent
            # The sessions did end: the client authenticated again (a SaslHandshake per authentication).
            handshakes = client.metrics()["apis"]["SaslHandshake"]["requests"]
            assert handshakes >= 3, client.metrics()["apis"]
        # The first broker still takes its keytab: sharing the principal did not change its key.
        with Client.from_properties(props(broker)) as client:
            assert client.metadata().brokers


# ---------------------------------------------------------------------------------------------- errors
def _fails(config: dict[str, str]) -> str:
    started = time.monotonic()
    with Client.from_properties(config, retry_timeout_ms=20_000) as client:
        with pytest.raises(AuthenticationFailedError) as info:
            client.metadata()
    # An error, not a wait: a loaded machine's slack over the 20 s call deadline.
    assert time.monotonic() - started < 90
    return str(info.value)


def test_a_keytab_that_does_not_exist(broker, tmp_path):
    missing = tmp_path / "nope.keytab"
    message = _fails(props(broker, **{"sasl.jaas.config": jaas(missing, broker.kdc.principal(KERBEROS_CLIENT))}))
    assert str(missing) in message and broker.kdc.principal(KERBEROS_CLIENT) in message


def test_a_principal_that_is_not_in_the_keytab(broker):
    kdc = broker.kdc
    other = kdc.add_principal("not-in-that-keytab")
    keytab = kdc.keytab(KERBEROS_CLIENT)
    message = _fails(props(broker, **{"sasl.jaas.config": jaas(keytab, other)}))
    assert other in message and str(keytab) in message
    assert f"the keytab holds no key for {other}, only for {kdc.principal(KERBEROS_CLIENT)}" in message


def test_a_principal_the_kdc_does_not_know(broker):
    kdc = broker.kdc
    ghost = kdc.add_principal("ghost")
    kdc.kadmin(f"delprinc -force {ghost}")  # its keytab stays: the KDC no longer knows it
    message = _fails(props(broker, **{"sasl.jaas.config": jaas(kdc.keytab("ghost"), ghost)}))
    assert ghost in message and "not found in Kerberos database" in message


def test_a_wrong_service_name(broker):
    message = _fails(props(broker, **{"sasl.kerberos.service.name": "kafak"}))
    assert "kafak/localhost" in message and "sasl.kerberos.service.name='kafak'" in message
    assert "not found in Kerberos database" in message


def test_an_unreachable_kdc_is_bounded_by_the_deadline(broker, tmp_path, monkeypatch):
    # A KDC address that accepts TCP connections and never answers: the Kerberos library would wait
    # kdc_timeout per try; the connection's deadline cuts it.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        conf = Path(broker.kdc.krb5_conf).read_text()
        kdc_address = f"{broker.kdc.host}:{broker.kdc.port}"
        stalled = tmp_path / "krb5.conf"
        stalled.write_text(conf.replace(kdc_address, f"127.0.0.1:{silent.getsockname()[1]}")
                           .replace("kdc_timeout = 5s", "kdc_timeout = 60s"))
        monkeypatch.setenv("KRB5_CONFIG", str(stalled))
        started = time.monotonic()
        with Client.from_properties(props(broker), connect_timeout_ms=3_000, retry_timeout_ms=6_000) as client:
            with pytest.raises(KafkaTimeoutError) as info:
                client.metadata()
        assert time.monotonic() - started < 45  # 6 s asked; far below the library's own 60 s per try
        assert "KDC" in str(info.value)
    finally:
        silent.close()
