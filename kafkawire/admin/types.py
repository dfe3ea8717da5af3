"""Result and argument types of the admin operations (:mod:`kafkawire.admin.topics`, :mod:`kafkawire.admin`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

__all__ = [
    "BrokerDescription",
    "ClusterDescription",
    "PartitionDescription",
    "TopicDescription",
    "ConfigResource",
    "ConfigSynonym",
    "ConfigEntry",
    "AlterConfigOp",
    "GroupListing",
    "MemberDescription",
    "GroupDescription",
    "GroupOffset",
    "RESOURCE_TYPES",
    "CONFIG_SOURCES",
    "CONFIG_OPS",
]

#: Kafka's ``ConfigResource.Type`` codes by name (lower case).
RESOURCE_TYPES: dict[str, int] = {"topic": 2, "broker": 4, "broker_logger": 8, "client_metrics": 16, "group": 32}
#: Kafka's ``ConfigEntry.ConfigSource`` names by code (DescribeConfigs v1+).
CONFIG_SOURCES: dict[int, str] = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}
#: IncrementalAlterConfigs operations (KIP-339) by name.
CONFIG_OPS: dict[str, int] = {"set": 0, "delete": 1, "append": 2, "subtract": 3}


@dataclass(frozen=True)
class BrokerDescription:
    """One broker as DescribeCluster (or Metadata) reports it; ``fenced`` only from DescribeCluster v2+."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class ClusterDescription:
    """The cluster: its id, controller (-1 when unknown) and brokers sorted by node id."""

    cluster_id: str | None
    controller_id: int
    brokers: list[BrokerDescription]


@dataclass(frozen=True)
class PartitionDescription:
    """One partition of a described topic (``leader`` -1 when it has none)."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True)
class TopicDescription:
    """A topic: id (None when the broker reports none), internal flag and partitions sorted by index."""

    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: list[PartitionDescription]

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0


@dataclass(frozen=True)
class ConfigResource:
    """What a config belongs to: ``type`` one of :data:`RESOURCE_TYPES` (``"topic"``, ``"broker"``, ...)
    and its name (a topic name, a broker id as text, ``""`` for the cluster-wide broker default)."""

    type: str
    name: str

    def __post_init__(self) -> None:
        if self.type not in RESOURCE_TYPES:
            raise ValueError(f"config resource type must be one of {sorted(RESOURCE_TYPES)}, not {self.type!r}")

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        return cls("topic", name)

    @classmethod
    def broker(cls, node_id: int | str = "") -> ConfigResource:
        """A broker's configs (``""``: the dynamic default of every broker)."""
        return cls("broker", str(node_id))

    @classmethod
    def group(cls, group_id: str) -> ConfigResource:
        return cls("group", group_id)

    @property
    def type_code(self) -> int:
        return RESOURCE_TYPES[self.type]


@dataclass(frozen=True)
class ConfigSynonym:
    """A value the config would take from another source, highest precedence first (KIP-226)."""

    name: str
    value: str | None
    source: str


@dataclass(frozen=True)
class ConfigEntry:
    """One config of a resource. ``value`` is None for sensitive configs; ``source`` a name of
    :data:`CONFIG_SOURCES`; ``type`` Kafka's ``ConfigType`` code (DescribeConfigs v3+, else 0)."""

    name: str
    value: str | None
    source: str
    is_default: bool
    read_only: bool
    is_sensitive: bool
    synonyms: tuple[ConfigSynonym, ...] = ()
    type: int = 0
    documentation: str | None = None


@dataclass(frozen=True)
class AlterConfigOp:
    """One incremental change (KIP-339): ``op`` ``"set"``, ``"delete"``, ``"append"`` or ``"subtract"``
    (the last two for list-valued configs such as ``cleanup.policy``)."""

    name: str
    op: str = "set"
    value: str | None = None

    def __post_init__(self) -> None:
        if self.op not in CONFIG_OPS:
            raise ValueError(f"config operation must be one of {sorted(CONFIG_OPS)}, not {self.op!r}")
        if self.op != "delete" and self.value is None:
            raise ValueError(f"config operation {self.op!r} on {self.name!r} needs a value")


@dataclass(frozen=True)
class GroupListing:
    """A group as ListGroups reports it (``state`` / ``type`` empty when the broker is too old to say)."""

    group_id: str
    protocol_type: str
    state: str = ""
    type: str = ""


@dataclass(frozen=True)
class MemberDescription:
    """A member of a classic group; ``assignment`` decoded from its ConsumerProtocolAssignment for
    consumer groups (empty for other protocol types, whose assignment stays in ``raw_assignment``)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: dict[str, list[int]] = field(default_factory=dict)
    raw_assignment: bytes = b""


@dataclass(frozen=True)
class GroupDescription:
    """A group as DescribeGroups reports it: ``state`` (``Empty``, ``Stable``, ``PreparingRebalance``,
    ``CompletingRebalance``, ``Dead``), ``protocol`` the chosen assignor, ``coordinator`` its node id.
    ``type`` ``"consumer"`` for a group of the KIP-848 protocol (from ConsumerGroupDescribe: states
    ``Empty``, ``Assigning``, ``Reconciling``, ``Stable``; ``protocol`` the server-side assignor)."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberDescription]
    coordinator: int = -1
    type: str = "classic"


@dataclass(frozen=True)
class GroupOffset:
    """A group's position in one partition: ``committed`` (-1: nothing committed), the log's
    ``end_offset`` (-1 when the topic is gone) and ``lag`` (None when either is unknown: Kafka's tool prints
    ``-``)."""

    committed: int
    end_offset: int
    metadata: str | None = None
    leader_epoch: int = -1

    @property
    def lag(self) -> int | None:
        return None if self.committed < 0 or self.end_offset < 0 else max(0, self.end_offset - self.committed)
