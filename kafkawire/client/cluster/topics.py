"""Topic creation and deletion, the two topic operations :class:`~kafkawire.client.Client` offers itself
(``Client.create_topics`` / ``Client.delete_topics``); the rest of topic administration is in
:mod:`kafkawire.admin`. Both send to the controller through :meth:`Cluster.call`, the client's one retry
loop, and then wait until the metadata agrees (leaders elected, topics gone)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...protocol import CreateTopicsRequest, DeleteTopicsRequest
from ...protocol.errors import (
    LeaderNotAvailableError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    broker_error,
)
from ..net.deadline import Deadline
from ..types import NewTopic
from .cluster import ZERO_UUID, Cluster
from .retry import Final

__all__ = ["create_topics", "delete_topics", "wait_for_leaders"]


def _specs(
    topics: Iterable[str | NewTopic] | Mapping[str, int],
    num_partitions: int,
    replication_factor: int,
    configs: Mapping[str, str] | None,
) -> list[NewTopic]:
    if isinstance(topics, Mapping):
        return [NewTopic(n, int(p), replication_factor, dict(configs or {})) for n, p in topics.items()]
    return [
        t if isinstance(t, NewTopic) else NewTopic(t, num_partitions, replication_factor, dict(configs or {}))
        for t in topics
    ]


def create_topics(
    cluster: Cluster,
    deadline: Deadline,
    topics: Iterable[str | NewTopic] | Mapping[str, int],
    *,
    num_partitions: int = 1,
    replication_factor: int = 1,
    configs: Mapping[str, str] | None = None,
    exist_ok: bool = False,
    wait: bool = True,
) -> None:
    """See :meth:`kafkawire.client.Client.create_topics`."""
    specs = _specs(topics, num_partitions, replication_factor, configs)
    if not specs:
        return

    def attempt(d: Deadline) -> None:
        req = CreateTopicsRequest(
            topics=[
                CreateTopicsRequest.CreatableTopic(
                    name=s.name,
                    num_partitions=s.num_partitions,
                    replication_factor=s.replication_factor,
                    assignments=[],
                    configs=[CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in s.configs.items()],
                )
                for s in specs
            ],
            # The broker-side wait is what is left of the call, so its answer arrives before our deadline.
            timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
        )
        resp = cluster.controller_connection(d).request(req, deadline=d)
        for t in resp.topics:
            err = broker_error(t.error_code, getattr(t, "error_message", None), f"create topic {t.name!r}")
            if err is None or (exist_ok and isinstance(err, TopicAlreadyExistsError)):
                continue
            raise err

    names = [s.name for s in specs]
    cluster.call(deadline, attempt, what=f"create topics {names}", topics=[])
    if wait:
        wait_for_leaders(cluster, deadline, names)


def wait_for_leaders(cluster: Cluster, deadline: Deadline, names: list[str]) -> None:
    """Wait until every partition of ``names`` has a leader in the metadata (topic creation and partition
    growth return before every broker knows the new partitions' leaders)."""
    def attempt(d: Deadline) -> None:
        meta = cluster.fetch_metadata(names, d)
        for n in names:
            tm = meta.topics.get(n)
            if tm is None or tm.error is not None or not tm.partitions:
                raise UnknownTopicOrPartitionError(f"topic {n!r} not in the metadata yet")
            leaderless = [p.partition for p in tm.partitions.values() if p.leader < 0]
            if leaderless:
                raise LeaderNotAvailableError(f"topic {n!r}: partitions {leaderless} have no leader yet")

    cluster.call(deadline, attempt, what=f"waiting for leaders of {names}", before_retry=lambda d, e: None)


def delete_topics(cluster: Cluster, deadline: Deadline, names: list[str], *, missing_ok: bool = False) -> None:
    """See :meth:`kafkawire.client.Client.delete_topics`."""
    if not names:
        return

    def attempt(d: Deadline) -> None:
        req = DeleteTopicsRequest(
            topics=[DeleteTopicsRequest.DeleteTopicState(name=n, topic_id=ZERO_UUID) for n in names],
            topic_names=names,
            timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
        )
        resp = cluster.controller_connection(d).request(req, deadline=d)
        for r in resp.responses:
            err = broker_error(r.error_code, getattr(r, "error_message", None), f"delete topic {r.name!r}")
            if err is None or (missing_ok and isinstance(err, UnknownTopicOrPartitionError)):
                continue
            if isinstance(err, UnknownTopicOrPartitionError):
                # Retriable in Kafka (metadata may lag), but for a delete it means "not there": final.
                raise Final(err)
            raise err

    try:
        cluster.call(deadline, attempt, what=f"delete topics {names}", topics=[])
    except Final as e:
        raise e.error from None
    finally:
        for n in names:
            cluster.topics.pop(n, None)
