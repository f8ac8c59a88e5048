"""The ClickHouse projector: one row per event and table, idempotent, and never a secret."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_rows import rows_for_all

from .samples import API_KEY, EMAIL, LEAKY, PASSWORD, SECRETS, every_kind
from .seed import seed_changes, seed_recalls

FACT_TABLES = {"turns": 1, "skipped_turns": 1, "guard_audit": 1, "memory_proposals": 1, "memory_changes": 1,
               "summary_snapshots": 1, "recalls": 1, "feedback": 1, "llm_calls": 1, "dead_letters": 1}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def test_every_kind_of_event_lands_in_its_table_once(projector: ClickHouseProjector) -> None:
    events = every_kind()
    projector.apply_all(events)
    projector.flush()
    counts = projector.table_counts()
    assert counts["event_log"] == len(events)
    for table, n in FACT_TABLES.items():
        assert counts[table] == n, table


def test_no_secret_reaches_any_analytics_row(projector: ClickHouseProjector) -> None:
    projector.apply_all(every_kind())
    projector.flush()
    dump = projector.dump()
    cells = [s for rows in dump.values() for s in _strings(rows)]
    assert cells
    for secret in SECRETS:
        assert not [c for c in cells if secret in c], secret
    content, redacted, meta = projector.client.query("SELECT content, redacted, metadata FROM turns").result_rows[0]
    assert redacted and "[PHONE]" in content and "[EMAIL]" in content and "[API_KEY]" in content
    assert meta["note"] == "my password is [PASSWORD]" and meta["k"] == "v"
    raw, chars = projector.client.query("SELECT raw, raw_chars FROM dead_letters").result_rows[0]
    assert "[PASSWORD]" in raw and chars == len(LEAKY)


def test_llm_call_and_recall_rows_keep_every_field(projector: ClickHouseProjector) -> None:
    projector.apply_all(every_kind())
    projector.flush()
    call = projector.query("SELECT model, task, attempt, outcome, tokens_in, tokens_out, latency_ms, "
                           "dropped_items, processor FROM llm_calls").result_rows[0]
    assert call == ("qwen-plus", "extract", 2, "retried", 120, 30, 812.5, 1, "extract")
    recall = projector.query("SELECT recall_id, memory_enabled, memory_injected, retrieved_count, injected_count, "
                             "retrieved_ids, retrieval_latency_ms, context_build_latency_ms, recent_message_count, "
                             "long_term_count, summary_present, top_relevance, avg_relevance, feedback_rating, "
                             "feedback_reason FROM recall_observations").result_rows[0]
    assert recall[:13] == ("r1", True, True, 2, 1, ["mem-1", "x"], 1.5, 0.25, 4, 1, True, 0.9, 0.9)
    assert recall[13] == 2 and PASSWORD not in recall[14] and EMAIL not in recall[14]


def test_memory_change_keeps_before_and_after(projector: ClickHouseProjector) -> None:
    events = seed_changes()
    projector.apply_all(events)
    projector.flush()
    replaced = next(e for e in events if e.change == "replaced")
    row = projector.query(
        "SELECT before_status, after_status, before_version, after_version, before_content, after_content "
        "FROM memory_changes FINAL WHERE event_id = {id:String}", {"id": replaced.event_id}).result_rows[0]
    assert replaced.before is not None and replaced.after is not None
    assert row == ("active", "replaced", replaced.before.version, replaced.after.version,
                   replaced.before.content, replaced.after.content)


def test_applying_the_same_events_twice_changes_no_answer(projector: ClickHouseProjector) -> None:
    events = [*every_kind(), *seed_recalls(60).events, *seed_changes(2)]
    projector.apply_all(events)
    projector.flush()
    once_hash, once_dump = projector.state_hash(), projector.dump()
    for chunk in (events[::2], events[1::2], events[:7]):  # redelivered in other batches
        projector.apply_all(chunk)
        projector.flush()
    assert projector.state_hash() == once_hash
    assert projector.dump() == once_dump
    raw = projector.client.command("SELECT count() FROM event_log")
    assert int(raw) >= len(events)  # duplicates may sit unmerged; FINAL hides them


def test_merge_decisions_join_the_candidate_behind_each_change(projector: ClickHouseProjector) -> None:
    projector.apply_all(every_kind())
    projector.flush()
    rows = projector.query("SELECT relation, judge, candidate_content, memory_id FROM merge_decisions").result_rows
    assert rows == [("new", "rule", rows[0][2], "mem-1")]
    assert "[API_KEY]" in rows[0][2] and API_KEY not in rows[0][2]


def test_discard_forgets_buffered_rows_and_flush_records_the_cursor(projector: ClickHouseProjector) -> None:
    projector.apply_all(every_kind())
    assert projector.pending == len(every_kind())
    projector.discard()
    assert projector.flush(cursor=41, source="log-a") == 0
    projector.flush(cursor=7, source="log-a")  # an older cursor never moves it back
    assert projector.cursor("log-a") == 41
    assert projector.cursor("log-b") == 0
    assert sum(projector.table_counts().values()) == 0


def test_rows_are_pure_functions_of_the_event() -> None:
    events = every_kind()
    assert rows_for_all(events) == rows_for_all(list(events))
