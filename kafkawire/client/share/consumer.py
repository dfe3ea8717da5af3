"""The share consumer (KIP-932, Java's ``KafkaShareConsumer``): a member of a share group that fetches
records the broker acquired for it and acknowledges each one.

``poll()`` does the membership (:mod:`.membership`), sends what was acknowledged since the last poll on
the next ShareFetch of each share session (:mod:`.session`, :mod:`.fetch`) and returns the acquired
records as columns with their delivery count (:mod:`.records`). Acknowledgement bookkeeping is
:mod:`.acknowledgements`. Each blocking call makes one :class:`~kafkawire.client.net.deadline.Deadline`
from its timeout and hands it to every request below it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..client import Client, resolve_client
from ..consumer.poll_retry import PollRetry
from ..errors import KafkaTimeoutError, ShareStateError, WakeupError
from ..net.deadline import Deadline
from .acknowledgements import ACCEPT, ACK_TYPES, RELEASE, Acknowledgements
from .fetch import AckResults, AckSent, ShareFetcher
from .membership import ShareGroupMember
from .records import ShareRecordColumns

__all__ = ["ShareConsumer"]

log = logging.getLogger("kafkawire.share")

TopicPartition = tuple[str, int]
CLOSE_TIMEOUT_MS = 30_000
_MIN_ROUND_MS = 20.0  # no ShareFetch is started with less than this left of a poll
CommitCallback = Callable[[AckResults, BaseException | None], None]


class ShareConsumer:
    """Consume a share group's records (KIP-932, Apache Kafka 4.1+; on by default in 4.2+).

    ``acknowledgement_mode`` (Java's ``share.acknowledgement.mode``): ``"implicit"`` accepts everything the
    previous :meth:`poll` returned when the next poll (or :meth:`commit`) runs; ``"explicit"`` needs
    :meth:`acknowledge` for every record before the next poll, which otherwise raises
    :class:`~kafkawire.client.errors.ShareStateError` (the records stay acknowledgeable), as Java's does.
    A record not acknowledged within the group's acquisition lock (``group.share.record.lock.duration.ms``,
    30 s by default) goes back to the group with its delivery count raised; past
    ``group.share.delivery.count.limit`` (5) it is archived. A new share group starts at the latest offset
    unless the group config ``share.auto.offset.reset`` says ``earliest`` (set it with
    ``Admin.incremental_alter_configs`` on ``ConfigResource.group(name)``).

    ``max_poll_records``: the most records one ShareFetch asks for per broker (batches are kept whole, so a
    poll may return more); ``max_wait_ms`` / ``max_bytes``: fetch settings. ``acknowledgement_commit_callback``:
    called from :meth:`poll` with ``{(topic, partition): None or exception}`` for acknowledgements that rode
    on fetches (Java's ``AcknowledgementCommitCallback``). Pass ``client`` to share a :class:`Client`, or
    ``bootstrap_servers`` and any :class:`Client` options.

    A ShareFetch still unanswered when a poll's deadline passes is given up with its connection (as every
    request of the client is); the records it acquired return to the group when their locks expire,
    their delivery count raised: poll with a timeout well above the brokers' answer time.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | None = None,
        *,
        group_id: str,
        acknowledgement_mode: str = "implicit",
        client: Client | None = None,
        max_poll_records: int = 500,
        max_wait_ms: int = 500,
        max_bytes: int = 50 << 20,
        check_crcs: bool = True,
        rack_id: str | None = None,
        acknowledgement_commit_callback: Callable[[AckResults], None] | None = None,
        **client_options: Any,
    ) -> None:
        if not isinstance(group_id, str) or not group_id:
            raise TypeError(f"group_id must be a non-empty str, not {group_id!r}")
        if acknowledgement_mode not in ("implicit", "explicit"):
            raise ValueError(f"acknowledgement_mode must be 'implicit' or 'explicit', not {acknowledgement_mode!r}")
        if not isinstance(max_poll_records, int) or max_poll_records < 1:
            raise ValueError(f"max_poll_records must be a positive int, not {max_poll_records!r}")
        client, self._own_client = resolve_client(bootstrap_servers, client, client_options)
        self.client = client
        self.group_id = group_id
        self.acknowledgement_mode = acknowledgement_mode
        self.acknowledgement_commit_callback = acknowledgement_commit_callback
        self._acks = Acknowledgements()
        self._member = ShareGroupMember(client, group_id, rack_id=rack_id)
        self._fetcher = ShareFetcher(
            client,
            group_id,
            self._acks,
            max_wait_ms=max_wait_ms,
            max_bytes=max_bytes,
            max_records=max_poll_records,
            batch_size=max_poll_records,
            check_crcs=check_crcs,
        )
        self._subscription: list[str] = []
        self._async: list[tuple[AckSent, CommitCallback | None]] = []
        self._wakeup = threading.Event()
        self._closed = False
        self._counters = {"records_consumed": 0, "bytes_consumed": 0, "acknowledgement_failures": 0,
                          "polls_unanswered": 0}
        self._acknowledged = dict.fromkeys(("accept", "release", "reject"), 0)
        self._retry = PollRetry(self.client, "share poll", log, self._counters)  # the poll's retries, as the Consumer's

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any] | str | os.PathLike[str], **overrides: Any) -> ShareConsumer:
        """A share consumer configured with the Java share consumer's property names, from a mapping or a
        ``.properties`` file: ``bootstrap.servers``, ``group.id``, ``share.acknowledgement.mode``,
        ``max.poll.records``, ``fetch.max.wait.ms``, ``client.id``, security properties, ...
        (:func:`kafkawire.client.share.config.share_consumer_kwargs_from_properties`); ``overrides`` win."""
        from .config import share_consumer_kwargs_from_properties

        return cls(**{**share_consumer_kwargs_from_properties(properties), **overrides})

    # ---------------------------------------------------------------------------------- membership
    def subscribe(self, topics: Iterable[str]) -> None:
        """Join the share group for ``topics`` (a str or an iterable of str) on the next :meth:`poll`."""
        self._check_open()
        topics = [topics] if isinstance(topics, str) else list(topics)
        if not all(isinstance(t, str) and t for t in topics):
            raise TypeError(f"topics must be non-empty str, not {topics!r}")
        self._subscription = sorted(set(topics))
        self._member.subscribe(self._subscription)

    def unsubscribe(self) -> None:
        """Leave the subscription (an empty one: the member stays in the group with nothing assigned)."""
        self.subscribe([])

    def subscription(self) -> list[str]:
        """The topics subscribed to."""
        return list(self._subscription)

    def assignment(self) -> list[TopicPartition]:
        """The partitions the group's coordinator last assigned to this member."""
        return list(self._member.assignment)

    @property
    def member_id(self) -> str:
        """This member's id in the share group (made by the client, kept for its lifetime)."""
        return self._member.member_id

    # ------------------------------------------------------------------------------------- polling
    def poll(self, timeout_ms: float = 1_000) -> dict[TopicPartition, ShareRecordColumns]:
        """Records acquired for this member, per partition, waiting up to ``timeout_ms`` for some.

        Acknowledgements made since the last poll (in implicit mode: everything it returned, accepted)
        travel with this poll's fetches. Returns an empty dict when nothing arrived in time, also when no
        broker answered during the whole timeout (logged at WARNING naming the error, counted in
        ``metrics()["polls_unanswered"]``, as :meth:`Consumer.poll`); raises
        :class:`~kafkawire.client.errors.WakeupError` after :meth:`wakeup`."""
        self._check_open()
        if not self._subscription:
            raise ShareStateError("poll: not subscribed to any topic (call subscribe() first)")
        if self.acknowledgement_mode == "explicit":
            left = self._acks.unacknowledged()
            if left:
                raise ShareStateError(
                    f"poll: {left} records of the last poll are not acknowledged (explicit acknowledgement mode); "
                    "acknowledge() them first"
                )
        else:
            self._acks.acknowledge_all(ACCEPT)
        self._flush()
        deadline = Deadline.from_ms(timeout_ms)
        self._finish_async(deadline)
        try:
            return self._poll_loop(deadline, timeout_ms)
        finally:
            self._report()

    def _poll_loop(self, deadline: Deadline, timeout_ms: float) -> dict[TopicPartition, ShareRecordColumns]:
        retry = self._retry
        retry.begin()
        while True:
            if self._wakeup.is_set():
                self._wakeup.clear()
                raise WakeupError("poll interrupted by wakeup()")
            out = {}
            try:
                self._member.heartbeat(deadline)
                if deadline.remaining_ms() < _MIN_ROUND_MS:
                    # Too little time for a round trip: a ShareFetch started now would be cut short (its
                    # answer is then read by the next poll, ShareFetcher.outstanding).
                    deadline.sleep(deadline.remaining())
                elif not self._member.assignment and not self._acks.has_pending() and not self._fetcher.outstanding:
                    deadline.sleep(0.05)
                else:
                    out = self._fetcher.round(self._member.member_id, self._member.assignment, deadline)
            except Exception as e:
                if retry.failed(e, deadline, timeout_ms):
                    continue
                return {}  # the cluster answered: busy, not gone
            if not out and deadline.expired():
                retry.ended_empty(timeout_ms, self._fetcher.max_wait_ms)
                return out
            retry.answered()
            if out:
                for cols in out.values():
                    self._counters["records_consumed"] += len(cols)
                    self._counters["bytes_consumed"] += cols.value.nbytes + cols.key.nbytes
                return out

    def wakeup(self) -> None:
        """Make a :meth:`poll` running in another thread (or the next one) raise :class:`WakeupError`."""
        self._wakeup.set()

    # ----------------------------------------------------------------------------- acknowledgement
    def acknowledge(self, partition: TopicPartition, offsets: Iterable[int] | np.ndarray, type: str = "accept") -> None:
        """Acknowledge records the last :meth:`poll` returned: ``"accept"`` (processed), ``"release"`` (deliver
        again, to any member) or ``"reject"`` (unprocessable: never deliver again). ``offsets``: a numpy
        integer array or an iterable of ints (a poll's ``columns.offset`` works as it is). Explicit mode only.

        Raises TypeError for a wrong argument type, ValueError for an unknown ``type`` or offsets the last
        poll did not deliver (or already acknowledged). Nothing is sent here: the next poll, :meth:`commit`
        or :meth:`close` sends it."""
        self._check_open()
        if not (
            isinstance(partition, tuple)
            and len(partition) == 2
            and isinstance(partition[0], str)
            and isinstance(partition[1], (int, np.integer))
            and not isinstance(partition[1], bool)
        ):
            raise TypeError(f"partition must be a (topic: str, partition: int) tuple, not {partition!r}")
        if not isinstance(type, str):
            raise TypeError(f"type must be 'accept', 'release' or 'reject', not {type!r}")
        kind = ACK_TYPES.get(type.lower())
        if kind is None:
            raise ValueError(f"type must be 'accept', 'release' or 'reject', not {type!r}")
        if self.acknowledgement_mode != "explicit":
            raise ShareStateError(
                "acknowledge() needs acknowledgement_mode='explicit' (implicit mode accepts every record)"
            )
        self._acks.acknowledge((partition[0], int(partition[1])), offsets, kind)

    def _flush(self) -> None:
        for inf in self._acks.in_flight.values():
            for name, kind in ACK_TYPES.items():
                self._acknowledged[name] += int(np.count_nonzero(inf.state == kind))
        self._acks.flush()

    def commit(self, timeout_ms: float | None = None) -> AckResults:
        """Send every acknowledgement not sent yet (implicit mode: the last poll's records, accepted) and wait
        for the brokers' answers (Java's ``commitSync``); returns ``{(topic, partition): None or exception}``
        for every acknowledgement answered since the last report. Raises
        :class:`~kafkawire.client.errors.KafkaTimeoutError` when the answers do not come within ``timeout_ms``
        (default: the client's request timeout)."""
        self._check_open()
        deadline = self.client.deadline(timeout_ms)
        if self.acknowledgement_mode == "implicit":
            self._acks.acknowledge_all(ACCEPT)
        self._release_settled(deadline)
        self._flush()
        self._finish_async(deadline)
        sent = self._fetcher.send_acknowledgements(self._member.member_id, deadline)
        self._fetcher.collect(sent, deadline)
        if (sent and deadline.expired()) or self._fetcher.outstanding:
            raise KafkaTimeoutError(f"share commit of group {self.group_id!r} did not complete within {timeout_ms} ms")
        results = self._fetcher.drain()
        self._count_failures(results)
        return results

    def _release_settled(self, deadline: Deadline) -> None:
        """Read the answers of fetches an earlier poll's deadline cut (their sessions can carry nothing else
        until then) and release what they acquired: the application never saw it, and it goes back to the
        group now instead of when its acquisition lock expires (issue 34)."""
        for tp, cols in self._fetcher.settle(deadline).items():
            self._acks.acknowledge(tp, cols.offset, RELEASE)

    def commit_async(self, callback: CommitCallback | None = None) -> None:
        """Send the acknowledgements not sent yet without waiting; ``callback(results, error)`` runs from the
        next :meth:`poll`, :meth:`commit` or :meth:`close` (Java's ``commitAsync``)."""
        self._check_open()
        if self.acknowledgement_mode == "implicit":
            self._acks.acknowledge_all(ACCEPT)
        self._flush()
        deadline = self.client.deadline(None)
        self._async.append((self._fetcher.send_acknowledgements(self._member.member_id, deadline), callback))

    def _finish_async(self, deadline: Deadline) -> None:
        while self._async:
            sent, callback = self._async.pop(0)
            error: BaseException | None = None
            try:
                self._fetcher.collect(sent, deadline)
            except Exception as e:
                error = e
            results = self._fetcher.drain()
            self._count_failures(results)
            if callback is not None:
                callback(results, error)

    def _report(self) -> None:
        results = self._fetcher.drain()
        if not results:
            return
        self._count_failures(results)
        if self.acknowledgement_commit_callback is not None:
            self.acknowledgement_commit_callback(results)

    def _count_failures(self, results: AckResults) -> None:
        for tp, err in results.items():
            if err is not None:
                self._counters["acknowledgement_failures"] += 1
                log.warning("share group %s: acknowledgement of %s/%d failed: %s", self.group_id, tp[0], tp[1], err)

    # ------------------------------------------------------------------------------------- metrics
    def metrics(self) -> dict[str, Any]:
        """Counters since the consumer was created: ``records_consumed`` / ``bytes_consumed`` (key and value
        bytes returned by :meth:`poll`), ``acknowledged`` per type, ``acknowledgement_failures``,
        ``in_flight`` (delivered, not acknowledged yet), ``share_session_resets``, ``member_epoch``,
        ``assignment_changes``, ``assignment``, ``acquisition_lock_timeout_ms`` (the broker's, -1 until
        known) and ``client`` (the client's traffic counters)."""
        return {
            **self._counters,
            "acknowledged": dict(self._acknowledged),
            "in_flight": self._acks.unacknowledged(),
            "share_session_resets": self._fetcher.session_resets,
            "member_epoch": self._member.epoch,
            "assignment_changes": self._member.assignment_changes,
            "assignment": self.assignment(),
            "acquisition_lock_timeout_ms": self._fetcher.acquisition_lock_timeout_ms,
            "client": self.client.metrics(),
        }

    # --------------------------------------------------------------------------------------- close
    def _check_open(self) -> None:
        if self._closed:
            raise ShareStateError("share consumer is closed")

    def close(self, timeout_ms: float | None = None) -> None:
        """Send what was acknowledged, release every record still in flight (it goes back to the group at
        once, its delivery count raised), close the share sessions, leave the group and close the client if
        this consumer made it; within ``timeout_ms`` (default 30 s). Never raises because of a broker."""
        if self._closed:
            return
        self._closed = True
        deadline = Deadline.from_ms(CLOSE_TIMEOUT_MS if timeout_ms is None else timeout_ms)
        try:
            self._finish_async(deadline)
            self._fetcher.settle(deadline)  # what cut fetches acquired is released below with the rest
            # Java: implicit mode releases the last poll's records on close (commit first to accept them).
            self._acks.acknowledge_all(RELEASE)
            self._flush()
            sent = self._fetcher.send_acknowledgements(self._member.member_id, deadline, close=True)
            self._fetcher.collect(sent, deadline)
            self._count_failures(self._fetcher.drain())
        except Exception as e:
            log.warning("share group %s: closing the share sessions failed: %s", self.group_id, e)
        finally:
            self._member.leave(deadline)
            self._fetcher.close()
            if self._own_client:
                self.client.close()

    def __enter__(self) -> ShareConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
