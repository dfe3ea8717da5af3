"""Producer and Client.produce: nothing dropped silently, wrong argument types refused, and the
client's logging and metrics."""

from __future__ import annotations

import logging

import pytest

from kafkawire.client import Client, ProduceFailedError, Producer
from kafkawire.testing import free_port


def test_produce_refuses_a_bare_bytes_value_instead_of_writing_its_bytes_as_records():
    with Client(f"127.0.0.1:{free_port()}") as c:
        with pytest.raises(TypeError, match="values"):
            c.produce("t", b"hello")
        with pytest.raises(TypeError, match="keys"):
            c.produce("t", [b"a"], keys=[1])


def test_send_refuses_a_value_that_is_not_bytes_like():
    with Producer(f"127.0.0.1:{free_port()}") as p:
        with pytest.raises(TypeError):
            p.send("t", 5)  # type: ignore[arg-type]
        assert p.buffered == 0


def test_a_failed_flush_hands_back_every_record_and_empties_the_buffer():
    p = Producer(f"127.0.0.1:{free_port()}", linger_ms=1e9, delivery_timeout_ms=600, retry_backoff_ms=50)
    p.send("t", b"v0", key=b"k0")
    p.send("t", b"v1", headers=[("h", b"x")])
    p.send("t", "v2")  # str is written as UTF-8
    with pytest.raises(ProduceFailedError) as info:
        p.flush()
    err = info.value
    assert err.timed_out and "Connection refused" in str(err)
    [back] = err.unacknowledged.values()
    assert back.values == [b"v0", b"v1", b"v2"]
    assert back.keys == [b"k0", None, None]
    assert back.headers == [None, [("h", b"x")], None]
    assert p.buffered == 0  # handed back to the caller, not kept for a duplicate send
    p.close()


@pytest.mark.broker
def test_records_stay_buffered_when_the_write_is_interrupted(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as admin:
        admin.create_topics([topic])
    with Producer(noida.bootstrap, linger_ms=1e9) as p:
        p.send(topic, b"a")
        p.send(topic, b"b")
        real = p.client.produce

        def interrupted(*args, **kwargs):
            raise KeyboardInterrupt

        p.client.produce = interrupted  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):
            p.flush()
        assert p.buffered == 2  # not popped before the send succeeded
        p.client.produce = real  # type: ignore[method-assign]
        [result] = p.flush()
        assert result.offset.tolist() == [0, 1]
        assert p.buffered == 0


@pytest.mark.broker
def test_metrics_count_requests_bytes_and_latency(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, [b"x" * 1000] * 10)
        c.fetch(topic, 0, 0)
        m = c.metrics()
    produce, fetch = m["apis"]["Produce"], m["apis"]["Fetch"]
    assert produce["requests"] == produce["responses"] >= 1
    assert produce["bytes_sent"] > 10_000 and fetch["bytes_received"] > 10_000
    assert 0 < produce["latency_avg_ms"] <= produce["latency_max_ms"]
    assert m["requests"] == sum(a["requests"] for a in m["apis"].values())
    assert m["metadata_refreshes"] >= 1


def test_retries_are_logged_with_their_cause(caplog):
    port = free_port()
    with Client(f"127.0.0.1:{port}", retry_backoff_ms=20) as c, caplog.at_level(logging.INFO, "kafkawire.client"):
        with pytest.raises(Exception, match="after 0.5 s"):
            c.metadata(timeout_ms=500)
        assert c.metrics()["retries"] >= 2
    retries = [r for r in caplog.records if r.name == "kafkawire.client.retry"]
    assert retries and all(f"127.0.0.1:{port}" in r.getMessage() for r in retries)
    assert "Connection refused" in retries[0].getMessage()
