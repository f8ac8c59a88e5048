"""The embedded runtime writes its analytics to chDB inline; lazy catch-up builds the same tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import DATABASE_ENV, DSN_ENV, ClickHouseTarget
from engram.projections.clickhouse_queries import resolve_query, run_query
from engram.projections.clickhouse_runtime import LogAnalytics, analytics_mode
from engram.recall.service import RecallRequest
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.base import derive_id
from engram.schemas.events import FeedbackGiven
from tests.drivers import T0
from tests.generators import conversations

TURNS = conversations(seed=23, turns=400)


def _runtime(folder: Path, target: ClickHouseTarget, database: str, monkeypatch: pytest.MonkeyPatch,
             **kw: object) -> EmbeddedRuntime:
    monkeypatch.setenv(DSN_ENV, target.dsn)
    monkeypatch.setenv(DATABASE_ENV, database)
    return EmbeddedRuntime(folder, **kw)  # type: ignore[arg-type]


def _log_types(runtime: EmbeddedRuntime) -> dict[str, int]:
    return dict(runtime.db.execute("SELECT type, COUNT(*) FROM log_events GROUP BY type").fetchall())


def _analytics_types(projector: ClickHouseProjector) -> dict[str, int]:
    return dict(projector.query("SELECT type, count() FROM event_log FINAL GROUP BY type").result_rows)


def test_analytics_are_off_by_default_and_the_mode_is_validated(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ENGRAM_ANALYTICS", raising=False)
    assert analytics_mode() == "off"
    assert analytics_mode("chdb") == analytics_mode("on") == "chdb"
    with pytest.raises(ValueError):
        analytics_mode("sometimes")
    with EmbeddedRuntime(tmp_path / "d") as runtime:
        assert runtime.analytics is None


def test_inline_analytics_cover_every_logged_event(tmp_path: Path, ch_target, monkeypatch) -> None:
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS)
        assert rt.analytics is not None
        projector = rt.analytics.projector
        assert _analytics_types(projector) == _log_types(rt)
        assert rt.analytics.cursor() == rt.log.cursor("pipeline") == rt.log.last_seq()
        assert projector.table_counts()["turns"] == len(TURNS)
        before = projector.state_hash()
        rt.ingest(TURNS)  # the client retries: everything is a duplicate
        assert projector.state_hash() == before
        assert rt.analytics.rebuild() == before


def test_inline_and_lazy_catch_up_build_identical_analytics(tmp_path: Path, ch_target, monkeypatch) -> None:
    with _runtime(tmp_path / "inline", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS, now=T0)
        inline = rt.analytics.state_hash()  # type: ignore[union-attr]
    lazy_db = ch_target.database + "_lazy"
    with _runtime(tmp_path / "lazy", ch_target, lazy_db, monkeypatch, analytics="off") as rt:
        rt.ingest(TURNS, now=T0)
        analytics = LogAnalytics.open(tmp_path / "lazy", rt.log)
        try:
            assert analytics.catch_up() == rt.log.count()
            assert analytics.catch_up() == 0  # the cursor remembers
            assert analytics.state_hash() == inline
        finally:
            analytics.projector.client.command(f"DROP DATABASE `{lazy_db}`")
            analytics.close()


def test_turning_analytics_on_later_catches_up_on_open(tmp_path: Path, ch_target, monkeypatch) -> None:
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="off") as rt:
        rt.ingest(TURNS[:200])
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        assert rt.analytics is not None and rt.analytics.cursor() == rt.log.cursor("pipeline") > 0
        rt.ingest(TURNS[200:])
        assert _analytics_types(rt.analytics.projector) == _log_types(rt)
        incremental = rt.analytics.state_hash()
        assert rt.analytics.rebuild() == incremental


def test_a_crash_mid_batch_leaves_analytics_equal_to_an_uninterrupted_run(tmp_path: Path, ch_target,
                                                                          monkeypatch) -> None:
    with _runtime(tmp_path / "clean", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS, now=T0)
        expected = rt.analytics.state_hash()  # type: ignore[union-attr]
    crash_db = ch_target.database + "_crash"
    crashing = _runtime(tmp_path / "crash", ch_target, crash_db, monkeypatch, analytics="chdb", batch_size=50)
    real_apply, calls = crashing.projector.apply, Counter[str]()

    def flaky_apply(event, position):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 137:
            raise RuntimeError("power cut")
        real_apply(event, position)

    crashing.projector.apply = flaky_apply  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        crashing.ingest(TURNS, now=T0)
    crashing.close()
    with _runtime(tmp_path / "crash", ch_target, crash_db, monkeypatch, analytics="chdb") as resumed:
        resumed.ingest(TURNS, now=T0)
        assert resumed.analytics.state_hash() == expected  # type: ignore[union-attr]
        resumed.analytics.projector.client.command(f"DROP DATABASE `{crash_db}`")  # type: ignore[union-attr]


def test_recalls_and_feedback_reach_the_analytics(tmp_path: Path, ch_target, monkeypatch) -> None:
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS[:120])
        tenant, user = TURNS[0].tenant, TURNS[0].user
        result = rt.recall(RecallRequest(tenant, user, "a1", TURNS[0].session, "what do I like?", T0))
        served = result.observation
        rt.append([FeedbackGiven(event_id=derive_id(served.event_id, "fb", 0), occurred_at=T0, tenant_id=tenant,
                                 user_id=user, recall_id=served.recall_id, rating=2, reason="outdated")])
        row = rt.analytics.projector.query(  # type: ignore[union-attr]
            "SELECT injected_count, long_term_count, feedback_rating, feedback_reason FROM recall_observations "
            "WHERE recall_id = {r:String}", {"r": served.recall_id}).result_rows
        assert row == [(served.injected_count, served.long_term_count, 2, "outdated")]


def test_lineage_query_matches_the_lineage_read_from_the_log(tmp_path: Path, ch_target, monkeypatch) -> None:
    from engram.runtime.lineage import memory_lineage

    sql = resolve_query("memory_lineage").read_text()
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS)
        projector = rt.analytics.projector  # type: ignore[union-attr]
        picked = projector.query("SELECT tenant_id, user_id, memory_id FROM memory_changes FINAL "
                                 "GROUP BY tenant_id, user_id, memory_id HAVING count() >= 2 "
                                 "ORDER BY count() DESC, memory_id LIMIT 5").result_rows
        assert picked
        for tenant, user, memory_id in picked:
            rows = run_query(projector.client, sql, {"tenant": tenant, "user": user, "memory_id": memory_id})
            steps = memory_lineage(rt.log, tenant, user, memory_id)
            got = [(r["change_event_id"], r["turn_event_id"], r["turn_content"]) for r in rows.as_dicts()]
            want = [(s.change.event_id, t["event_id"], t["content"])
                    for s in steps for t in (s.as_dict()["turns"] or [{"event_id": "", "content": ""}])]
            assert got == want


def test_growth_query_ends_at_the_active_memories_of_the_store(tmp_path: Path, ch_target, monkeypatch) -> None:
    with _runtime(tmp_path / "d", ch_target, ch_target.database, monkeypatch, analytics="chdb") as rt:
        rt.ingest(TURNS)
        rows = run_query(rt.analytics.projector.client,  # type: ignore[union-attr]
                         resolve_query("memory_growth_by_type").read_text()).as_dicts()
        last = {(r["tenant_id"], r["memory_type"]): r["active_total"] for r in rows}
        owners = {(t.tenant, t.user) for t in TURNS}
        store = Counter((m.tenant_id, m.type.value) for o in owners for m in rt.store.list_memories(*o))
        assert {k: v for k, v in last.items() if v} == dict(store)
        created = sum(r["created"] for r in rows)
        assert created == rt.log.count(("MemoryChanged",)) - sum(
            1 for _, e in rt.log.scan(types=("MemoryChanged",)) if e.change != "created")  # type: ignore[attr-defined]
