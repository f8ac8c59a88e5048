"""The transport-free stage runner: replays, duplicates, bad input and crashes, without a broker."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import orjson
import pytest

from engram.distributed.app import dead_letter_owner, stages_for
from engram.distributed.chain import ChainGate, link_header
from engram.distributed.governor import partition_of
from engram.distributed.runner import Inbound, Outbound, StageRunner
from engram.distributed.topics import Namespace
from engram.distributed.tracking import TYPE_HEADER, Applied, Origin, decode_entry, encode_entry, origin_of
from engram.runtime.context import default_context
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import decode, encode
from engram.schemas.events import DeadLettered
from engram.streams.summarize import SessionSummaryState  # a small pydantic state to round-trip
from tests.distributed.helpers import edge_events, mismatch, reference

NS = Namespace("unit.")
PARTITIONS = t.TURNS.partitions


# -- tracking -------------------------------------------------------------------------------
def test_origin_header_round_trips_and_a_record_without_one_is_its_own_origin() -> None:
    origin = Origin("unit.engram.turns:2", (41, 1))
    assert Origin.parse(origin.header()) == origin
    assert origin.child(3).position == (41, 1, 3)
    assert origin_of("x", 1, 7, [("engram-origin", b"garbage")]) == Origin("x:1", (7,))


def test_applied_marks_skip_replays_and_the_id_window_skips_re_sent_events() -> None:
    applied = Applied()
    applied.record(Origin("turns:0", (10, 1)), "e1", window=2)
    assert applied.seen(Origin("turns:0", (10, 0)), "other")
    assert applied.seen(Origin("turns:0", (10, 1)), "other")
    assert not applied.seen(Origin("turns:0", (10, 2)), "other")
    assert applied.seen(Origin("turns:0", (99,)), "e1")  # same id, later offset: an edge re-sent it
    applied.record(Origin("turns:0", (11,)), "e2", window=2)
    applied.record(Origin("turns:0", (12,)), "e3", window=2)
    assert applied.recent == ["e2", "e3"]


def test_an_entry_keeps_state_and_marks_in_one_value() -> None:
    state = SessionSummaryState()
    state.record("m1", "user", "hello there")
    applied = Applied()
    applied.record(Origin("turns:0", (3,)), "e1")
    from engram.distributed.tracking import Entry

    back = decode_entry(encode_entry(Entry(applied, state)), SessionSummaryState)
    assert back.applied == applied and back.state is not None and back.state.seen == {"m1"}


# -- a simulated broker ---------------------------------------------------------------------------
def _partition(key: bytes) -> int:
    return partition_of(key, PARTITIONS)  # the broker's keyed partitioner


def _destination(out: Outbound) -> int:
    part = getattr(out, "partition", None)
    return _partition(out.key) if part is None else part


@dataclass
class SimKafka:
    """Topics as per-partition lists, each stage with a table and committed offsets; crashes on demand."""

    rng: random.Random
    crash_rate: float = 0.0
    skip_rate: float = 0.0
    logs: dict[str, list[list[Inbound]]] = field(default_factory=dict)
    tables: dict[str, dict[bytes, bytes]] = field(default_factory=dict)
    committed: dict[tuple[str, str, int], int] = field(default_factory=dict)
    crashes: int = 0
    skips: int = 0

    def append(self, topic: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]] = (),
               partition: int | None = None) -> None:
        parts = self.logs.setdefault(topic, [[] for _ in range(PARTITIONS)])
        part = _partition(key) if partition is None else partition
        parts[part].append(Inbound(topic, part, len(parts[part]), key, value, 1.0, tuple(headers)))

    def runners(self) -> list[StageRunner]:
        stages = stages_for("processors")
        return [StageRunner(s.processor, default_context(), NS, dead_letter_owner(stages, s)) for s in stages]

    def run(self, max_batch: int = 8) -> None:
        """Process until idle. A crash loses the runners' memory; tables and committed offsets stay."""
        runners = self.runners()
        while True:
            progressed = False
            for runner in runners:
                stage = next(s for s in stages_for("processors") if s.processor.name == runner.processor.name)
                for topic in (NS.topic(x) for x in stage.inputs):
                    for part in range(PARTITIONS):
                        progressed = self._step(runner, topic, part, max_batch) or progressed
            if not progressed and not self._tails(runners):
                return

    def _tails(self, runners: list[StageRunner]) -> bool:
        """The worker's idle check: partitions whose progress is behind their end get their tail read back."""
        found = False
        for runner in runners:
            stage = next(s for s in stages_for("processors") if s.processor.name == runner.processor.name)
            table = self.tables.setdefault(runner.processor.name, {})
            ends = {(NS.topic(x), p): len(self.logs.get(NS.topic(x), [[]] * PARTITIONS)[p])
                    for x in stage.inputs for p in range(PARTITIONS)}
            for gap in runner.tail_gaps(table, ends):
                filled = {(gap.topic, gap.partition): self.logs[gap.topic][gap.partition][gap.start:gap.end]}
                result = runner.run_batch([], table, filled)
                self._deliver(result.outputs)
                for w in result.writes:
                    table[w.key] = w.value
                self.committed[(runner.processor.name, gap.topic, gap.partition)] = gap.end
                found = True
        return found

    def _step(self, runner: StageRunner, topic: str, part: int, max_batch: int) -> bool:
        log = self.logs.get(topic, [[]] * PARTITIONS)[part]
        slot = (runner.processor.name, topic, part)
        start = self.committed.get(slot, 0)
        if start >= len(log):
            return False
        if self.rng.random() < self.skip_rate:  # faust acks records it never delivered (rebalance skips)
            self.committed[slot] = start + self.rng.randint(1, 3)
            self.skips += 1
            return True
        if self.rng.random() < self.skip_rate:  # or re-delivers records that were done
            start = max(0, start - self.rng.randint(1, 5))
        batch = log[start:start + self.rng.randint(1, max_batch)]
        table = self.tables.setdefault(runner.processor.name, {})
        filled: dict[tuple[str, int], list[Inbound]] = {}
        for gap in runner.gaps(batch, table):
            filled.setdefault((gap.topic, gap.partition), []).extend(log[gap.start:gap.end])
        result = runner.run_batch(batch, table, filled)
        outputs, writes = result.outputs, result.writes
        if self.rng.random() < self.crash_rate:  # crash somewhere in steps 2-4
            self.crashes += 1
            delivered = self._prefixes(outputs)
            self._deliver(delivered)
            if len(delivered) == len(outputs):  # state is written only once every output is acknowledged
                for w in self._prefixes(writes):
                    table[w.key] = w.value
            runner._cache.clear()  # noqa: SLF001 - a crash loses the process memory
            return True
        self._deliver(outputs)
        for w in writes:
            table[w.key] = w.value
        self.committed[slot] = start + len(batch)
        return True

    def _prefixes(self, items: list) -> list:  # type: ignore[type-arg]
        """What a crash lets through: per destination partition, some prefix (delivery is ordered per partition)."""
        groups: dict[object, list] = {}  # type: ignore[type-arg]
        for item in items:
            part = getattr(item, "partition", None)
            dest = (getattr(item, "topic", ""), _partition(item.key) if part is None else part)
            groups.setdefault(dest, []).append(item)
        kept = {id(x) for g in groups.values() for x in g[: self.rng.randint(0, len(g))]}
        return [x for x in items if id(x) in kept]

    def _deliver(self, outputs: list[Outbound]) -> None:
        for out in outputs:
            self.append(out.topic, out.key, out.value, out.headers, _destination(out))

    def derived(self) -> dict[str, Event]:
        found: dict[str, Event] = {}
        for topic, parts in self.logs.items():
            if topic in (NS.topic(t.TURNS), NS.topic(t.COMMANDS)):
                continue
            for record in (r for part in parts for r in part):
                event = decode(record.value or b"")
                found.setdefault(event.event_id, event)
        return found


