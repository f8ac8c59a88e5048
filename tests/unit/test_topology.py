"""The topology is complete: every stage writes exactly its declared topics, and every topic has a writer."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from engram.core.ports import LLMCall
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.events import CorrectionRequested, ForgetRequested, GlobalCardRequested, PinRequested
from engram.schemas.inputs import summary_request_for, to_turn_event
from engram.schemas.memory import GlobalCard
from engram.streams.context import rule_context
from engram.streams.govern import governance_tick
from engram.streams.harness import Harness
from engram.streams.processor import Processor, ProcessorContext
from engram.streams.topology import EDGES, PROJECTIONS, build_topology, markdown
from tests.generators import T0, conversations

ROOT = Path(__file__).resolve().parents[2]
CALL = LLMCall(task="extract", model="scripted", attempt=1, outcome="ok", tokens_in=10, tokens_out=5)


@dataclass
class Calling:
    """An adapter that answers as the rule one does and reports one model call (the LLM path's shape)."""

    inner: object
    method: str

    def __getattr__(self, name: str) -> object:
        if name != self.method:
            return getattr(self.inner, name)

        def call(*args: object) -> object:
            result = getattr(self.inner, self.method)(*args)
            return replace(result, calls=(CALL,)) if result is not None else None  # type: ignore[type-var]
        return call


class RuleJudge:
    def judge(self, candidate: object, existing: object) -> object:
        from engram.core.ports import Judgement

        return Judgement(relation="new", reason="scripted", judge="llm")


class Recording(Harness):
    """The harness, noting which topics each processor's outputs went to."""

    written: dict[str, set[str]]

    def _run(self, processor: Processor, event: Event) -> list[Event]:  # type: ignore[type-arg]
        outputs = super()._run(processor, event)
        for output in outputs:
            self.written[processor.name].add(t.topic_for(output.type))
        return outputs


def _context() -> ProcessorContext:
    rules = rule_context()
    return replace(rules, extractor=Calling(rules.extractor, "extract"), judge=Calling(RuleJudge(), "judge"),
                   summarizer=Calling(rules.summarizer, "summarize"))  # type: ignore[arg-type]


def _commands(harness: Harness) -> list[Event]:
    changed = harness.of_type("MemoryChanged")[-1]
    scope = {"tenant_id": changed.tenant_id, "user_id": changed.user_id, "occurred_at": T0 + timedelta(days=1)}
    memory_id = changed.memory_id  # type: ignore[attr-defined]
    card = GlobalCard(card_id="c1", tenant_id=changed.tenant_id, user_id=changed.user_id, name="Ana",
                      created_at=T0, updated_at=T0)
    return [
        CorrectionRequested(event_id="cmd-correct", memory_id=memory_id, content="User prefers jasmine tea", **scope),
        PinRequested(event_id="cmd-pin", memory_id=memory_id, pinned=True, **scope),
        *(GlobalCardRequested(event_id=event_id, card_id="c1", action="create", expected_version=0, card=card,
                              **scope) for event_id in ("cmd-card", "cmd-card-2")),
        governance_tick(changed.tenant_id, changed.user_id, T0 + timedelta(days=2)),
        ForgetRequested(event_id="cmd-forget", topic_text="tea", **scope),
    ]


def test_each_stage_writes_exactly_its_declared_topics() -> None:
    turns = [to_turn_event(turn, T0) for turn in conversations(seed=11, turns=300)]
    last = {(e.tenant_id, e.user_id, e.session_id): e for e in turns}
    victim = turns[3].event_id
    harness = Recording(ctx=_context(), fault=lambda name, event: event.event_id in (victim, "cmd-card"))
    harness.written = defaultdict(set)
    harness.append([*turns, *(summary_request_for(e) for e in last.values())])
    harness.run_until_idle()
    harness.append(_commands(harness))
    harness.run_until_idle()
    for stage in build_topology():
        declared = {topic.name for topic in stage.outputs}
        assert harness.written[stage.processor.name] <= declared, stage.processor.name  # emitted ⊆ declared
    # the scenario reached every declared output but the dead letters of stages it did not fault
    for stage in build_topology():
        declared = {topic.name for topic in stage.outputs}
        assert declared - harness.written[stage.processor.name] <= {t.DEAD_LETTERS.name}, stage.processor.name
    assert t.DEAD_LETTERS.name in harness.written["extract"] and t.DEAD_LETTERS.name in harness.written["cards"]


def test_every_topic_has_a_writer_and_a_reader() -> None:
    written = {topic.name for edge in EDGES for topic in edge.outputs}
    written |= {topic.name for stage in build_topology() for topic in stage.outputs}
    read = {topic.name for stage in build_topology() for topic in stage.inputs}
    read |= {topic.name for projection in PROJECTIONS for topic in projection.inputs}
    assert written == read == {topic.name for topic in t.CATALOGUE}


def test_architecture_md_carries_the_current_topology() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert markdown() in text, "ARCHITECTURE.md is stale: paste `engram topology --markdown`"
