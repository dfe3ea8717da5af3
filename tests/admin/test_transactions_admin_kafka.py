"""Producers and transactions (``Admin.describe_producers/list_transactions/describe_transactions/
abort_transaction`` and ``kafkawire transactions``) against Apache Kafka 4.4, side by side with
``kafka-transactions.sh`` on the same partitions: an idempotent producer, and transactions left open on
purpose (a producer that hands its transaction over and is gone), which one side aborts and the other sees
closed (the partition's last stable offset moves past it)."""

from __future__ import annotations

import json
import os
import time

import pytest

from kafkawire.admin import Admin
from kafkawire.cli.main import main
from kafkawire.client.producer.producer import Producer
from kafkawire.protocol.errors import TransactionalIdNotFoundError

from .kafka_tools import TRANSACTIONS_COMMAND, run_tool

pytestmark = pytest.mark.broker


def tool(bootstrap: str, *args: str) -> list[dict[str, str]]:
    """``kafka-transactions ARGS``: its tab-separated table as one dict per row."""
    lines = [ln for ln in run_tool(TRANSACTIONS_COMMAND, "--bootstrap-server", bootstrap, *args).splitlines() if ln]
    header = [h.strip() for h in lines[0].split("\t") if h.strip()]
    return [dict(zip(header, [c.strip() for c in ln.split("\t")])) for ln in lines[1:]]


def open_transaction(bootstrap: str, topic: str, tid: str, n: int) -> None:
    """Write ``n`` records to partition 0 in a transaction of ``tid`` and leave it open (the producer
    hands it over and is gone: nobody commits or aborts it before its 60 s timeout)."""
    p = Producer(bootstrap, transactional_id=tid, transaction_timeout_ms=60_000)
    p.init_transactions()
    p.begin_transaction()
    for i in range(n):
        p.send(topic, f"{tid}-{i}".encode(), partition=0)
    p.hand_over_transaction()


def stable_end(admin: Admin, topic: str) -> int:
    """The last stable offset of partition 0 (what a read_committed consumer can reach)."""
    return admin.client.list_offsets(topic, [0], isolation="read_committed")[0].offset


@pytest.fixture
def setup(kafka_broker):
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    topic, tids = f"adm-txn-{stamp}", (f"adm-txn-a-{stamp}", f"adm-txn-b-{stamp}")
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as admin:
        admin.create_topics({topic: 1})
        with Producer(kafka_broker.bootstrap, enable_idempotence=True) as idem:
            for _ in range(2):
                idem.send(topic, b"idempotent", partition=0)
            idem.flush()
        open_transaction(kafka_broker.bootstrap, topic, tids[0], 3)  # offsets 2-4
        open_transaction(kafka_broker.bootstrap, topic, tids[1], 2)  # offsets 5-6
        yield admin, kafka_broker.bootstrap, topic, tids


def _producer_rows(states) -> set[tuple]:
    return {
        (s.producer_id, s.producer_epoch, s.coordinator_epoch, s.last_sequence, s.last_timestamp,
         s.current_transaction_start_offset if s.current_transaction_start_offset >= 0 else None)
        for s in states
    }  # fmt: skip


def _tool_producer_rows(rows) -> set[tuple]:
    return {
        (int(r["ProducerId"]), int(r["ProducerEpoch"]), int(r["LatestCoordinatorEpoch"]), int(r["LastSequence"]),
         int(r["LastTimestamp"]),
         None if r["CurrentTransactionStartOffset"] == "None" else int(r["CurrentTransactionStartOffset"]))
        for r in rows
    }  # fmt: skip


