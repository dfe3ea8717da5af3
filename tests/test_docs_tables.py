"""The user guide's option tables list exactly what the code accepts (issue 37).

The tables are rendered by docs/_ext/kafkawire_tables.py from the code that reads the options; these tests
hold the rendered rows against that code's behaviour: every listed Spark option passes the source's (or
sink's) option check and a near-miss of it is refused, every listed Java property is mapped to the keyword
the table names by the very functions ``from_properties`` uses, and nothing the code accepts is missing.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path
from types import ModuleType

import pytest

from kafkawire.client.config import consumer_kwargs_from_properties, producer_kwargs_from_properties
from kafkawire.client.config.properties import CLIENT_PARAMS, SECURITY, UNSUPPORTED
from kafkawire.client.config.roles import (
    CONSUMER_PARAMS,
    IGNORED_CONSUMER,
    IGNORED_PRODUCER,
    PRODUCER_PARAMS,
    client_kwargs_from_properties,
)
from kafkawire.client.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide"


def _tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kafkawire_tables", ROOT / "docs" / "_ext" / "kafkawire_tables.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TABLES = _tables()


def _names(table: str) -> list[str]:
    """The first column of a rendered table, without the backticks."""
    _, make = TABLES.TABLES[table]
    return [re.fullmatch(r"`([^`]+)`", row[0]).group(1) for row in make()]  # type: ignore[union-attr]


def test_every_table_is_used_by_a_guide_page_and_renders() -> None:
    used = set()
    for page in GUIDE.glob("*.md"):
        used |= set(re.findall(r"^```\{kafkawire-table\} (\S+)$", page.read_text(), re.M))
    assert used == set(TABLES.TABLES), used ^ set(TABLES.TABLES)
    for name, (headers, make) in TABLES.TABLES.items():
        rows = make()
        assert rows and all(len(r) == len(headers) for r in rows), name


def test_spark_read_and_write_tables_are_the_options_the_source_accepts() -> None:
    from kafkawire.spark.errors import InvalidOptionError
    from kafkawire.spark.options import SINK_OPTIONS, SOURCE_OPTIONS, check_option_names

    for table, known in (("spark-read", SOURCE_OPTIONS), ("spark-write", SINK_OPTIONS)):
        names = _names(table)
        assert names == list(known), table
        for name in names:
            check_option_names({name: "x"}, known)  # accepted as listed
            check_option_names({name.upper(): "x"}, known)  # and case-insensitively, as Spark passes them
            if name.startswith("schema.registry."):
                continue  # schema.registry.* goes to the registry client, which judges the names
            with pytest.raises(InvalidOptionError, match="did you mean"):
                check_option_names({name[:-1]: "x"}, known)  # a typo of it is refused with a suggestion


def test_spark_reads_a_listed_option_for_real() -> None:
    # A listed read option changes what the parser returns (not only passes the name check).
    from kafkawire.spark.options import parse_source_options

    base = {"kafka.bootstrap.servers": "h:1", "subscribe": "t"}
    assert parse_source_options(base, streaming=False).max_records_per_partition is None
    opts = parse_source_options({**base, "maxRecordsPerPartition": "7", "includeHeaders": "true"}, streaming=False)
    assert opts.max_records_per_partition == 7 and opts.include_headers


def test_spark_kafka_table_names_the_kafka_options_the_source_reads(caplog: pytest.LogCaptureFixture) -> None:
    from kafkawire.spark import kafka_access

    _, make = TABLES.TABLES["spark-kafka"]
    *rows, security = make()  # the last row groups the security.*, sasl.*, ssl.* names
    assert "kafka.sasl.*" in security[0]
    names = [row[0].strip("`") for row in rows]
    expected = {"kafka.bootstrap.servers", "kafka.default.api.timeout.ms", "kafka.group.id",
                *(f"kafka.{p}" for p in (*kafka_access._FETCH_PARAMS, *kafka_access._PRODUCE_PARAMS, *CLIENT_PARAMS))}
    assert set(names) == expected
    # Each is taken without the "isn't used by kafkawire" warning, for reads and writes alike.
    for role in ("consumer", "producer"):
        for name in names:
            prop = name.removeprefix("kafka.")
            if prop in ("bootstrap.servers", "group.id"):
                continue
            value = {"isolation.level": "read_committed", "acks": "all", "compression.type": "lz4",
                     "client.id": "c", "client.rack": "r", "enable.idempotence": "true"}.get(prop, "1000")
            with caplog.at_level(logging.WARNING, logger="kafkawire"):
                kafka_access.check_kafka_params({"bootstrap.servers": "h:1", prop: value}, role)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    # and the check does warn about a name it has no use for (so the assertion above can fail)
    with caplog.at_level(logging.WARNING, logger="kafkawire"):
        kafka_access.check_kafka_params({"bootstrap.servers": "h:1", "max.block.ms": "5"}, "consumer")
    assert any("max.block.ms" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("table", "params", "convert"),
    [
        ("java-client", CLIENT_PARAMS, client_kwargs_from_properties),
        ("java-consumer", CONSUMER_PARAMS, consumer_kwargs_from_properties),
        ("java-producer", PRODUCER_PARAMS, producer_kwargs_from_properties),
    ],
)
def test_java_property_tables_are_the_mapping_from_properties_uses(table, params, convert) -> None:  # type: ignore[no-untyped-def]
    _, make = TABLES.TABLES[table]
    rows = {re.sub("`", "", p): re.sub("`", "", kw) for p, kw in make()}
    assert set(rows) == set(params)
    samples = {"group.protocol": "consumer", "partition.assignment.strategy": "range", "auto.offset.reset": "earliest",
               "isolation.level": "read_committed", "acks": "all", "request.required.acks": "all",
               "compression.type": "zstd", "compression.codec": "zstd", "enable.idempotence": "false",
               "enable.auto.commit": "false", "exclude.internal.topics": "true"}
    for prop, keyword in rows.items():
        value = samples.get(prop, "v" if prop.endswith((".id", ".rack", ".assignor")) else "1234")
        kwargs = convert({"bootstrap.servers": "h:1", prop: value})
        assert keyword in kwargs, (prop, keyword, kwargs)


def test_security_unsupported_and_ignored_tables_match_the_code() -> None:
    assert set(_names("java-security")) == SECURITY
    assert set(_names("java-unsupported")) == set(UNSUPPORTED)
    for prop in UNSUPPORTED:
        with pytest.raises(ConfigError, match=re.escape(prop)):
            client_kwargs_from_properties({"bootstrap.servers": "h:1", prop: "x"})
    ignored = _names("java-ignored")
    assert set(ignored) == IGNORED_CONSUMER | IGNORED_PRODUCER
    warned: list[str] = []
    for prop in ignored:
        convert = consumer_kwargs_from_properties if prop in IGNORED_CONSUMER else producer_kwargs_from_properties
        convert({"bootstrap.servers": "h:1", prop: "1"}, warn=warned.append)
    assert sorted(warned) == sorted(ignored)


def test_a_missing_meaning_fails_the_table() -> None:
    mod = _tables()
    del mod.SPARK_READ_MEANING["subscribe"]
    with pytest.raises(ValueError, match="without a meaning.*subscribe"):
        mod.spark_read()
    mod.SPARK_WRITE_MEANING["noSuchOption"] = "x"
    with pytest.raises(ValueError, match="noSuchOption"):
        mod.spark_write()


def test_headline_table_is_the_benchmarks_one() -> None:
    rows = TABLES.headline()
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    block = bench.split("<!-- headline:start -->", 1)[1].split("<!-- headline:end -->", 1)[0]
    assert len(rows) == block.count("\n|") - 2
    for what, figure in rows:
        assert what in block
        assert re.sub(r"\s*\(.*", "", figure).split(":")[0].strip() in block.replace("**", "")

