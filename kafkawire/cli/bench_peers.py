"""The peers ``kafkawire bench`` measures kafkawire against: kafka-python's and aiokafka's record readers and
batch builders (decode, encode), and confluent-kafka (librdkafka) against a broker (produce, consume), each driven
as its users drive it; and the command line's security settings in librdkafka's names."""

from __future__ import annotations

import time
import uuid
from typing import Any

__all__ = ["confluent_consume", "confluent_produce", "installed_peers", "peer_decode", "peer_encode",
           "peer_security"]


def peer_decode(memory_records_cls: Any, data: bytes) -> int:
    """A fetch's ``records`` bytes read as the peer's consumer does: every batch's CRC, every record's fields."""
    mr = memory_records_cls(data)
    n = 0
    while mr.has_next():
        batch = mr.next_batch()
        if not batch.validate_crc():
            raise RuntimeError("CRC mismatch")
        for rec in batch:
            rec.key, rec.value, rec.headers  # noqa: B018 - reading the fields is the measured work
            n += 1
    return n


def peer_encode(builder_cls: Any, keys: list[bytes], values: list[bytes], batch: int, codec_id: int, ts0: int) -> int:
    """The records written into v2 batches of ``batch`` records with the peer's batch builder; the bytes written."""
    total = 0
    for lo in range(0, len(values), batch):
        b = builder_cls(2, codec_id, 0, -1, -1, -1, 1 << 30)
        for i in range(lo, min(len(values), lo + batch)):
            b.append(i - lo, timestamp=ts0 + i, key=keys[i], value=values[i], headers=[])
        total += len(b.build())
    return total


def installed_peers() -> dict[str, dict[str, Any]]:
    """Installed peers: name -> {"memory_records": cls, "builder": cls, "slow": bool}."""
    found: dict[str, dict[str, Any]] = {}
    try:
        from aiokafka.record._crecords import DefaultRecordBatchBuilder, MemoryRecords

        found["aiokafka (Cython)"] = {"memory_records": MemoryRecords, "builder": DefaultRecordBatchBuilder}
    except ImportError:
        pass
    try:
        from kafka.record.default_records import DefaultRecordBatchBuilder as KBuilder
        from kafka.record.memory_records import MemoryRecords as KMemoryRecords

        found["kafka-python"] = {"memory_records": KMemoryRecords, "builder": KBuilder, "slow": True}
    except ImportError:
        pass
    return found


def peer_security(props: dict[str, str]) -> dict[str, Any]:
    """librdkafka settings for the Java client properties of the command line: the names librdkafka shares
    are passed on; a JAAS PLAIN/SCRAM login becomes ``sasl.username``/``sasl.password``, a PEM truststore
    ``ssl.ca.location``. A JKS or PKCS12 store has no librdkafka equivalent here: an error names it."""
    from ..client.config import parse_jaas_config
    from ._common import CliError

    out: dict[str, Any] = {}
    for key in ("security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password",
                "ssl.ca.location", "ssl.endpoint.identification.algorithm"):
        if key in props:
            out[key] = props[key]
    if "sasl.jaas.config" in props:
        jaas = parse_jaas_config(props["sasl.jaas.config"])
        out.setdefault("sasl.username", jaas.options.get("username", ""))
        out.setdefault("sasl.password", jaas.options.get("password", ""))
    if "ssl.truststore.location" in props:
        if props.get("ssl.truststore.type", "JKS").upper() != "PEM":
            raise CliError("bench: confluent-kafka needs a PEM CA file (--ca-file or ssl.truststore.type=PEM)")
        out["ssl.ca.location"] = props["ssl.truststore.location"]
    return out


def confluent_produce(ck: Any, bootstrap: str, topic: str, keys: list[Any], values: list[Any], codec: str,
                      security: dict[str, Any]) -> int:
    """librdkafka's producer as its users drive it: produce() per record, poll() to serve callbacks, flush()."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                            "compression.type": codec, **security})
    errors: list[Any] = []

    def done(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)

    for i, (k, v) in enumerate(zip(keys, values)):
        while True:
            try:
                producer.produce(topic, value=v, key=k, on_delivery=done)
                break
            except BufferError:  # its queue is full: serve deliveries, then retry
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120) or errors:
        raise RuntimeError(f"confluent-kafka produce failed: {errors[:3]}")
    return len(values)


def confluent_consume(ck: Any, bootstrap: str, topic: str, partitions: list[int], n: int,
                      security: dict[str, Any] | None = None) -> int:
    """librdkafka's batch API, touching each message's value (what a consumer loop does)."""
    consumer = ck.Consumer(
        {
            **(security or {}),
            "bootstrap.servers": bootstrap,
            "group.id": f"kafkawire-bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            # Some development brokers (noida-db) ignore the fetch size limits and answer with the whole
            # log; librdkafka would refuse such a response (receive.message.max.bytes, 100 MB by default)
            # and retry it forever.
            "receive.message.max.bytes": 1_000_000_000,
        }
    )
    try:
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in partitions])
        got = 0
        deadline = time.monotonic() + 120
        while got < n and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=min(n, 10_000), timeout=1.0):
                if m.error() is None:
                    m.value()
                    got += 1
        return got
    finally:
        consumer.close()
