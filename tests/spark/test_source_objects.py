"""The data source objects themselves (no Spark session, no broker): pickling, schemas, client options."""

from __future__ import annotations

import re

import pytest
from pyspark import cloudpickle
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import StructType

from kafkawire.spark.errors import InvalidOptionError, WriteSchemaError
from kafkawire.spark.kafka_access import KafkaAccess, check_kafka_params, client_kwargs
from kafkawire.spark.source import KafkaBatchReader, KafkaStreamReader, KafkaWireDataSource, kafka_schema

OPTS = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}


def source(**extra: str) -> KafkaWireDataSource:
    return KafkaWireDataSource(CaseInsensitiveDict({**OPTS, **extra}))


class Unpicklable:
    def __reduce__(self):
        raise TypeError("a live connection must never be pickled")

    def close(self) -> None:
        pass


def test_readers_pickle_without_their_connection():
    ds = source()
    batch = ds.reader(ds.schema())
    stream = ds.streamReader(ds.schema())
    for reader in (batch, stream):
        access = reader.access
        access._client = Unpicklable()  # as if a connection had been opened
        clone = cloudpickle.loads(cloudpickle.dumps(reader))
        assert clone._access is None and clone.opts == reader.opts
    assert isinstance(batch, KafkaBatchReader) and isinstance(stream, KafkaStreamReader)
    plain = KafkaAccess({"bootstrap.servers": "h:1"})
    plain._client = Unpicklable()
    assert cloudpickle.loads(cloudpickle.dumps(plain))._client is None


def test_schema_follows_include_headers_and_cannot_be_replaced():
    assert source().schema() == kafka_schema(False)
    assert source(includeHeaders="true").schema() == kafka_schema(True)
    ds = source()
    with pytest.raises(InvalidOptionError, match="Kafka source has a fixed schema and cannot be set with a custom one"):
        ds.reader(kafka_schema(True))


def test_writer_checks_schema_and_save_mode():
    ds = KafkaWireDataSource(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1"}))
    value_only = StructType([kafka_schema(False)["value"]])
    with pytest.raises(WriteSchemaError, match="topic option required"):
        ds.writer(value_only, False)
    ds = KafkaWireDataSource(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1", "topic": "t"}))
    assert ds.writer(value_only, False).opts.topic == "t"
    with pytest.raises(InvalidOptionError, match=re.escape("Save mode Overwrite not allowed for Kafka.")):
        ds.writer(value_only, True)
    # Complete/Update output modes arrive as overwrite=True for streams and are accepted, as by Spark's sink
    assert ds.streamWriter(value_only, True).opts.topic == "t"


def test_client_kwargs_from_kafka_options(caplog):
    got = client_kwargs(
        {
            "bootstrap.servers": "h:1",
            "client.id": "me",
            "request.timeout.ms": "5000",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
            'password="p";',
            "enable.idempotence": "false",
            "receive.message.max.bytes": "1000000000",
            "fetch.max.wait.ms": "10",  # a fetch setting, not a constructor argument
            "linger.ms": "5",  # unknown to kafkawire: warned about, ignored
        }
    )
    assert got == {
        "client_id": "me",
        "request_timeout_ms": 5000,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_username": "u",
        "sasl_password": "p",
        "enable_idempotence": False,
        "max_response_bytes": 1_000_000_000,
        "retry_timeout_ms": 60_000,  # kafka.default.api.timeout.ms's default, as the Java client's
    }
    # Silent here (tasks build clients this way); check_kafka_params reports it once per query on the driver.
    assert "linger.ms" not in caplog.text
    check_kafka_params({"bootstrap.servers": "h:1", "linger.ms": "5"}, "consumer")
    assert "Kafka option 'kafka.linger.ms' was supplied but isn't used by kafkawire" in caplog.text
    assert client_kwargs({"bootstrap.servers": "h:1"}) == {"client_id": "kafkawire-spark", "retry_timeout_ms": 60_000}
    assert client_kwargs({"bootstrap.servers": "h:1", "default.api.timeout.ms": "3000"})["retry_timeout_ms"] == 3000
    with pytest.raises(InvalidOptionError, match="Invalid value soon for configuration request.timeout.ms"):
        client_kwargs({"request.timeout.ms": "soon"})


def test_read_slices_large_fetches_into_arrow_batches(monkeypatch):
    import numpy as np
    import pyarrow as pa

    import kafkawire
    from kafkawire.spark import source as src
    from kafkawire.spark.planning import OffsetRange

    n = 3 * src.ARROW_BATCH_ROWS + 5
    cols = kafkawire.decode_records(
        kafkawire.encode_records([b"%d" % i for i in range(n)], timestamps=np.arange(n), base_offset=100)
    )

    def fake_fetch_range(self, topic, partition, start, end, **kwargs):
        assert (topic, partition, start, end) == ("t", 2, 101, 100 + n)
        yield cols, 1, n  # the fetch began one record before the range

    monkeypatch.setattr(KafkaAccess, "fetch_range", fake_fetch_range)
    ds = source()
    reader = ds.reader(ds.schema())
    batches = list(reader.read(src.KafkaInputPartition(OffsetRange("t", 2, 101, 100 + n))))
    assert all(b.num_rows <= src.ARROW_BATCH_ROWS for b in batches) and len(batches) == 4
    table = pa.Table.from_batches(batches)
    assert table.column("offset").to_pylist() == list(range(101, 100 + n))
    assert table.column("value").to_pylist() == [b"%d" % i for i in range(1, n)]
    assert set(table.column("partition").to_pylist()) == {2}
    # Spark's placeholder partition (nothing to read) yields nothing
    from pyspark.sql.datasource import InputPartition

    assert list(reader.read(InputPartition(None))) == []
