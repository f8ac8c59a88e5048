"""The in-memory harness, and the embedded runtime checked against it."""

from __future__ import annotations

from pathlib import Path

from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.codec import encode
from engram.schemas.events import DeadLettered
from engram.schemas.inputs import summary_request_for, to_turn_event
from engram.streams.harness import Harness
from tests.generators import T0, conversations


def _edge_events(seed: int, turns: int):
    inputs = conversations(seed=seed, turns=turns)
    events = [to_turn_event(t, T0) for t in inputs]
    last = {}
    for e in events:
        last[(e.tenant_id, e.user_id, e.session_id)] = e
    return inputs, events + [summary_request_for(e) for e in last.values()]


def test_the_embedded_runtime_derives_exactly_what_the_harness_derives(tmp_path: Path) -> None:
    inputs, edge = _edge_events(seed=5, turns=250)
    harness = Harness(ctx=default_context())
    harness.append(edge)
    harness.run_until_idle()
    with EmbeddedRuntime(tmp_path / "rt") as runtime:
        runtime.ingest(inputs, now=T0)
        logged = {e.event_id: encode(e) for _, e in runtime.log.scan()}
    expected = {e.event_id: encode(e) for e in harness.log}
    assert logged == expected
    assert len(harness.of_type("MemoryChanged")) > 20


def test_an_injected_fault_is_dead_lettered_and_the_rest_still_flows() -> None:
    _, edge = _edge_events(seed=6, turns=120)
    victim = next(e for e in edge if e.type == "TurnRecorded" and len(e.content) > 10)  # type: ignore[attr-defined]
    clean = Harness(ctx=default_context())
    clean.append(edge)
    clean.run_until_idle()
    faulty = Harness(ctx=default_context(), fault=lambda name, e: name == "extract" and e.event_id == victim.event_id)
    faulty.append(edge)
    faulty.run_until_idle()
    letters = [e for e in faulty.of_type("DeadLettered") if isinstance(e, DeadLettered)]
    assert len(letters) == 1 and victim.event_id in letters[0].causation_ids
    derived_from_victim = {e.event_id for e in clean.log if victim.event_id in e.causation_ids}
    assert derived_from_victim and not derived_from_victim & {e.event_id for e in faulty.log}
    assert len(faulty.of_type("MemoryProposed")) >= len(clean.of_type("MemoryProposed")) - len(derived_from_victim)


def test_appending_the_same_events_twice_changes_nothing() -> None:
    _, edge = _edge_events(seed=8, turns=60)
    harness = Harness(ctx=default_context())
    harness.append(edge)
    first = [encode(e) for e in harness.run_until_idle()]
    assert harness.append(edge) == 0
    assert harness.run_until_idle() == [] and len(first) > 0
