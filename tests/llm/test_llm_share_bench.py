"""bench/llm_share.py runs at a tiny size and its numbers are consistent with the event log."""

from __future__ import annotations

import pytest

from bench.llm_share import measure

pytestmark = pytest.mark.llm


def test_the_share_benchmark_counts_decisions_and_calls() -> None:
    record = measure(300, seed=3, model="topics")
    assert record["requests_received"] == record["llm_calls"] > 0
    assert record["outcomes"] == {"ok": record["llm_calls"]}
    assert 0 < record["decisions_needing_llm"] <= record["merge_decisions"]
    assert record["llm_decision_share"] <= 0.20
    per_task = record["calls_per_100_turns_by_task"]
    assert per_task["extract"] > 0 and round(sum(per_task.values()), 0) == round(record["llm_calls_per_100_turns"], 0)
