"""Each shipped analyst query against seeded events, with answers computed independently in Python."""

from __future__ import annotations

from statistics import mean

import pytest

from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_queries import QueryResult, bind, resolve_query, run_query, shipped_queries

from .seed import expected_growth, percentile, seed_changes, seed_recalls

ANALYST_QUESTIONS = {"recall_latency_p95_by_agent", "average_relevance", "enabled_not_injected_share",
                  "bad_feedback_reasons", "memory_growth_by_type", "memory_lineage", "erasures"}


def run(projector: ClickHouseProjector, name: str, **params: str) -> QueryResult:
    return run_query(projector.client, resolve_query(name).read_text(), params)


@pytest.fixture()
def recalls(projector: ClickHouseProjector):
    seeded = seed_recalls()
    projector.apply_all(seeded.events)
    projector.flush()
    projector.apply_all(seeded.events[::3])  # a redelivery must not change any answer
    projector.flush()
    return seeded


def test_one_shipped_query_per_spec_question() -> None:
    assert set(shipped_queries()) == ANALYST_QUESTIONS


def test_p95_recall_latency_per_agent(projector: ClickHouseProjector, recalls) -> None:
    rows = run(projector, "recall_latency_p95_by_agent").as_dicts()
    assert [r["agent_id"] for r in rows] == sorted(recalls.totals)
    for row in rows:
        totals = recalls.totals[row["agent_id"]]
        assert row["recalls"] == len(totals)
        assert row["p95_total_ms"] == pytest.approx(percentile(totals, 0.95), abs=1e-3)
        assert row["p95_retrieval_ms"] == pytest.approx(percentile(recalls.retrievals[row["agent_id"]], 0.95),
                                                        abs=1e-3)
        assert row["avg_total_ms"] == pytest.approx(mean(totals), abs=1e-3)


def test_average_relevance(projector: ClickHouseProjector, recalls) -> None:
    rows = run(projector, "average_relevance").as_dicts()
    assert {r["agent_id"] for r in rows} == set(recalls.relevance)
    for row in rows:
        pairs = recalls.relevance[row["agent_id"]]
        assert row["recalls_with_memories"] == len(pairs)
        assert row["avg_relevance"] == pytest.approx(mean(a for a, _ in pairs), abs=1e-6)
        assert row["avg_top_relevance"] == pytest.approx(mean(t for _, t in pairs), abs=1e-6)


def test_share_of_enabled_recalls_with_nothing_injected(projector: ClickHouseProjector, recalls) -> None:
    rows = run(projector, "enabled_not_injected_share").as_dicts()
    assert len(rows) == len(recalls.enabled)
    for row in rows:
        agent = row["agent_id"]
        assert (row["enabled_recalls"], row["enabled_not_injected"]) == (recalls.enabled[agent],
                                                                         recalls.enabled_empty[agent])
        assert row["share"] == pytest.approx(recalls.enabled_empty[agent] / recalls.enabled[agent], abs=1e-6)
        assert 0 < row["share"] < 1


def test_bad_feedback_reasons_count_only_the_latest_verdict(projector: ClickHouseProjector, recalls) -> None:
    rows = run(projector, "bad_feedback_reasons").as_dicts()
    got = {(r["agent_id"], r["reason"]): r["bad_recalls"] for r in rows}
    expected = recalls.bad_reasons()
    assert got == expected
    for row in rows:
        agent_total = sum(n for (a, _), n in expected.items() if a == row["agent_id"])
        assert row["share_of_bad"] == pytest.approx(row["bad_recalls"] / agent_total, abs=1e-6)
    ever_bad = {e.recall_id for e in recalls.events if getattr(e, "rating", None) == 2}
    assert len(ever_bad) > sum(expected.values())  # some bad verdicts were later revised


def test_memory_growth_per_type_per_day(projector: ClickHouseProjector) -> None:
    events = seed_changes()
    projector.apply_all(events)
    projector.flush()
    rows = run(projector, "memory_growth_by_type").as_dicts()
    got = {(r["memory_type"], r["day"]): (r["created"], r["active_total"]) for r in rows}
    expected = expected_growth(events)
    assert got == expected
    assert {c.change for c in events} >= {"created", "reinforced", "replaced", "deleted", "discarded"}


def test_lineage_needs_its_parameters() -> None:
    sql = resolve_query("memory_lineage").read_text()
    with pytest.raises(KeyError, match="memory_id"):
        bind(sql, {"tenant": "t1", "user": "u1"})
    assert bind(sql, {"tenant": "t1", "user": "u1", "memory_id": "m", "extra": "x"}) == {
        "tenant": "t1", "user": "u1", "memory_id": "m"}
