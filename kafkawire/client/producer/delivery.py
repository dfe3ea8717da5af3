"""Per-record delivery results for :meth:`kafkawire.client.Producer.send`.

``send()`` returns a :class:`DeliveryFuture` that resolves when the produce call carrying its record
returns: to a :class:`RecordMetadata` when the broker acknowledged it, or to the error that made the
record come back in :attr:`ProduceFailedError.unacknowledged`. The Java client's ``Future<RecordMetadata>``
plus ``Callback`` and confluent-kafka's ``on_delivery(err, msg)`` are the models: ``add_done_callback``
and ``send(..., on_delivery=...)`` run in the thread that wrote the batch (the producer's background
sender when ``linger_ms`` expired, ``send`` when a batch filled, ``flush``, ``close``, ``commit_transaction``),
after the producer released its locks, in the order the records were written.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import KafkaTimeoutError, RecordDroppedError

__all__ = ["DeliveryCallback", "DeliveryFuture", "RecordDroppedError", "RecordMetadata"]

log = logging.getLogger("kafkawire.producer")


@dataclass(frozen=True)
class RecordMetadata:
    """Where an acknowledged record was written. ``offset`` is -1 when the broker did not say (acks=0);
    ``timestamp`` is the broker's LogAppendTime when the topic uses it, else the record's own timestamp."""

    topic: str
    partition: int
    offset: int
    timestamp: int


#: ``callback(err, metadata)``: exactly one of the two is None (confluent-kafka's ``on_delivery`` order).
DeliveryCallback = Callable[[BaseException | None, RecordMetadata | None], object]


class DeliveryFuture:
    """The delivery result of one record: :meth:`result` blocks until it is known.

    The producer resolves it once, when the batch holding the record is acknowledged or finally fails;
    a record dropped by :meth:`Producer.abort_transaction` fails with :class:`RecordDroppedError`.
    The producer's background sender writes a buffer once ``linger_ms`` has passed since its first record,
    so ``producer.send(...).result(timeout=5)`` resolves without a ``flush()`` (as with the Java client).
    """

    __slots__ = ("topic", "_cond", "_done", "_metadata", "_error", "_callbacks", "_waiter")

    def __init__(self, topic: str, *, waiter: Callable[[DeliveryFuture], object] | None = None) -> None:
        self.topic = topic
        self._cond = threading.Condition()
        self._done = False
        self._metadata: RecordMetadata | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[DeliveryFuture], object]] = []
        # Called by a waiter before it blocks (the producer writes the record's buffer itself when the
        # waiting thread is its own sender, which could otherwise never write it); dropped once done.
        self._waiter = waiter

    def done(self) -> bool:
        """True once the record was acknowledged or failed."""
        return self._done

    def result(self, timeout: float | None = None) -> RecordMetadata:
        """The record's :class:`RecordMetadata`; raises the delivery error, or
        :class:`KafkaTimeoutError` when it is not known within ``timeout`` seconds."""
        self._wait(timeout)
        if self._error is not None:
            raise self._error
        assert self._metadata is not None
        return self._metadata

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The delivery error, or None when the record was acknowledged (waits as :meth:`result`)."""
        self._wait(timeout)
        return self._error

    def add_done_callback(self, fn: Callable[[DeliveryFuture], object]) -> None:
        """Call ``fn(future)`` once the future is done (at once when it already is)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(fn)
                return
        _run(fn, self)

    def _wait(self, timeout: float | None) -> None:
        waiter = self._waiter
        if not self._done and waiter is not None:
            waiter(self)
        with self._cond:
            if not self._cond.wait_for(lambda: self._done, timeout):
                raise KafkaTimeoutError(f"delivery to {self.topic!r} not known within {timeout} s")

    def _resolve(self, metadata: RecordMetadata | None, error: BaseException | None) -> None:
        if self.settle(metadata, error):
            self.run_callbacks()

    def settle(self, metadata: RecordMetadata | None, error: BaseException | None) -> bool:
        """For the producer: set the result and wake waiters, without running callbacks (see
        :meth:`run_callbacks`), since the producer completes futures under its lock and runs callbacks after
        releasing it. True when this call completed the future and callbacks wait to be run."""
        with self._cond:
            if self._done:
                return False
            self._metadata, self._error, self._done = metadata, error, True
            self._waiter = None
            self._cond.notify_all()
            # Stable once done: a callback added from now on is run by add_done_callback itself.
            return bool(self._callbacks)

    def run_callbacks(self) -> None:
        """Run the callbacks registered before the future completed (once)."""
        with self._cond:
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            _run(fn, self)

    def __repr__(self) -> str:
        state = "pending" if not self._done else (repr(self._error) if self._error else repr(self._metadata))
        return f"<DeliveryFuture {self.topic} {state}>"


def _run(fn: Callable[[DeliveryFuture], object], fut: DeliveryFuture) -> None:
    # A failing callback must not stop the other records' results (librdkafka logs and goes on too).
    try:
        fn(fut)
    except Exception:
        log.exception("delivery callback %r raised", fn)


def as_done_callback(callback: DeliveryCallback) -> Callable[[DeliveryFuture], object]:
    """Wrap a confluent-style ``callback(err, metadata)`` for :meth:`DeliveryFuture.add_done_callback`."""

    def call(fut: DeliveryFuture) -> object:
        error = fut.exception(0)
        return callback(error, None if error is not None else fut.result(0))

    return call
