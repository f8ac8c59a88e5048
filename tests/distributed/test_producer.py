"""The chat platform's producer SDK: never blocks, never raises, counts everything."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from aiokafka.partitioner import DefaultPartitioner

from engram.distributed.producer import TurnProducer
from engram.distributed.readback import read_topic
from engram.schemas import topics as t
from engram.schemas.events import SummaryRequested, TurnRecorded
from tests.distributed.conftest import Cluster
from tests.services import free_port

AT = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def _turn(n: int, **over: object) -> dict[str, object]:
    base: dict[str, object] = dict(tenant="acme", user=f"user{n % 7}", agent="bot", session="s1",
                                   message_id=f"m{n}", role="user", content=f"I prefer green tea, note {n}", ts=AT)
    return {**base, **over}


def test_recorded_turns_reach_the_turns_topic_on_the_partition_the_workers_use(cluster: Cluster) -> None:
    with TurnProducer(cluster.bootstrap, cluster.ns, summary_checks="off") as producer:
        assert all(producer.record_turn(**_turn(n)) for n in range(70))  # type: ignore[arg-type]
    assert producer.counters["sent"] == 70 and producer.counters["failed"] == 0
    records = read_topic(cluster.bootstrap, cluster.ns.topic(t.TURNS))
    assert sum(isinstance(r.event, TurnRecorded) for r in records) == 70
    partitioner = DefaultPartitioner()
    for record in records:  # the partition the workers' aiokafka partitioner picks for this key (murmur2)
        key = record.event.partition_key.encode()  # type: ignore[union-attr]
        assert record.partition == partitioner(key, list(range(6)), list(range(6)))
    assert len({r.partition for r in records}) > 1


def test_a_summary_check_follows_when_a_sessions_trigger_may_fire(cluster: Cluster) -> None:
    with TurnProducer(cluster.bootstrap, cluster.ns) as producer:
        assert all(producer.record_turn(**_turn(n, user="u1", session=f"s{n % 2}")) for n in range(50))  # type: ignore[arg-type]
        assert producer.record_turn(**_turn(99, user="u1", session="long", content="x" * 1200))  # type: ignore[arg-type]
    checks = [r.event for r in read_topic(cluster.bootstrap, cluster.ns.topic(t.TURNS))
              if isinstance(r.event, SummaryRequested)]
    assert sorted(c.session_id for c in checks) == ["long", "s0", "s0", "s1", "s1"]  # type: ignore[attr-defined]


def test_invalid_turns_are_counted_not_raised(cluster: Cluster) -> None:
    with TurnProducer(cluster.bootstrap, cluster.ns) as producer:
        assert not producer.record_turn(**_turn(1, user="has space"))  # type: ignore[arg-type]
        assert not producer.record_turn(**_turn(2, content="x" * 40_000))  # type: ignore[arg-type]
        assert not producer.record_turn(**_turn(3, role="robot"))  # type: ignore[arg-type]
    assert producer.counters["invalid"] == 3 and producer.counters["sent"] == 0


def test_without_a_broker_calls_return_at_once_and_failures_are_counted() -> None:
    dead = f"127.0.0.1:{free_port()}"
    producer = TurnProducer(dead, summary_checks="off", config={"message.timeout.ms": 1500})
    started = time.perf_counter()
    assert all(producer.record_turn(**_turn(n)) for n in range(200))  # type: ignore[arg-type]
    assert (time.perf_counter() - started) / 200 < 0.005
    assert producer.close(timeout=10) == 0
    assert producer.counters["failed"] == 200 and producer.counters["sent"] == 0


def test_a_full_buffer_drops_and_counts_instead_of_blocking() -> None:
    dead = f"127.0.0.1:{free_port()}"
    producer = TurnProducer(dead, buffer_messages=10, summary_checks="off", config={"message.timeout.ms": 1000})
    accepted = [producer.record_turn(**_turn(n)) for n in range(25)]  # type: ignore[arg-type]
    assert accepted.count(True) == 10 and producer.counters["dropped"] == 15
    producer.close(timeout=5)
