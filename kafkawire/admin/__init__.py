"""Cluster administration: topics, configs, partitions, records and consumer groups.

::

    from kafkawire.admin import Admin, AlterConfigOp

    with Admin("localhost:9092") as admin:
        admin.describe_cluster()                          # cluster id, controller, brokers
        admin.describe_topics(["clicks"])                 # partitions, leaders, replicas, ISR, topic id
        admin.describe_configs(["clicks"])                # {ConfigResource: {name: ConfigEntry}}
        admin.alter_configs({"clicks": [AlterConfigOp("retention.ms", "set", "3600000")]})
        admin.create_partitions({"clicks": 12})           # grow to 12 partitions
        admin.delete_records({("clicks", 0): 1000})       # drop everything before offset 1000
        admin.list_groups()
        admin.describe_groups(["etl"])                    # members with their decoded assignments
        admin.list_consumer_group_offsets("etl")          # committed, log end offset and lag
        admin.reset_consumer_group_offsets("etl", ["clicks"], to="earliest")

:class:`Admin` wraps a :class:`kafkawire.client.Client` (its own, built from ``bootstrap_servers`` and
``client_options``, or one passed as ``client=``, which it then does not close). Every method is one
blocking call with one deadline: ``timeout_ms=`` (default the client's ``retry_timeout_ms``) bounds it,
retries included; errors a broker marks retriable are retried until then, others are raised at once as
:mod:`kafkawire.protocol.errors` classes. Its methods come in parts, one module each
(:mod:`.cluster_api`, :mod:`.groups_api`, :mod:`.security_api`, :mod:`.transactions_api`, on
:mod:`.base`); the work is done by the modules they call (:mod:`.topics`, :mod:`.groups`, ...); the result
types are in :mod:`.types`.
"""

from __future__ import annotations

from ..client.errors import GroupNotInactiveError
from .acls import AclBinding, AclBindingFilter
from .cluster_api import ClusterApi
from .features import FeatureMetadata
from .groups_api import GroupsApi
from .log_dirs import LogDirDescription, ReplicaInfo
from .partitions import PartitionInfo, Reassignment, TopicPartitionsDescription
from .security_api import SecurityApi
from .share_groups import ShareGroupDescription, ShareGroupOffset, ShareMemberDescription
from .transactions import ProducerState, TransactionDescription, TransactionListing
from .transactions_api import TransactionsApi
from .types import (
    AlterConfigOp,
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    GroupDescription,
    GroupListing,
    GroupOffset,
    MemberDescription,
    PartitionDescription,
    TopicDescription,
)

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "Admin",
    "AlterConfigOp",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "FeatureMetadata",
    "GroupDescription",
    "GroupListing",
    "GroupNotInactiveError",
    "GroupOffset",
    "LogDirDescription",
    "MemberDescription",
    "PartitionDescription",
    "PartitionInfo",
    "ProducerState",
    "Reassignment",
    "ReplicaInfo",
    "ShareGroupDescription",
    "ShareGroupOffset",
    "ShareMemberDescription",
    "TopicDescription",
    "TopicPartitionsDescription",
    "TransactionDescription",
    "TransactionListing",
]


class Admin(ClusterApi, GroupsApi, SecurityApi, TransactionsApi):
    """Administration of one cluster. ``Admin("host:9092", **client_options)`` or ``Admin(client=c)``.

    Thread-safe (calls are serialised on the client's lock). Use as a context manager or call :meth:`close`.
    """
