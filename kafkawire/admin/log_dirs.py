"""Log directories (DescribeLogDirs, KIP-113): each broker's log directories, their capacity (KIP-827)
and the size, lag and future flag of every replica in them, as Java's ``Admin.describeLogDirs`` and
``kafka-log-dirs.sh --describe`` report them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import DescribeLogDirsRequest
from ..protocol.errors import broker_error, raise_broker_error

__all__ = ["ReplicaInfo", "LogDirDescription", "describe_log_dirs"]


@dataclass(frozen=True)
class ReplicaInfo:
    """A replica in a log directory: its size in bytes, how far it is behind the log end (for a future
    replica, behind the current one), and whether it is a future replica being moved here."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True)
class LogDirDescription:
    """A log directory of a broker: its error (None: healthy), total and usable bytes (-1 when the broker
    does not say) and its replicas by (topic, partition)."""

    path: str
    error: Exception | None
    total_bytes: int
    usable_bytes: int
    replicas: dict[tuple[str, int], ReplicaInfo] = field(default_factory=dict)


def describe_log_dirs(
    cluster: Cluster, deadline: Deadline, brokers: Iterable[int] | None = None
) -> dict[int, dict[str, LogDirDescription]]:
    """See :meth:`kafkawire.admin.Admin.describe_log_dirs`: each broker is asked about its own dirs."""
    wanted = None if brokers is None else list(brokers)
    if wanted is not None and not all(isinstance(b, int) and not isinstance(b, bool) for b in wanted):
        raise TypeError("broker ids are int")

    def attempt(d: Deadline) -> dict[int, dict[str, LogDirDescription]]:
        cluster.fetch_metadata([], d)
        out: dict[int, dict[str, LogDirDescription]] = {}
        for node in sorted(cluster.brokers) if wanted is None else wanted:
            conn = cluster.connection(node, d)
            version = conn.version_for(DescribeLogDirsRequest)
            resp = conn.request(DescribeLogDirsRequest(topics=None), version, deadline=d)
            raise_broker_error(resp.error_code, None, f"describe the log dirs of broker {node}")
            dirs = {}
            for r in resp.results:
                replicas = {
                    (t.name, p.partition_index): ReplicaInfo(p.partition_size, p.offset_lag, p.is_future_key)
                    for t in r.topics
                    for p in t.partitions
                }
                dirs[r.log_dir] = LogDirDescription(
                    r.log_dir,
                    broker_error(r.error_code, None, f"log dir {r.log_dir} of broker {node}"),
                    r.total_bytes,
                    r.usable_bytes,
                    replicas,
                )
            out[node] = dirs
        return out

    return cluster.call(deadline, attempt, what="describe log dirs", topics=[])