def _feed(sim: SimKafka, events: list[Event]) -> None:
    for event in events:
        sim.append(NS.topic(t.topic_for(event.type)), event.partition_key.encode(), encode(event),
                   [(TYPE_HEADER, event.type.encode())])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batches_of_any_size_derive_what_the_harness_derives(seed: int) -> None:
    events = edge_events(seed, 150)
    sim = SimKafka(random.Random(seed))
    _feed(sim, events)
    sim.run()
    assert mismatch(reference(events), sim.derived()) == ""


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_records_faust_skipped_are_read_back_and_records_redelivered_are_skipped(seed: int) -> None:
    events = edge_events(seed, 200)
    sim = SimKafka(random.Random(seed), crash_rate=0.1, skip_rate=0.15)
    _feed(sim, events)
    sim.run()
    assert sim.skips > 10
    assert mismatch(reference(events), sim.derived()) == ""


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_crashes_between_outputs_state_and_offsets_neither_lose_nor_repeat_work(seed: int) -> None:
    events = edge_events(seed, 200)
    sim = SimKafka(random.Random(seed), crash_rate=0.25)
    _feed(sim, events)
    sim.run()
    assert sim.crashes > 10
    assert mismatch(reference(events), sim.derived()) == ""


# -- bad input -----------------------------------------------------------------------------------
def _runner(name: str) -> StageRunner:
    stages = stages_for("processors")
    stage = next(s for s in stages if s.processor.name == name)
    return StageRunner(stage.processor, default_context(), NS, dead_letter_owner(stages, stage))


