"""The two trials :func:`kafkawire.bench.tune.tune` runs for one set of settings.

* :func:`produce_trial`: a :class:`~kafkawire.Producer` made with ``Producer``'s own mapping of the settings
  (``kafkawire.client.config.producer_kwargs_from_properties``, what ``from_properties`` uses) writes
  ``n`` keyed records with ``send()``, then ``flush()``; the timed region is the first ``send()`` to the
  end of the ``flush()`` (the producer connected and took its producer id in an untimed warm-up write
  first; a trial stops sending after ``max_seconds`` and is measured on what it sent). One record in
  ``n / 2000`` carries a delivery callback: its ``send()``-to-callback time is the
  acknowledgement latency. A second client reads the topic meanwhile: a record's end-to-end latency is
  the time it was read minus its timestamp (``send()``'s clock, ms).
* :func:`consume_trial`: a :class:`~kafkawire.Consumer` made from the settings the same way is assigned
  every partition of a topic holding at least ``n`` records (written once per topic with one columnar
  ``Client.produce``) and polls from the start until it has read ``n``; each ``poll()`` that returned
  records is one latency sample.

Both measure wall time (``time.perf_counter``) and this process's CPU time (``time.process_time``, every
thread) over the timed region. A failure of the trial becomes :attr:`Trial.error`, not an exception, so
one setting the cluster refuses (a codec it lacks) does not end the sweep; Ctrl-C does.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .trial import Trial

__all__ = ["consume_trial", "produce_trial"]

_KEY_SIZE = 16
_ACK_SAMPLES = 2000
#: How long a trial waits for its records to be read back after the producer's flush.
_READ_BACK_S = 60.0


@functools.lru_cache(maxsize=2)
def _payload(n: int, size: int) -> tuple[list[bytes], list[bytes]]:
    """``n`` keys ``key-%012d`` and values of ``size`` bytes of words (compress 2-3x, like log lines)."""
    words = b"alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima "
    text = (words * (size // len(words) + 2))
    values = [text[i % len(words) : i % len(words) + size] for i in range(n)]
    keys = [b"key-%012d" % i for i in range(n)]
    return keys, values


def _percentiles(samples: np.ndarray) -> tuple[float, float] | None:
    if not len(samples):
        return None
    p50, p99 = np.percentile(samples, [50, 99])
    return float(p50), float(p99)


def _failed(role: str, settings: Mapping[str, str], varied: str, e: BaseException) -> Trial:
    return Trial(role, dict(settings), varied, 0, 0, 0.0, 0.0, error=f"{type(e).__name__}: {e}")


def _ack_timer(acks: list[float], sent: float) -> Callable[[Any, Any], None]:
    """A delivery callback adding the time since ``sent`` to ``acks`` when the record was acknowledged."""

    def done(err: Any, metadata: Any) -> None:
        if err is None:
            acks.append(time.perf_counter() - sent)

    return done


class _ReadBack(threading.Thread):
    """Reads ``expect`` records from ``start`` on with ``client`` and keeps each one's end-to-end latency."""

    def __init__(self, client: Any, start: dict[tuple[str, int], int], expect: int) -> None:
        super().__init__(name="kafkawire-tune-reader", daemon=True)
        self.client, self.pos, self.expect = client, dict(start), expect
        self.got = 0
        self.latencies: list[np.ndarray] = []
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while self.got < self.expect and not self.stop.is_set():
                res = self.client.fetch_many(self.pos, max_bytes=32 << 20, partition_max_bytes=8 << 20,
                                             max_wait_ms=20, raise_errors=True)
                now_ms = time.time() * 1000.0
                for tp, r in res.items():
                    if len(r.records):
                        self.latencies.append(now_ms - r.records.timestamp)
                        self.got += len(r.records)
                    self.pos[tp] = max(self.pos[tp], r.next_offset)
        except Exception as e:  # reported by the trial
            self.error = e


