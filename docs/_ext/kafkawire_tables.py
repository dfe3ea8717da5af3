"""Option tables of the user guide, generated from the code that reads the options (issue 37).

``{kafkawire-table} NAME`` in a guide page renders one of :data:`TABLES`. The option names always come from
the code (the Spark source's and sink's option lists, the ``kafka.*`` names the Spark source reads, the Java
property mappings of :mod:`kafkawire.client.config`), so a table cannot list an option the code does not
accept or miss one it does. Only the Spark options' one-line meanings are written here; an option without a
meaning, or a meaning for an option the code no longer has, fails the build (``-W``) and
tests/test_docs_tables.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: What each Spark read option does (names as Spark's Kafka source documents them).
SPARK_READ_MEANING = {
    "assign": 'the partitions to read, as JSON: `{"topicA":[0,1]}` (exactly one of assign, subscribe, '
              "subscribePattern)",
    "subscribe": "a comma-separated list of topics",
    "subscribePattern": "a regex over whole topic names",
    "startingOffsets": '`earliest`, `latest` or `{"topic":{"0":23,"1":-2}}` (-2 earliest, -1 latest); batch '
                       "reads default to earliest, streams to latest",
    "endingOffsets": "batch only: `latest` (the default) or per-partition JSON as for startingOffsets",
    "startingTimestamp": "ms since the epoch for every partition (wins over startingOffsets)",
    "endingTimestamp": "batch only: ms since the epoch for every partition (wins over endingOffsets)",
    "startingOffsetsByTimestamp": 'per-partition timestamps as JSON: `{"topic":{"0":1700000000000}}`',
    "endingOffsetsByTimestamp": "batch only: per-partition timestamps as JSON",
    "startingOffsetsByTimestampStrategy": "`error` (default) or `latest` when no record is at or after the "
                                          "timestamp",
    "failOnDataLoss": "default `true`: fail when offsets are gone (retention, topic deleted)",
    "maxOffsetsPerTrigger": "streaming: at most this many records per micro-batch",
    "minOffsetsPerTrigger": "streaming: wait for at least this many records (up to maxTriggerDelay)",
    "maxTriggerDelay": "streaming: the longest wait for minOffsetsPerTrigger (default `15m`)",
    "minPartitions": "split offset ranges into at least this many tasks",
    "maxRecordsPerPartition": "split offset ranges so that no task reads more records than this",
    "includeHeaders": "adds `headers array<struct<key:string,value:binary>>`",
    "kafkaConsumer.pollTimeoutMs": "how long a task waits for a range that makes no progress (default 120 s)",
    "fetchOffset.numRetries": "Spark's name, accepted and unused: offset lookups retry until "
                              "`kafka.default.api.timeout.ms` has passed",
    "fetchOffset.retryIntervalMs": "Spark's name, accepted and unused (see fetchOffset.numRetries)",
    "groupIdPrefix": "Spark's name, accepted and unused: kafkawire's reads join no group (see `kafka.group.id`)",
    "valueFormat": "`binary` (default) or `avro`: the value column becomes the decoded struct",
    "keyFormat": "`binary` (default) or `avro`, for the key column",
    "schema.registry.url": "the Schema Registry (needed by valueFormat/keyFormat `avro`); other "
                           "`schema.registry.*`, `basic.auth.*`, `bearer.auth.*` options pass to its client",
    "valueSubject": "the subject of the reader schema (default `<topic>-value`)",
    "keySubject": "the subject of the key's reader schema (default `<topic>-key`)",
    "avroSchema": "an inline Avro reader schema (JSON) instead of the subject's latest",
    "keyAvroSchema": "an inline Avro reader schema for the key",
    "mode": "`FAILFAST` (default: a bad value fails the query) or `PERMISSIVE` (null row and an `_error` column)",
}

#: What each Spark write option does.
SPARK_WRITE_MEANING = {
    "topic": "the topic of every row (overrides a `topic` column)",
    "includeHeaders": "write the `headers` column (default: when the DataFrame has one)",
    "exactlyOnce": "`true`: each task writes in a Kafka transaction the driver commits (kafkawire's own)",
    "valueFormat": "`avro`: encode a struct `value` column with the subject's schema",
    "keyFormat": "read option only: a write with keyFormat other than `binary` is refused",
    "schema.registry.url": "the Schema Registry for valueFormat `avro`",
    "valueSubject": "the subject (default `<topic>-value`)",
    "keySubject": "accepted and unused: writes encode the value only",
    "avroSchema": "an inline Avro writer schema instead of the subject's latest",
    "keyAvroSchema": "accepted and unused: writes encode the value only",
    "mode": "accepted and unused on writes",
}

Rows = list[tuple[str, ...]]


def _spark_options(names: tuple[str, ...], meanings: dict[str, str], what: str) -> Rows:
    missing = [n for n in names if n not in meanings]
    extra = [n for n in meanings if n not in names]
    if missing or extra:
        raise ValueError(f"{what}: options without a meaning {missing}, meanings of no option {extra}")
    return [(f"`{n}`", meanings[n]) for n in names]


def spark_read() -> Rows:
    from kafkawire.spark.options import SOURCE_OPTIONS

    return _spark_options(SOURCE_OPTIONS, SPARK_READ_MEANING, "spark read options")


def spark_write() -> Rows:
    from kafkawire.spark.options import SINK_OPTIONS

    return _spark_options(SINK_OPTIONS, SPARK_WRITE_MEANING, "spark write options")


def spark_kafka() -> Rows:
    """The ``kafka.*`` options the Spark source and sink read, and where each goes."""
    from kafkawire.client.config.properties import CLIENT_PARAMS
    from kafkawire.spark import kafka_access

    rows: Rows = [("`kafka.bootstrap.servers`", "required")]
    rows += [(f"`kafka.{p}`", "reads: fetch setting") for p in kafka_access._FETCH_PARAMS]
    rows += [(f"`kafka.{p}`", "writes: produce setting") for p in kafka_access._PRODUCE_PARAMS]
    rows.append(("`kafka.default.api.timeout.ms`", "bounds the driver's topic and offset lookups (default 60000)"))
    rows.append(("`kafka.group.id`", "streaming reads: commit each finished micro-batch's end offsets to this "
                 "group, for monitoring (SPARK-27549); the checkpoint stays what a query resumes from"))
    rows += [(f"`kafka.{p}`", f"client: `{kw}`") for p, (kw, _) in CLIENT_PARAMS.items()]
    rows.append(("`kafka.security.protocol`, `kafka.sasl.*`, `kafka.ssl.*`",
                 "as the Java client's names: see the security page"))
    return rows


def _mapping(params: dict[str, tuple[str, Callable[..., object]]]) -> Rows:
    return [(f"`{p}`", f"`{kw}`") for p, (kw, _) in params.items()]


def java_client() -> Rows:
    from kafkawire.client.config.properties import CLIENT_PARAMS

    return _mapping(CLIENT_PARAMS)


def java_consumer() -> Rows:
    from kafkawire.client.config.roles import CONSUMER_PARAMS

    return _mapping(CONSUMER_PARAMS)


def java_producer() -> Rows:
    from kafkawire.client.config.roles import PRODUCER_PARAMS

    return _mapping(PRODUCER_PARAMS)


def java_security() -> Rows:
    from kafkawire.client.config.properties import SECURITY

    return [(f"`{p}`", "read") for p in sorted(SECURITY)]


def java_unsupported() -> Rows:
    from kafkawire.client.config.properties import UNSUPPORTED

    return [(f"`{p}`", why) for p, why in sorted(UNSUPPORTED.items())]


def java_ignored() -> Rows:
    from kafkawire.client.config.roles import IGNORED_COMMON, IGNORED_CONSUMER, IGNORED_PRODUCER

    rows: Rows = []
    for p in sorted(IGNORED_CONSUMER | IGNORED_PRODUCER):
        role = "both" if p in IGNORED_COMMON else ("consumer" if p in IGNORED_CONSUMER else "producer")
        rows.append((f"`{p}`", role))
    return rows


def headline() -> Rows:
    """The headline table of benchmarks/README.md (the one place figures are recorded), links and bold removed."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "benchmarks" / "README.md").read_text()
    block = text.split("<!-- headline:start -->", 1)[1].split("<!-- headline:end -->", 1)[0]
    rows: Rows = []
    for line in block.strip().splitlines()[2:]:  # past the empty header and the |---| line
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # "(... [section](#anchor))": the section is one of benchmarks/README.md, named on the page instead
        cells = [re.sub(r"\s*\(\[[^\]]+\]\([^)]*\)\)", "", c) for c in cells]
        cells = [re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", c).replace("**", "") for c in cells]
        rows.append((cells[0], cells[1]))
    if not rows:
        raise ValueError("benchmarks/README.md has no headline table")
    return rows


#: name -> (column headers, rows).
TABLES: dict[str, tuple[tuple[str, ...], Callable[[], Rows]]] = {
    "spark-read": (("option", "meaning"), spark_read),
    "spark-write": (("option", "meaning"), spark_write),
    "spark-kafka": (("option", "used for"), spark_kafka),
    "java-client": (("property", "Client keyword"), java_client),
    "java-consumer": (("property", "Consumer keyword"), java_consumer),
    "java-producer": (("property", "Producer keyword"), java_producer),
    "java-security": (("property", "TLS / SASL"), java_security),
    "java-unsupported": (("property", "refused because"), java_unsupported),
    "java-ignored": (("property", "warned about and ignored, for"), java_ignored),
    "headline": (("what", "figure (benchmarks/README.md)"), headline),
}

_CODE = re.compile(r"`([^`]+)`")


def _cell(text: str):  # type: ignore[no-untyped-def]
    """A table cell: ``text`` with its `backticked` parts as literals."""
    from docutils import nodes

    para = nodes.paragraph()
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            para += nodes.Text(text[pos : m.start()])
        para += nodes.literal(m.group(1), m.group(1))
        pos = m.end()
    if pos < len(text):
        para += nodes.Text(text[pos:])
    entry = nodes.entry()
    entry += para
    return entry


def table_node(name: str):  # type: ignore[no-untyped-def]
    from docutils import nodes

    headers, make = TABLES[name]
    rows = make()
    table = nodes.table(classes=["kafkawire-options"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    row = nodes.row()
    for h in headers:
        row += _cell(h)
    head += row
    group += head
    body = nodes.tbody()
    for values in rows:
        row = nodes.row()
        for v in values:
            row += _cell(v)
        body += row
    group += body
    return table


def setup(app):  # type: ignore[no-untyped-def]
    from docutils.parsers.rst import Directive

    class TableDirective(Directive):
        required_arguments = 1
        has_content = False

        def run(self):  # type: ignore[no-untyped-def]
            name = self.arguments[0]
            if name not in TABLES:
                raise self.error(f"unknown kafkawire table {name!r}; known: {', '.join(TABLES)}")
            try:
                return [table_node(name)]
            except ValueError as e:
                raise self.error(str(e)) from None

    app.add_directive("kafkawire-table", TableDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
