"""Governance on Kafka: ticks on the commands topic archive, then delete, exactly as the embedded runtime does."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from aiokafka.partitioner import DefaultPartitioner

from engram.distributed.app import WorkerSettings, stages_for
from engram.distributed.governor import partition_of, tick_sends, user_keys
from engram.distributed.progress import progress_key
from engram.distributed.sink import Sink
from engram.distributed.topics import Namespace
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import decode
from engram.schemas.events import GovernanceTick, MemoryChanged
from engram.streams.govern import governance_tick
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import as_dicts, edge_events
from tests.generators import T0

YEARS_LATER = T0 + timedelta(days=3 * 365)


def _users(events: list[Event]) -> list[tuple[str, str]]:
    return sorted({(e.tenant_id, e.user_id) for e in events})


def _ticks(events: list[Event], as_of: datetime) -> list[Event]:
    return [governance_tick(tenant, user, as_of) for tenant, user in _users(events)]


def _decay(events: dict[str, Event]) -> dict[str, Event]:
    return {k: e for k, e in events.items() if isinstance(e, MemoryChanged) and e.relation == "decay"}


def _embedded(folder: Path, *batches: list[Event]) -> dict[str, Event]:
    with EmbeddedRuntime(folder) as runtime:
        for batch in batches:
            runtime.append(batch)
        return _decay({e.event_id: e for _, e in runtime.log.scan()})


def _send_like_the_timer(cluster: Cluster, ticks: list[Event]) -> None:
    sink = Sink(cluster.bootstrap)
    try:
        keys = [tick.partition_key.encode() for tick in ticks]
        asyncio.run(sink.send_all(tick_sends(keys, cluster.ns, ticks[0].occurred_at)))
    finally:
        sink.close()


def test_a_tick_archives_weak_memories_and_a_later_one_deletes_them_as_embedded_does(
        cluster: Cluster, tmp_path: Path) -> None:
    events = edge_events(seed=41, turns=240, users=3)
    first, later = _ticks(events, YEARS_LATER), _ticks(events, YEARS_LATER + timedelta(hours=1))
    cluster.produce(events)
    cluster.worker().start()
    cluster.wait_idle()
    cluster.produce(first)
    cluster.wait_idle()
    archived = _decay(cluster.derived())
    assert archived and {e.change for e in archived.values()} == {"archived"}, cluster.logs()  # type: ignore[attr-defined]
    assert {e.causation_ids[0] for e in archived.values()} <= {tick.event_id for tick in first}
    assert as_dicts(archived) == as_dicts(_embedded(tmp_path / "one", events, first))

    cluster.produce(first)  # a timer sending the same bucket again changes nothing
    _send_like_the_timer(cluster, later)
    cluster.wait_idle()
    decayed = _decay(cluster.derived())
    deleted = {e.memory_id for e in decayed.values() if e.change == "deleted"}  # type: ignore[attr-defined]
    assert deleted == {e.memory_id for e in archived.values()}, cluster.logs()  # type: ignore[attr-defined]
    assert len(decayed) == 2 * len(archived)
    assert as_dicts(decayed) == as_dicts(_embedded(tmp_path / "two", events, first, later))


def test_the_timer_ticks_each_owned_user_once_keyed_for_its_partition() -> None:
    ns = Namespace("acme.")
    keys = [f"t{n % 2}/u{n}".encode() for n in range(40)]
    stored = keys + [progress_key("acme.engram.candidates", 3)]
    owned = frozenset({0, 2, 5})
    chosen = user_keys(stored, owned, 6)
    partitioner = DefaultPartitioner()
    assert chosen == sorted(k for k in keys if partitioner(k, list(range(6)), list(range(6))) in owned)
    assert all(partition_of(k, 6) in owned for k in chosen) and 0 < len(chosen) < len(keys)
    at = datetime(2026, 3, 1, 12, tzinfo=T0.tzinfo)
    sends = tick_sends(chosen, ns, at)
    ticks = [decode(s.value) for s in sends]
    assert {s.topic for s in sends} == {"acme.engram.commands"}
    assert all(isinstance(tick, GovernanceTick) and tick.partition_key.encode() == s.key and tick.as_of == at
               for s, tick in zip(sends, ticks))
    assert all(dict(s.headers)["engram-type"] == b"GovernanceTick" for s in sends)


def test_only_the_consolidation_stage_consumes_ticks_and_it_reads_the_commands_topic() -> None:
    owners = [s for s in stages_for("processors") if "GovernanceTick" in s.processor.consumes]
    assert [s.processor.name for s in owners] == ["consolidate"] and t.COMMANDS in owners[0].inputs
    assert WorkerSettings(bootstrap="x").governance_interval == 3600.0