def _record(value: bytes, key: bytes = b"t1/u1", offset: int = 0, headers: tuple = ()) -> Inbound:
    return Inbound(NS.topic(t.TURNS), 0, offset, key, value, 1_700_000_000.0, headers)


def _letters(outputs: list[Outbound]) -> list[DeadLettered]:
    return [e for e in (decode(o.value) for o in outputs) if isinstance(e, DeadLettered)]


def _turn_dict(**changes: object) -> dict[str, object]:
    event = edge_events(1, 1)[0]
    raw = orjson.loads(encode(event))
    raw.update(changes)
    return raw


@pytest.mark.parametrize("value, reason", [
    (b"\xff\xfe not json", "not JSON"),
    (orjson.dumps(_turn_dict(schema_version=9)), "unknown schema version"),
    (orjson.dumps(_turn_dict(content="x" * 40_000)), "content"),
    (orjson.dumps(_turn_dict(user_id="bad user")), "user_id"),
    (orjson.dumps({"type": "Nope"}), "unknown event type"),
])
def test_bad_records_are_dead_lettered_once_with_reason_and_original_bytes(value: bytes, reason: str) -> None:
    extract, summarize = _runner("extract"), _runner("summarize")
    result = extract.run_batch([_record(value)], {})
    assert summarize.run_batch([_record(value)], {}).outputs == []  # exactly one stage dead-letters it
    (letter,) = _letters(result.outputs)
    assert reason in letter.reason and letter.source_topic == t.TURNS.name
    raw = letter.raw.encode() if "base64" not in letter.reason else __import__("base64").b64decode(letter.raw)
    assert raw == value


def test_a_record_whose_key_is_not_its_user_or_topic_is_not_its_type_is_dead_lettered() -> None:
    turn = encode(edge_events(1, 1)[0])
    extract = _runner("extract")
    (wrong_key,) = _letters(extract.run_batch([_record(turn, key=b"t9/u9")], {}).outputs)
    assert "record key" in wrong_key.reason
    change = next(e for e in reference(edge_events(1, 30)).values() if e.type == "MemoryChanged")
    (wrong_topic,) = _letters(extract.run_batch([_record(encode(change), key=change.partition_key.encode())], {}).outputs)
    assert "does not belong on topic" in wrong_topic.reason


def test_a_v1_turn_is_upcast_and_processed() -> None:
    raw = _turn_dict(schema_version=1, content=None)
    raw["text"] = "I love jazz and I prefer tea in the morning"
    del raw["content"], raw["metadata"]
    event = edge_events(1, 1)[0]
    result = _runner("extract").run_batch([_record(orjson.dumps(raw), key=event.partition_key.encode())], {})
    assert not _letters(result.outputs) and result.counts["processed"] == 1


def test_a_processor_failure_dead_letters_the_event_and_keeps_the_rest_of_the_batch(monkeypatch) -> None:
    events = [e for e in edge_events(4, 40) if e.type == "TurnRecorded"][:12]
    records = [_record(encode(e), key=e.partition_key.encode(), offset=i) for i, e in enumerate(events)]
    runner = _runner("summarize")
    original = runner.processor.process

    def flaky(state, event, ctx):  # type: ignore[no-untyped-def]
        new_state, out = original(state, event, ctx)
        if event.event_id == events[5].event_id:
            raise RuntimeError("boom after mutating the state")
        return new_state, out

    monkeypatch.setattr(runner.processor, "process", flaky)
    result = runner.run_batch(records, {})
    assert len(_letters(result.outputs)) == 1
    clean = _runner("summarize").run_batch(records[:5] + records[6:], {})
    assert _states(result.writes) == _states(clean.writes)  # as if the failing event had never come


def _states(writes: list) -> dict:  # type: ignore[type-arg]
    """Key -> state JSON (applied marks and progress left out)."""
    return {w.key: w.value.partition(b"\n")[2] for w in writes if not w.key.startswith(b"\x00")}


# -- two producers of one origin partition (a rebalance) ------------------------------------------
def _extract_all(sim: SimKafka) -> list[Outbound]:
    """Extract every turn in one batch per partition, as the old owner did; commits its progress."""
    extract, turns = _runner("extract"), NS.topic(t.TURNS)
    table = sim.tables.setdefault("extract", {})
    outputs: list[Outbound] = []
    for part in range(PARTITIONS):
        log = sim.logs[turns][part]
        result = extract.run_batch(log, table)
        outputs += result.outputs
        for w in result.writes:
            table[w.key] = w.value
        sim.committed[("extract", turns, part)] = len(log)
    return outputs