def produce_trial(
    bootstrap: str, options: Mapping[str, Any], topic: str, settings: Mapping[str, str], varied: str, n: int,
    record_size: int, max_seconds: float = 20.0,
) -> Trial:
    """Measure one producer setting (see the module docstring). A setting so slow that ``n`` records take more
    than ``max_seconds`` to send is measured on the records sent until then."""
    from ..client import Client, Producer
    from ..client.config import producer_kwargs_from_properties

    props = {k: v for k, v in settings.items() if k != "partitions"}
    kwargs = {**options, **producer_kwargs_from_properties({**props, "bootstrap.servers": bootstrap})}
    keys, values = _payload(n, record_size)
    acks: list[float] = []
    stride = max(1, n // _ACK_SAMPLES)
    try:
        with Client(bootstrap, **options) as reader_client, Producer(**kwargs) as producer:
            producer.send(topic, b"warm-up", b"warm-up")
            producer.flush()
            start = {(topic, p): lo.offset for p, lo in reader_client.list_offsets(topic).items()}
            reader = _ReadBack(reader_client, start, n)
            reader.start()
            try:
                send = producer.send
                t0, c0 = time.perf_counter(), time.process_time()
                stop_at = t0 + max_seconds
                for i in range(n):
                    if i % stride:
                        send(topic, values[i], keys[i])
                        continue
                    sent = time.perf_counter()
                    if sent > stop_at:  # a slow setting: measure what was sent so far
                        n = reader.expect = i
                        break
                    send(topic, values[i], keys[i], on_delivery=_ack_timer(acks, sent))
                producer.flush()
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
                reader.join(_READ_BACK_S)
            finally:
                reader.stop.set()
                reader.join(5)
        if reader.error is not None:
            raise reader.error
        if reader.got < n:
            raise RuntimeError(f"{reader.got} of {n} records read back within {_READ_BACK_S:.0f} s")
        e2e = np.concatenate(reader.latencies) if reader.latencies else np.zeros(0)
        return Trial("producer", dict(settings), varied, n, n * (_KEY_SIZE + record_size), seconds, cpu,
                     ack_ms=_percentiles(np.asarray(acks) * 1e3), latency_ms=_percentiles(e2e))
    except Exception as e:
        return _failed("producer", settings, varied, e)


def _fill(admin: Any, topic: str, n: int, record_size: int, filled: dict[str, Any]) -> dict[tuple[str, int], int]:
    """Start offsets of ``n`` records of the sweep's payload in ``topic``, written once per topic of a
    sweep (``filled`` remembers them)."""
    if topic not in filled:
        keys, values = _payload(n, record_size)
        before = {(topic, p): lo.offset for p, lo in admin.list_offsets(topic).items()}
        admin.produce(topic, values, keys, timeout_ms=120_000)
        filled[topic] = before
    return dict(filled[topic])


def consume_trial(
    bootstrap: str, options: Mapping[str, Any], admin: Any, topic: str, settings: Mapping[str, str], varied: str,
    n: int, record_size: int, filled: dict[str, Any],
) -> Trial:
    """Measure one consumer setting (see the module docstring); ``filled``: the sweep's topics already
    written, with their start offsets."""
    from ..client import Consumer
    from ..client.config import consumer_kwargs_from_properties

    props = {k: v for k, v in settings.items() if k != "partitions"}
    kwargs = {**options, **consumer_kwargs_from_properties({**props, "bootstrap.servers": bootstrap})}
    try:
        start = _fill(admin, topic, n, record_size, filled)
        polls: list[float] = []
        got = nbytes = 0
        with Consumer(**kwargs) as consumer:
            consumer.assign(list(start))
            for tp, off in start.items():
                consumer.seek(tp, off)
            limit = time.monotonic() + _READ_BACK_S
            t0, c0 = time.perf_counter(), time.process_time()
            while got < n:
                if time.monotonic() > limit:
                    raise RuntimeError(f"{got} of {n} records read in {_READ_BACK_S:.0f} s")
                p0 = time.perf_counter()
                batch = consumer.poll(1_000)
                if batch:
                    polls.append(time.perf_counter() - p0)
                for cols in batch.values():
                    got += len(cols)
                    nbytes += int(cols.key.nbytes + cols.value.nbytes)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        return Trial("consumer", dict(settings), varied, got, nbytes, seconds, cpu,
                     latency_ms=_percentiles(np.asarray(polls) * 1e3))
    except Exception as e:
        return _failed("consumer", settings, varied, e)
