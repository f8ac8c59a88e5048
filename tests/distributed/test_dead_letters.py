"""Bad input on real Kafka: dead-lettered with reason and original bytes, never lost, never blocking."""

from __future__ import annotations

import orjson
from confluent_kafka import Producer

from engram.distributed.readback import read_topic
from engram.schemas import topics as t
from engram.schemas.codec import encode
from engram.schemas.events import DeadLettered
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import edge_events, mismatch, reference


def _poison(turn_raw: dict) -> list[tuple[str, bytes]]:  # type: ignore[type-arg]
    """(reason fragment, bytes) of records no processor can use."""
    future = {**turn_raw, "schema_version": 7}
    oversize = {**turn_raw, "event_id": "oversize", "content": "x" * 40_000}
    return [("not JSON", b"\x00\x01 definitely not an event"), ("unknown schema version", orjson.dumps(future)),
            ("content", orjson.dumps(oversize)), ("unknown event type", b'{"type": "Mystery", "schema_version": 1}')]


def _other_user(events: list, victim: object) -> object:  # type: ignore[type-arg]
    """A turn of another user: under the victim's key it is misrouted (wrong partition for its state)."""
    return next(e for e in events if e.type == "TurnRecorded" and e.partition_key != victim.partition_key)  # type: ignore[attr-defined]


def _v1(turn_raw: dict) -> bytes:  # type: ignore[type-arg]
    old = {k: v for k, v in turn_raw.items() if k not in ("content", "metadata")}
    return orjson.dumps({**old, "schema_version": 1, "text": turn_raw["content"]})


def test_poisoned_records_go_to_the_dead_letter_topic_and_the_partition_moves_on(cluster: Cluster) -> None:
    events = [e for e in edge_events(seed=41, turns=120, users=2)]
    cut = len(events) // 2
    first, second = events[:cut], events[cut:]
    victim = next(e for e in second if e.type == "TurnRecorded")
    key = victim.partition_key.encode()  # same user, same partition as the good turns around it
    poison = _poison(orjson.loads(encode(victim))) + [("record key", encode(_other_user(events, victim)))]
    upgraded = next(e for e in first if e.type == "TurnRecorded" and e.role == "user")  # type: ignore[attr-defined]

    cluster.produce([e for e in first if e is not upgraded])
    raw = Producer({"bootstrap.servers": cluster.bootstrap, "partitioner": "murmur2_random"})
    for _, value in poison:
        raw.produce(cluster.ns.topic(t.TURNS), key=key, value=value)
    raw.produce(cluster.ns.topic(t.TURNS), key=upgraded.partition_key.encode(), value=_v1(orjson.loads(encode(upgraded))))
    raw.produce(cluster.ns.topic(t.COMMANDS), key=key, value=b"{not a command")
    assert raw.flush(30) == 0
    cluster.produce(second)

    cluster.worker().start()
    cluster.wait_idle()

    letters = [r.event for r in read_topic(cluster.bootstrap, cluster.ns.topic(t.DEAD_LETTERS))]  # opened (sealed)
    assert all(isinstance(x, DeadLettered) for x in letters)
    by_topic = {x.source_topic for x in letters}  # type: ignore[attr-defined]
    assert by_topic == {t.TURNS.name, t.COMMANDS.name}
    turn_letters = [x for x in letters if x.source_topic == t.TURNS.name]  # type: ignore[attr-defined]
    assert len({x.event_id for x in turn_letters}) == len(poison), [x.reason for x in turn_letters]  # type: ignore[attr-defined]
    for fragment, value in poison:
        letter = next(x for x in turn_letters if fragment in x.reason)  # type: ignore[attr-defined]
        assert letter.raw.encode() == value or "base64" in letter.reason  # type: ignore[attr-defined]

    # The v1 turn was upcast to the very event the others derive from; it reached the log after the rest of
    # the first half, and the profile's versions count changes in the order they arrive.
    expected = reference([e for e in first if e is not upgraded] + [upgraded] + second)
    derived = {k: v for k, v in cluster.derived().items() if v.type != "DeadLettered"}
    assert mismatch(expected, derived) == "", cluster.logs()