def _interleaved(candidates: list[Outbound]) -> list[Outbound]:
    """What lands after a rebalance: the new owner's first quarter, the old owner's late third quarter, the rest."""
    n = len(candidates)
    return candidates[: n // 4] + candidates[n // 2: 3 * n // 4] + candidates[n // 4:]


@pytest.mark.parametrize("seed", [41, 42, 43])
def test_candidates_landing_out_of_origin_order_are_all_applied_in_origin_order(seed: int) -> None:
    """The issue-16 loss: a later turn's candidates land before earlier ones (old and new owner both produce).

    A high-water mark skipped the earlier ones for good; the chain gate holds the later ones back until
    the gap is filled, so consolidation derives exactly what an in-order run derives.
    """
    events = edge_events(seed, 300, users=4)
    sim = SimKafka(random.Random(seed))
    _feed(sim, events)
    outputs = _extract_all(sim)
    candidates = NS.topic(t.CANDIDATES)
    by_partition: dict[int, list[Outbound]] = {}
    for out in outputs:
        if out.topic == candidates:
            by_partition.setdefault(_destination(out), []).append(out)
        else:
            sim._deliver([out])  # noqa: SLF001
    assert sum(len(c) >= 20 for c in by_partition.values()) >= 2
    for group in by_partition.values():
        sim._deliver(_interleaved(group))  # noqa: SLF001
    sim.run()
    assert mismatch(reference(events), sim.derived()) == ""


def test_a_held_back_record_survives_a_crash_in_the_progress_value() -> None:
    """Records held back by the gate are stored with the progress: a new runner on the table releases them."""
    events = edge_events(5, 200, users=2)
    sim = SimKafka(random.Random(5))
    _feed(sim, events)
    group = [o for o in _extract_all(sim) if o.topic == NS.topic(t.CANDIDATES)]
    part = _destination(group[0])
    group = [o for o in group if _destination(o) == part]
    n = len(group)
    assert n >= 8
    consolidate, table = _runner("consolidate"), sim.tables.setdefault("consolidate", {})
    sim._deliver(group[n // 2:] + group[: n // 2])  # noqa: SLF001 - the later half first
    log = sim.logs[NS.topic(t.CANDIDATES)][part]
    first = consolidate.run_batch(log[: n - n // 2], table)
    assert first.counts["held_back"] == n - n // 2 and first.counts["processed"] == 0
    for w in first.writes:
        table[w.key] = w.value
    second = _runner("consolidate").run_batch(log[n - n // 2:], table)  # a fresh process: only the table
    assert second.counts["processed"] == n
    assert second.counts["held_back"] == 0


def _linked(offset: int, position: tuple[int, ...], prev: tuple[int, ...] | None) -> Inbound:
    origin = Origin("unit.engram.turns:0", position)
    return Inbound(NS.topic(t.CANDIDATES), 0, offset, b"t1/u1", b"{}", 1.0,
                   (("engram-origin", origin.header()), link_header(prev)))


def test_the_chain_gate_releases_in_origin_order_and_passes_duplicates_to_the_key_marks() -> None:
    gate = ChainGate({"next": 0})
    arrivals = [_linked(0, (1, 0), None), _linked(1, (5, 0), (3, 1)), _linked(2, (5, 1), (5, 0)),
                _linked(3, (5, 0), (3, 1)), _linked(4, (3, 0), (1, 0)), _linked(5, (3, 1), (3, 0)),
                _linked(6, (3, 0), (1, 0))]
    released = [r.offset for a in arrivals for r in gate.admit(a, origin_of(a.topic, 0, a.offset, a.headers))]
    assert released == [0, 4, 5, 1, 2, 6]  # the held (5, *) after (3, 1); the re-sent (5, 0) was held once
    assert gate.heads == {"unit.engram.turns:0": [5, 1]} and gate.held == []
    gate.store()
    assert ChainGate(gate.meta).heads == gate.heads


def test_a_gate_on_progress_written_before_chains_existed_does_not_wait_for_a_predecessor() -> None:
    record = _linked(9, (7, 0), (6, 0))
    assert list(ChainGate({"next": 9}).admit(record, origin_of(record.topic, 0, 9, record.headers))) == [record]
    assert list(ChainGate({"next": 0}).admit(record, origin_of(record.topic, 0, 9, record.headers))) == []
