"""Run Apache Kafka's own command line tools (from the jars of the test broker) and parse what they print.

The tools are the reference: each admin call of kafkawire is compared with what ``kafka-topics``,
``kafka-configs``, ``kafka-consumer-groups``, ``kafka-cluster`` and ``kafka-get-offsets`` report for the
same cluster. A JVM start costs seconds, so tests ask each tool once for everything they compare.
"""

from __future__ import annotations

import base64
import re
import subprocess
import tempfile
import uuid
from pathlib import Path

from kafkawire.testing.kafka import java_binary, kafka_classpath

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
LEADER_ELECTION_COMMAND = "org.apache.kafka.tools.LeaderElectionCommand"
LOG_DIRS_COMMAND = "org.apache.kafka.tools.LogDirsCommand"
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
REASSIGN_COMMAND = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
GET_OFFSET_SHELL = "org.apache.kafka.tools.GetOffsetShell"

_LOG4J2 = """\
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
"""


def run_tool(main: str, *args: str, timeout: float = 120.0) -> str:
    """Run Kafka tool ``main`` with ``args``; its stdout (raises with stderr when it exits non-zero)."""
    log_config = Path(tempfile.gettempdir()) / "kafkawire-admin-tests-log4j2.properties"
    if not log_config.exists():
        log_config.write_text(_LOG4J2)
    cmd = [
        java_binary(),
        "-Xmx256m",
        # A short-lived tool: the C1 compiler only starts it faster.
        "-XX:TieredStopAtLevel=1",
        f"-Dlog4j2.configurationFile=file:{log_config}",
        "-cp",
        kafka_classpath(),
        main,
        *args,
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        name = main.rsplit(".", 1)[-1]
        raise AssertionError(f"{name} {' '.join(args)} exited {res.returncode}:\n{res.stderr[-3000:]}")
    return res.stdout


def topic_id(text: str) -> uuid.UUID:
    """Kafka prints topic ids as URL-safe base64 without padding (``Uuid.toString``)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def parse_topic_describe(out: str) -> dict[str, dict]:
    """``kafka-topics --describe``: per topic its id, partition count, replication factor, the configs
    line and per partition leader, replicas and ISR."""
    topics: dict[str, dict] = {}
    for line in out.splitlines():
        fields = dict(re.findall(r"(\w+): ?([^\t]*)", line))
        if "PartitionCount" in fields:
            configs = dict(kv.split("=", 1) for kv in fields.get("Configs", "").split(",") if kv)
            topics[fields["Topic"]] = {
                "topic_id": topic_id(fields["TopicId"]),
                "partition_count": int(fields["PartitionCount"]),
                "replication_factor": int(fields["ReplicationFactor"]),
                "configs": configs,
                "partitions": {},
            }
        elif "Partition" in fields:
            ints = lambda s: tuple(int(x) for x in s.split(",") if x)  # noqa: E731
            topics[fields["Topic"]]["partitions"][int(fields["Partition"])] = {
                "leader": int(fields["Leader"]) if fields["Leader"] != "none" else -1,
                "replicas": ints(fields["Replicas"]),
                "isr": ints(fields["Isr"]),
            }
    return topics


_CONFIG_LINE = re.compile(
    r"^  (?P<name>[^=\s]+)=(?P<value>.*) sensitive=(?P<sensitive>true|false) synonyms=\{(?P<syn>.*)\}$"
)


def parse_config_describe(out: str) -> dict[str, dict]:
    """``kafka-configs --describe --all``: name -> value, sensitive and synonyms ``[(source, name, value)]``."""
    configs = {}
    for line in out.splitlines():
        m = _CONFIG_LINE.match(line)
        if not m:
            continue
        synonyms = []
        for s in re.split(r", (?=[A-Z_]+:)", m["syn"]) if m["syn"] else []:
            source, _, rest = s.partition(":")
            name, _, value = rest.partition("=")
            synonyms.append((source, name, value))
        configs[m["name"]] = {"value": m["value"], "sensitive": m["sensitive"] == "true", "synonyms": synonyms}
    return configs


def parse_table(out: str) -> list[dict[str, str]]:
    """The whitespace-aligned tables of ``kafka-consumer-groups`` / ``kafka-cluster``: one dict per row,
    keyed by header (several tables in one output each start with their own header line; message lines
    such as "Consumer group 'g' has no active members." are skipped). Empty cells print as ``-``."""
    rows: list[dict[str, str]] = []
    header: list[str] | None = None
    for line in out.splitlines():
        if not line.strip():
            header = None
            continue
        if header is None:
            # Header cells are upper case and separated by 2+ spaces ("COORDINATOR (ID)" holds one).
            cells = re.split(r"\s{2,}", line.strip())
            header = cells if all(c.upper() == c for c in cells) else None
            continue
        values = line.split()
        if "COORDINATOR (ID)" in header and len(values) == len(header) + 1:
            # "host:port  (1)": two tokens for one column.
            i = header.index("COORDINATOR (ID)")
            values = values[:i] + [values[i] + " " + values[i + 1]] + values[i + 2 :]
        assert len(values) == len(header), f"cannot split {line!r} under {header}"
        rows.append(dict(zip(header, values)))
    return rows
