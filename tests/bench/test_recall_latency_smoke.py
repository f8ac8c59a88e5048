"""The recall-latency benchmark runs at a tiny size (embedded only) and prints well-formed results.

No timing is asserted beyond sanity: the numbers are positive, ordered and finite.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.recall_latency import main
from engram.core.domains import profile_layer
from bench.recall_latency_data import generate_context, generate_memories, generate_queries


def test_the_data_is_deterministic_distinct_and_mixed() -> None:
    first = generate_memories(7, "bench-n300", "u00001", 300)
    assert first == generate_memories(7, "bench-n300", "u00001", 300)
    assert first != generate_memories(8, "bench-n300", "u00001", 300)
    assert len({r.content for r in first}) == 300
    assert sum(r.memory_id.startswith("p-") and r.layer == "L3" for r in first) == 3
    assert all(r.layer == ("L3" if profile_layer(r.type, r.slot, r.content) else "L1") for r in first)
    assert len({r.type for r in first}) >= 5
    everyone = [r for u in ("u00001", "u00002", "u00003", "u00004") for r in generate_memories(7, "t", u, 200)]
    cjk = sum(any("\u4e00" <= ch <= "\u9fff" for ch in r.content) for r in everyone) / len(everyone)
    assert 0.1 < cjk < 0.9
    ctx = generate_context(7, "t", "u00001")
    assert len(ctx.cards) == 2 and len(ctx.turns) == 10 and ctx.summary.session_id == ctx.turns[0].session_id
    queries = generate_queries(7, "t", ["u00001", "u00002"], 20)
    assert queries == generate_queries(7, "t", ["u00001", "u00002"], 20)
    assert {u for u, _ in queries} <= {"u00001", "u00002"} and all(q.strip() for _, q in queries)


def test_a_tiny_embedded_run_prints_sane_json_and_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--sizes", "20,200", "--users-per-size", "4,2", "--sample-users", "3", "--queries", "25",
                 "--repeats", "2", "--warmup", "3", "--no-weaviate", "--no-mem0", "--quiet",
                 "--workdir", str(tmp_path / "work")])
    assert code == 0
    out = capsys.readouterr().out
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    plan = [r for r in records if r["record"] == "plan"]
    loads = [r for r in records if r["record"] == "load"]
    latency = [r for r in records if r["record"] == "latency"]
    assert len(plan) == 1 and plan[0]["machine"]["cores"] >= 1
    assert [g["memories"] for g in plan[0]["groups"]] == [80, 400]
    assert [(r["store"], r["memories_per_user"], r["memories"]) for r in loads] == [
        ("embedded", 20, 80), ("embedded", 200, 400)]
    assert [(r["store"], r["memories_per_user"]) for r in latency] == [("embedded", 20), ("embedded", 200)]
    for r in latency:
        assert r["bench"] == "recall_latency" and r["users_sampled"] == min(3, r["users"])
        assert r["queries"] == 25 and r["repeats"] == 2 and len(r["per_repeat"]) == 2
        assert 0 < r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"] and math.isfinite(r["p99_ms"])
        assert r["p99_ms"] < 5_000
        assert r["avg_items"] > 0 and r["deadline_exceeded"] == 0
        assert r["first_recall_ms_p50"] > 0
        assert r["target_p95_ms"] is None and r["meets_target"] is None  # the target applies at 10,000/user
    assert "p95 vs embedded" in out and "machine:" in out