def test_producers_and_transactions_match_kafka_transactions_and_abort_both_ways(setup):
    admin, b, topic, (tid_a, tid_b) = setup
    producers = admin.describe_producers([(topic, 0)])[(topic, 0)]
    mine = _producer_rows(producers)
    assert mine == _tool_producer_rows(tool(b, "describe-producers", "--topic", topic, "--partition", "0"))
    assert sorted(s.current_transaction_start_offset for s in producers) == [-1, 2, 5]

    listed = {t.transactional_id: t for t in admin.list_transactions() if t.transactional_id in (tid_a, tid_b)}
    tool_listed = {r["TransactionalId"]: r for r in tool(b, "list") if r["TransactionalId"] in (tid_a, tid_b)}
    assert {t: (x.coordinator_id, x.producer_id, x.state) for t, x in listed.items()} == {
        t: (int(r["Coordinator"]), int(r["ProducerId"]), r["TransactionState"]) for t, r in tool_listed.items()
    }
    assert {x.state for x in listed.values()} == {"Ongoing"}
    assert [t.transactional_id for t in admin.list_transactions(producer_ids=[listed[tid_a].producer_id])] == [tid_a]
    assert tid_a in {t.transactional_id for t in admin.list_transactions(states=["Ongoing"])}
    with pytest.raises(ValueError, match="Nonsense"):
        admin.list_transactions(states=["Nonsense"])

    d = admin.describe_transactions([tid_a])[tid_a]
    [r] = tool(b, "describe", "--transactional-id", tid_a)
    assert (d.coordinator_id, d.transactional_id, d.producer_id, d.producer_epoch, d.state, d.timeout_ms,
            d.start_time_ms) == (int(r["CoordinatorId"]), r["TransactionalId"], int(r["ProducerId"]),
                                 int(r["ProducerEpoch"]), r["TransactionState"], int(r["TransactionTimeoutMs"]),
                                 int(r["CurrentTransactionStartTimeMs"]))  # fmt: skip
    assert d.partitions == {(topic, 0)} and r["TopicPartitions"] == f"{topic}-0"
    with pytest.raises(TransactionalIdNotFoundError):
        admin.describe_transactions([f"{tid_a}-never-used"])

    # Both transactions pin the last stable offset at 2. kafkawire aborts the first; the tool sees it closed.
    assert stable_end(admin, topic) == 2
    aborted = admin.abort_transaction(topic, 0, 2)
    assert aborted.producer_id == listed[tid_a].producer_id
    rows = tool(b, "describe-producers", "--topic", topic, "--partition", "0")
    assert sorted(r["CurrentTransactionStartOffset"] for r in rows) == ["5", "None", "None"]
    assert stable_end(admin, topic) == 5
    with pytest.raises(ValueError, match="no open transaction starts at offset 2"):
        admin.abort_transaction(topic, 0, 2)
    # The tool aborts the second; kafkawire sees nothing open and the stable offset at the end.
    run_tool(TRANSACTIONS_COMMAND, "--bootstrap-server", b, "abort", "--topic", topic, "--partition", "0",
             "--start-offset", "5")  # fmt: skip
    assert [s.current_transaction_start_offset for s in admin.describe_producers([(topic, 0)])[(topic, 0)]] == [-1] * 3
    assert stable_end(admin, topic) == admin.client.list_offsets(topic, [0])[0].offset


def test_kafkawire_transactions_command(setup, capsys):
    admin, b, topic, (tid_a, _tid_b) = setup

    def cli(*argv: str) -> str:
        code = main([*argv, "--bootstrap", b, "--timeout", "20"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    shown = json.loads(cli("transactions", "describe-producers", "--topic", topic, "--partition", "0", "--json"))
    assert {
        (r["producer_id"], r["producer_epoch"], r["coordinator_epoch"], r["last_sequence"], r["last_timestamp"],
         None if r["transaction_start_offset"] == "None" else r["transaction_start_offset"]) for r in shown
    } == _tool_producer_rows(tool(b, "describe-producers", "--topic", topic, "--partition", "0"))  # fmt: skip
    listed = {r["transactional_id"]: r for r in json.loads(cli("transactions", "list", "--state", "Ongoing", "--json"))}
    assert listed[tid_a]["state"] == "Ongoing"
    [d] = json.loads(cli("transactions", "describe", "--transactional-id", tid_a, "--json"))
    assert d["partitions"] == f"{topic}-0" and d["duration_ms"] >= 0
    assert "aborted the transaction" in cli("transactions", "abort", "--topic", topic, "--partition", "0",
                                             "--start-offset", "2")  # fmt: skip
    table = cli("transactions", "describe-producers", "--topic", topic, "--partition", "0")
    assert table.splitlines()[0].split()[0] == "PRODUCER-ID" and len(table.splitlines()) == 4
    assert main(["transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "2",
                 "--bootstrap", b, "--timeout", "20"]) != 0  # fmt: skip
    assert "no open transaction" in capsys.readouterr().err
    admin.abort_transaction(topic, 0, 5)  # leave nothing open on the shared broker
