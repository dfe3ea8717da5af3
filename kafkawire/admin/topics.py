"""Cluster, topic and config administration on top of :class:`~kafkawire.client.cluster.cluster.Cluster`:
describe topics, grow them, delete records, describe the cluster, describe and (incrementally,
KIP-339) alter configs (topic creation and deletion are the client's own, :mod:`kafkawire.client.cluster.topics`).
Consumer group administration is in :mod:`.groups`; the public facade is :class:`kafkawire.admin.Admin`.
Every function takes the call's one :class:`~kafkawire.client.net.deadline.Deadline` and runs
its requests through :meth:`Cluster.call`, the client's one retry loop."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ..client.cluster.cluster import Cluster
from ..client.cluster.retry import Final
from ..client.net.deadline import Deadline
from ..protocol import (
    CreatePartitionsRequest,
    DeleteRecordsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)
from ..protocol.errors import (
    InvalidPartitionsError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    broker_error,
    raise_broker_error,
)
from .types import (
    CONFIG_OPS,
    CONFIG_SOURCES,
    AlterConfigOp,
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    PartitionDescription,
    TopicDescription,
)

__all__ = [
    "describe_cluster",
    "describe_topics",
    "describe_configs",
    "alter_configs",
    "create_partitions",
    "delete_records",
]


# ------------------------------------------------------------------------------------------- cluster
def describe_cluster(cluster: Cluster, deadline: Deadline) -> ClusterDescription:
    """See :meth:`kafkawire.admin.Admin.describe_cluster`. DescribeCluster (KIP-700) where the broker
    speaks it (it also reports fenced brokers from v2, KIP-1073), else Metadata."""

    def attempt(d: Deadline) -> ClusterDescription:
        conn = cluster.any_connection(d)
        version = conn.versions.get(DescribeClusterRequest) if conn.versions is not None else None
        if version is None:
            meta = cluster.fetch_metadata([], d)
            brokers = [BrokerDescription(b.node_id, b.host, b.port, b.rack) for b in meta.brokers.values()]
            return ClusterDescription(meta.cluster_id, meta.controller_id, sorted(brokers, key=lambda b: b.node_id))
        version = conn.version_for(DescribeClusterRequest)
        req = DescribeClusterRequest(include_fenced_brokers=version >= 2)
        resp = conn.request(req, version, deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, "describe cluster")
        brokers = [
            BrokerDescription(b.broker_id, b.host, b.port, b.rack, bool(getattr(b, "is_fenced", False)))
            for b in resp.brokers
        ]
        return ClusterDescription(resp.cluster_id, resp.controller_id, sorted(brokers, key=lambda b: b.node_id))

    return cluster.call(deadline, attempt, what="describe cluster", topics=[])


def describe_topics(cluster: Cluster, deadline: Deadline, names: Iterable[str] | None) -> dict[str, TopicDescription]:
    """See :meth:`kafkawire.admin.Admin.describe_topics`. A topic that does not exist raises
    ``UnknownTopicOrPartitionError`` at once (not retried: the caller asked about that name)."""
    wanted = None if names is None else list(names)

    def attempt(d: Deadline) -> dict[str, TopicDescription]:
        meta = cluster.fetch_metadata(wanted, d)
        out: dict[str, TopicDescription] = {}
        for name in wanted if wanted is not None else sorted(meta.topics):
            tm = meta.topics.get(name)
            if tm is None:
                raise Final(UnknownTopicOrPartitionError(f"topic {name!r} does not exist"))
            if tm.error is not None:
                raise Final(tm.error) if isinstance(tm.error, UnknownTopicOrPartitionError) else tm.error
            if wanted is None and tm.is_internal:
                continue
            parts = [
                PartitionDescription(p.partition, p.leader, p.leader_epoch, p.replicas, p.isr, p.offline_replicas)
                for p in tm.partitions.values()
            ]
            out[name] = TopicDescription(name, tm.topic_id, tm.is_internal, sorted(parts, key=lambda p: p.partition))
        return out

    try:
        return cluster.call(deadline, attempt, what="describe topics", before_retry=lambda d, e: None)
    except Final as e:
        raise e.error from None


# ------------------------------------------------------------------------------------------- configs
def _resource(r: ConfigResource | str) -> ConfigResource:
    return r if isinstance(r, ConfigResource) else ConfigResource.topic(r)


def _config_connection(cluster: Cluster, r: ConfigResource, d: Deadline) -> Any:
    # A broker's own configs (and its loggers) are answered by that broker; the rest by any broker
    # (as Java's admin client routes them).
    if r.type in ("broker", "broker_logger") and r.name:
        if int(r.name) not in cluster.brokers:
            cluster.fetch_metadata([], d)
        return cluster.connection(int(r.name), d)
    return cluster.any_connection(d)


def describe_configs(
    cluster: Cluster,
    deadline: Deadline,
    resources: Iterable[ConfigResource | str],
    *,
    names: Iterable[str] | None = None,
    synonyms: bool = False,
    documentation: bool = False,
) -> dict[ConfigResource, dict[str, ConfigEntry]]:
    """See :meth:`kafkawire.admin.Admin.describe_configs`."""
    res = [_resource(r) for r in resources]
    keys = None if names is None else list(names)

    def attempt(d: Deadline) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        out: dict[ConfigResource, dict[str, ConfigEntry]] = {}
        for r in res:
            conn = _config_connection(cluster, r, d)
            version = conn.version_for(DescribeConfigsRequest)
            req = DescribeConfigsRequest(
                resources=[
                    DescribeConfigsRequest.DescribeConfigsResource(
                        resource_type=r.type_code, resource_name=r.name, configuration_keys=keys
                    )
                ],
                include_synonyms=synonyms,
                include_documentation=documentation,
            )
            resp = conn.request(req, version, deadline=d)
            for result in resp.results:
                err = broker_error(result.error_code, result.error_message, f"describe configs of {r.type} {r.name!r}")
                if err is not None:
                    raise Final(err) if isinstance(err, UnknownTopicOrPartitionError) else err
                out[r] = {c.name: _config_entry(c, version) for c in result.configs}
        return out

    try:
        return cluster.call(deadline, attempt, what="describe configs", topics=[])
    except Final as e:
        raise e.error from None


def _config_entry(c: Any, version: int) -> ConfigEntry:
    if version == 0:
        # v0 has no source, only is_default (and read_only): the closest sources.
        source = "DEFAULT_CONFIG" if c.is_default else "UNKNOWN"
    else:
        source = CONFIG_SOURCES.get(c.config_source, "UNKNOWN")
    return ConfigEntry(
        name=c.name,
        value=c.value,
        source=source,
        is_default=source == "DEFAULT_CONFIG",
        read_only=bool(c.read_only),
        is_sensitive=bool(c.is_sensitive),
        synonyms=tuple(
            ConfigSynonym(s.name, s.value, CONFIG_SOURCES.get(s.source, "UNKNOWN")) for s in (c.synonyms or ())
        ),
        type=int(getattr(c, "config_type", 0) or 0),
        documentation=getattr(c, "documentation", None),
    )


def alter_configs(
    cluster: Cluster,
    deadline: Deadline,
    changes: Mapping[ConfigResource | str, Iterable[AlterConfigOp]],
    *,
    validate_only: bool = False,
) -> None:
    """See :meth:`kafkawire.admin.Admin.alter_configs` (IncrementalAlterConfigs, KIP-339)."""
    plan = {_resource(r): list(ops) for r, ops in changes.items()}

    def attempt(d: Deadline) -> None:
        for r, ops in plan.items():
            conn = _config_connection(cluster, r, d)
            req = IncrementalAlterConfigsRequest(
                resources=[
                    IncrementalAlterConfigsRequest.AlterConfigsResource(
                        resource_type=r.type_code,
                        resource_name=r.name,
                        configs=[
                            IncrementalAlterConfigsRequest.AlterableConfig(
                                name=o.name, config_operation=CONFIG_OPS[o.op], value=o.value
                            )
                            for o in ops
                        ],
                    )
                ],
                validate_only=validate_only,
            )
            resp = conn.request(req, conn.version_for(IncrementalAlterConfigsRequest), deadline=d)
            for result in resp.responses:
                err = broker_error(result.error_code, result.error_message, f"alter configs of {r.type} {r.name!r}")
                if err is not None:
                    raise Final(err) if isinstance(err, UnknownTopicOrPartitionError) else err

    try:
        cluster.call(deadline, attempt, what="alter configs", topics=[])
    except Final as e:
        raise e.error from None


# ----------------------------------------------------------------------------------- partitions/records
def create_partitions(
    cluster: Cluster,
    deadline: Deadline,
    counts: Mapping[str, int],
    *,
    validate_only: bool = False,
    wait: bool = True,
) -> None:
    """See :meth:`kafkawire.admin.Admin.create_partitions`."""
    if not counts:
        return
    attempts = [0]

    def attempt(d: Deadline) -> None:
        attempts[0] += 1
        req = CreatePartitionsRequest(
            topics=[
                CreatePartitionsRequest.CreatePartitionsTopic(name=t, count=int(n), assignments=None)
                for t, n in counts.items()
            ],
            timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
            validate_only=validate_only,
        )
        resp = cluster.controller_connection(d).request(req, deadline=d)
        for r in resp.results:
            err = broker_error(r.error_code, r.error_message, f"create partitions of {r.name!r}")
            if err is None:
                continue
            if isinstance(err, InvalidPartitionsError) and attempts[0] > 1 and not validate_only:
                # A retry after an attempt whose answer was lost (timeout, broken connection): the topic may
                # already have grown to the count asked for, which is success, not "not more than now".
                tm = cluster.fetch_metadata([r.name], d).topics.get(r.name)
                have = len(tm.partitions) if tm is not None and tm.error is None else -1
                if have == counts[r.name]:
                    continue
                if 0 <= have < counts[r.name]:
                    # The controller has more partitions than the broker's metadata shows yet: ask again.
                    raise LeaderNotAvailableError(f"{r.name!r}: metadata shows {have} partitions, the controller more")
            raise Final(err) if isinstance(err, UnknownTopicOrPartitionError) else err

    try:
        cluster.call(deadline, attempt, what=f"create partitions {dict(counts)}", topics=[])
    except Final as e:
        raise e.error from None
    if wait and not validate_only:

        def grown(d: Deadline) -> None:
            meta = cluster.fetch_metadata(list(counts), d)
            for t, n in counts.items():
                tm = meta.topics.get(t)
                if tm is None or len(tm.partitions) < n or any(p.leader < 0 for p in tm.partitions.values()):
                    raise LeaderNotAvailableError(f"topic {t!r}: {n} partitions with leaders not in the metadata yet")

        cluster.call(deadline, grown, what=f"waiting for the new partitions of {list(counts)}",
                     before_retry=lambda d, e: None)


def delete_records(
    cluster: Cluster, deadline: Deadline, before: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], int]:
    """See :meth:`kafkawire.admin.Admin.delete_records`: returns each partition's new low watermark."""
    if not before:
        return {}
    topics = sorted({t for t, _ in before})

    def attempt(d: Deadline) -> dict[tuple[str, int], int]:
        by_leader: dict[int, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
        for (t, p), off in before.items():
            by_leader[cluster.leader(t, p, d)][t].append((p, int(off)))
        sent = []
        for leader, per_topic in by_leader.items():
            req = DeleteRecordsRequest(
                topics=[
                    DeleteRecordsRequest.DeleteRecordsTopic(
                        name=t,
                        partitions=[
                            DeleteRecordsRequest.DeleteRecordsPartition(partition_index=p, offset=o) for p, o in ps
                        ],
                    )
                    for t, ps in per_topic.items()
                ],
                timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
            )
            pending = cluster.connection(leader, d).send(req, deadline=d)
            assert pending is not None  # None only for requests that expect no response (acks=0)
            sent.append(pending)
        out: dict[tuple[str, int], int] = {}
        for pending in sent:
            resp = pending.result(deadline=d)
            for t in resp.topics:
                for p in t.partitions:
                    raise_broker_error(p.error_code, None, f"delete records of {t.name}/{p.partition_index}")
                    out[(t.name, p.partition_index)] = p.low_watermark
        return {tp: out[tp] for tp in before}

    return cluster.call(deadline, attempt, what="delete records", topics=topics)
