"""Topic forget: matched like recall (lexical + semantic), previewed by dry_run, counted for real.

Through the access service on the embedded back end, as the HTTP API calls it.
"""

from __future__ import annotations

from pathlib import Path

from engram.access.auth import Principal
from engram.access.backend import EmbeddedBackend
from engram.access.models import ForgetBody, RecallQuery
from engram.access.service import AccessService
from engram.runtime.engine import EmbeddedRuntime
from engram.streams.forget import topic_of
from tests.drivers import turn

FACTS = ["I have a daughter named Lily", "我女儿叫小美，今年上小学", "I like Java programming a lot",
         "I live in Paris", "I prefer short answers", "I work as a nurse at the hospital"]
ME = Principal("test")


def test_command_words_are_not_the_topic() -> None:
    assert topic_of("forget my daughter") == "daughter"
    assert topic_of("Please forget about my daughter") == "daughter"
    assert topic_of("忘掉我女儿的事") == "女儿"
    assert topic_of("Java") == "Java"


def test_owner_words_are_stripped_only_as_whole_words() -> None:
    assert topic_of("forget theater") == "theater"
    assert topic_of("forget mysql") == "mysql"
    assert topic_of("forget Theresa") == "Theresa"
    assert topic_of("forget my meetings") == "meetings"
    assert topic_of("forget about the meditation class") == "meditation class"


def test_dry_run_shows_exactly_what_the_forget_then_erases(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path / "d")
    backend = EmbeddedBackend(runtime)
    access = AccessService(backend)
    try:
        access.ingest(ME, [turn(f, user="a") for f in FACTS] + [turn("My daughter loves swimming", user="b")])
        before = {m.memory_id: m.content for m in access.memories(ME, "t1", "a")}
        for question in ("forget my daughter", "忘掉我女儿的事"):
            body = ForgetBody(tenant="t1", user="a", topic_text=question, dry_run=True)
            ids = {m.memory_id for m in access.memories(ME, "t1", "a")}
            preview = access.forget(ME, body)
            assert preview.dry_run and preview.affected == len(preview.changes) >= 1
            assert all("daughter" in c.before.lower() or "女儿" in c.before for c in preview.changes if c.before)
            assert {m.memory_id for m in access.memories(ME, "t1", "a")} == ids  # nothing changed
            done = access.forget(ME, body.model_copy(update={"dry_run": False}))
            assert not done.dry_run
            assert sorted(c.memory_id for c in done.changes) == sorted(c.memory_id for c in preview.changes)
        left = [m.content for m in access.memories(ME, "t1", "a")]
        assert not any("daughter" in c.lower() or "女儿" in c for c in left)
        assert len(left) == len(before) - 2  # the other four memories stay
        assert [m.content for m in access.memories(ME, "t1", "b")] == ["User's daughter loves swimming"]
        erasures = [e for _, e in runtime.log.scan(types=("ErasureRecorded",))]
        assert [getattr(e, "scope") for e in erasures] == ["topic", "topic"]
    finally:
        backend.close()


def test_a_topic_forget_blanks_the_analytics_rows_that_mention_it(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path / "d", analytics="chdb")
    backend = EmbeddedBackend(runtime)
    access = AccessService(backend)
    try:
        access.ingest(ME, [turn(f, user="a") for f in FACTS] + [turn("My daughter loves swimming", user="b")])
        access.recall(ME, RecallQuery(tenant="t1", user="a", agent="a1", session="s1",
                                      question="what does my daughter like?"))
        access.forget(ME, ForgetBody(tenant="t1", user="a", topic_text="forget my daughter"))
        assert runtime.analytics is not None
        client = runtime.analytics.projector.client

        def texts(sql: str) -> list[str]:
            return [str(r[0]) for r in client.query(sql).result_rows]

        a_text = texts("SELECT content FROM turns WHERE user_id = 'a'") + texts(
            "SELECT question FROM recalls WHERE user_id = 'a'") + texts(
            "SELECT before_content FROM memory_changes WHERE user_id = 'a'") + texts(
            "SELECT content FROM memory_proposals WHERE user_id = 'a'")
        assert a_text and not any("daughter" in t.lower() for t in a_text), a_text
        assert any("Java" in t for t in a_text)  # the rest of A's history is still there
        assert any("daughter" in t for t in texts("SELECT content FROM turns WHERE user_id = 'b'"))
        assert len(texts("SELECT content FROM turns FINAL WHERE user_id = 'a'")) == len(FACTS)  # rows kept (one per event id), text blanked
        assert texts("SELECT question FROM recalls FINAL WHERE user_id = 'a'") == [""]
        # a rebuild of the analytics from the log applies the erasure again: the text does not come back
        runtime.analytics.rebuild()
        rebuilt = texts("SELECT content FROM turns FINAL WHERE user_id = 'a'") + texts(
            "SELECT question FROM recalls FINAL WHERE user_id = 'a'") + texts(
            "SELECT after_content FROM memory_changes FINAL WHERE user_id = 'a'")
        assert any("Java" in t for t in rebuilt) and not any("daughter" in t.lower() for t in rebuilt), rebuilt
    finally:
        backend.close()
