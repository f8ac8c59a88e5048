"""Source-diverse ordering and the turns shown beside the best memory."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from bench.locomo import ranked_items
from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.text import estimate_tokens
from engram.core.embedding import HashingEmbedder
from engram.core.scoring import ScoreParts
from engram.projections.embedded_store import EmbeddedStore
from engram.projections.ports import SearchHit
from engram.recall.context import RecalledItem, render_memory_section
from engram.recall.service import RecallRequest, RecallService
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.runtime.log import open_database
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import MemoryRecord, MemoryType
from tests.drivers import T0


def _config(**recall: object) -> EngramConfig:
    return DEFAULT_CONFIG.model_copy(update={"recall": DEFAULT_CONFIG.recall.model_copy(update=recall)})


def _hit(memory_id: str, sources: tuple[str, ...]) -> SearchHit:
    record = MemoryRecord(memory_id=memory_id, tenant_id="t", user_id="u", type=MemoryType.USER_FACT,
                          slot="user_fact", content=f"note {memory_id}", confidence=0.8, importance=0.5,
                          source_message_ids=sources, created_at=T0, updated_at=T0, last_seen_at=T0)
    return SearchHit(record, 0.0, 1.0)


def _score(value: float) -> ScoreParts:
    return ScoreParts(value, 0.0, value, 1.0, 0.5, value)


def _service(tmp_path: Path, **recall: object) -> RecallService:
    store = EmbeddedStore(open_database(tmp_path / "store.db"), 256)
    return RecallService(store, HashingEmbedder(), _config(**recall))


def test_a_second_note_of_the_same_turn_yields_to_a_note_of_another_turn(tmp_path: Path) -> None:
    hits = [_hit("a", ("m1",)), _hit("b", ("m1",)), _hit("c", ("m2",)), _hit("d", ("m3",))]
    scores = {"a": _score(0.9), "b": _score(0.8), "c": _score(0.7), "d": _score(0.3)}
    diverse = _service(tmp_path)._diverse(hits, scores, 4)
    assert [(h.record.memory_id, r) for h, r in diverse] == [("a", 0), ("c", 0), ("b", 1), ("d", 0)]
    plain = _service(tmp_path, source_repeat_factor=1.0)._diverse(hits, scores, 4)
    assert [h.record.memory_id for h, _ in plain] == ["a", "b", "c", "d"]
    assert [h.record.memory_id for h, _ in _service(tmp_path)._diverse(hits, scores, 2)] == ["a", "c"]


def _chat(tmp_path: Path, **recall: object) -> EmbeddedRuntime:
    runtime = EmbeddedRuntime(tmp_path / "engram", ctx=default_context(_config(**recall), {}))
    lines = [("Ana", "What did you get up to on the weekend with the kids?"),
             ("Ben", "I went kayaking on the lake with my daughter, she loved it."),
             ("Ana", "That sounds like the best kind of Saturday!"),
             ("Ben", "I have been learning to play the cello since March.")]
    runtime.ingest([TurnInput(tenant="t1", user="u1", agent="a1", session="s1", message_id=f"d{n}", role="user",
                              content=text, ts=T0 + timedelta(minutes=n), metadata={"speaker": who})
                    for n, (who, text) in enumerate(lines)])
    return runtime


def test_the_best_memory_shows_the_turn_it_answers_and_the_reply_when_asked(tmp_path: Path) -> None:
    with _chat(tmp_path, context_turns_top=1) as runtime:
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "kayaking on the lake", T0 + timedelta(days=1)))
    memories = [i for i in result.items if i.kind == "memory"]
    best = memories[0]
    assert "kayak" in best.text.lower() and best.source_message_ids == ("d1",)
    evidence = best.details["evidence"]  # the sentence of its own turn first, then the turns around it
    assert [m for m, _ in best.context_turns] == ["d1", "d0", "d2"] and evidence["message_id"] == "d1"
    assert best.details["context_turns"] == [{"message_id": m, "text": t} for m, t in best.context_turns[1:]]
    assert best.tokens > len(best.text) // 4 + 10, "the shown turns count against the budget"
    assert all(m in i.source_message_ids for i in memories[1:] for m, _ in i.context_turns)
    assert '  > "What did you get up to on the weekend with the kids?"' in result.memory_section
    ranked = ranked_items(result.items)
    assert [sorted(r.provenance) for r in ranked[:3]] == [["d1"], ["d0"], ["d2"]]


def test_neighbour_turns_are_off_by_default_and_never_repeat_a_shown_turn(tmp_path: Path) -> None:
    with _chat(tmp_path) as runtime:  # by default a memory quotes only its own source turn
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "kayaking on the lake", T0 + timedelta(days=1)))
    assert all(m in i.source_message_ids for i in result.items for m, _ in i.context_turns)
    with _chat(tmp_path / "all", context_turns_top=10) as runtime:
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "kayaking cello weekend", T0 + timedelta(days=1)))
    shown = [m for i in result.items for m, _ in i.context_turns if m not in i.source_message_ids]
    sources = {m for i in result.items for m in i.source_message_ids}
    assert len(shown) == len(set(shown)) and not set(shown) & sources


def test_rendered_context_turns_follow_their_memory_line() -> None:
    item = RecalledItem("memory", "x", "User went kayaking", 0.5, 9, ("d1",), context_turns=(("d0", "Any plans?"),),
                        details={"type": "user_fact"})
    assert render_memory_section([item], "kayak?").endswith('- User went kayaking\n  > "Any plans?"')


def test_a_long_quoted_turn_is_clipped_and_never_costs_the_memory_its_place(tmp_path: Path) -> None:
    lines = [("assistant", "How was your weekend? " + "Tell me everything about it. " * 200),
             ("user", "I went kayaking on the lake with my kids."),
             ("assistant", "That sounds lovely! " + "Kayaking is a great family activity. " * 200)]
    with EmbeddedRuntime(tmp_path / "engram", ctx=default_context(_config(context_turns_top=1,
                                                                          context_turn_tokens=20), {})) as runtime:
        runtime.ingest([TurnInput(tenant="t1", user="u1", agent="a1", session="s1", message_id=f"k{n}", role=role,
                                  content=text, ts=T0 + timedelta(minutes=n)) for n, (role, text) in enumerate(lines)])
        question = RecallRequest("t1", "u1", "a1", "s2", "kayaking on the lake", T0 + timedelta(days=1))
        result = runtime.recall(question)
        best = next(i for i in result.items if i.kind == "memory")
        assert [m for m, _ in best.context_turns] == ["k0", "k2"]
        assert all(estimate_tokens(t) <= 20 and t.endswith("…") for _, t in best.context_turns)
        alone = render_memory_section([replace(best, context_turns=())], question.question)
        tight = runtime.recall(replace(question, token_budget=estimate_tokens(alone) + 2))
    kept = [i for i in tight.items if i.kind == "memory"]
    assert kept and kept[0].item_id == best.item_id and not kept[0].context_turns, "the memory stays, its quotes go"
    assert "context_turns" not in kept[0].details


def test_forgetting_a_memory_by_id_keeps_the_session_window(tmp_path: Path) -> None:
    from engram.schemas.events import ForgetRequested

    with _chat(tmp_path) as runtime:
        kayak = next(m for m in runtime.store.list_memories("t1", "u1") if "kayak" in m.content.lower())
        recent = runtime.store.recent_turns("t1", "u1", "s1", 10)
        runtime.append([ForgetRequested(event_id="f1", occurred_at=T0 + timedelta(hours=1), tenant_id="t1",
                                        user_id="u1", memory_ids=(kayak.memory_id,))])
        assert runtime.store.recent_turns("t1", "u1", "s1", 10) == recent, "one forgotten memory is not a reset"
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "kayaking on the lake", T0 + timedelta(days=1)))
    assert kayak.memory_id not in {i.item_id for i in result.items}


def test_quoted_turns_skip_the_short_term_window_and_are_audited(tmp_path: Path) -> None:
    with _chat(tmp_path, context_turns_top=1) as runtime:
        later = T0 + timedelta(hours=1)
        same = runtime.recall(RecallRequest("t1", "u1", "a1", "s1", "kayaking on the lake", later, message_id="d9"))
        other = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "kayaking on the lake", later))
    window = {"What did you get up to on the weekend with the kids?", "That sounds like the best kind of Saturday!"}
    assert window <= {t["content"] for t in same.recent}
    best = next(i for i in same.items if i.kind == "memory")
    assert best.source_message_ids == ("d1",) and not best.context_turns, "d0 and d2 are in the window already"
    assert same.observation.injected_ids == tuple(i.item_id for i in same.items)
    quoted = next(i for i in other.items if i.kind == "memory").context_turns
    assert [m for m, _ in quoted] == ["d1", "d0", "d2"], "its own turn's words, then the turns around it"
    assert other.observation.injected_ids == (*(i.item_id for i in other.items), "d1", "d0", "d2")
    assert other.observation.injected_count == len(other.items)
