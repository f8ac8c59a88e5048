"""Recall-latency result records and the printed table (bench/recall_latency.py measures)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.common import median, table

TARGET_SIZE = 10_000
TARGETS_P95_MS = {"embedded": 5.0, "weaviate": 25.0}
MODEL_EMBEDDER_TARGET_P95_MS = 15.0
"""With a model embedder (USE) the embedded p95 target is 15 ms, query embedding included: the model's own
encoding of the question takes most of it."""


@dataclass
class Group:
    size: int
    users: int
    tenant: str
    sampled: list[str]
    queries: list[tuple[str, str]]
    warmup: list[tuple[str, str]]


@dataclass
class Series:
    """Timings of one store on one group: wall clock, and the process CPU time of the same calls."""

    repeats: list[list[float]] = field(default_factory=list)
    cpu_repeats: list[list[float]] = field(default_factory=list)
    first_recall_ms: list[float] = field(default_factory=list)
    items: list[int] = field(default_factory=list)
    exceeded: int = 0


def percentiles(values: list[float], prefix: str = "") -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    stats = {"p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "mean_ms": arr.mean(), "max_ms": arr.max()}
    return {prefix + k: round(float(v), 3) for k, v in stats.items()}


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load averages (other work on the machine shows in the wall-clock tail)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _medians(per_repeat: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(median([p[k] for p in per_repeat]), 3) for k in per_repeat[0]} if per_repeat else {}


def result_records(names: list[str], groups: list[Group], series: dict[tuple[str, int], Series],
                   machine: dict[str, Any], model_embedder: bool = False) -> list[dict[str, Any]]:
    out = []
    for group in groups:
        for name in names:
            s = series[(name, group.size)]
            per_repeat = [percentiles(times) for times in s.repeats]
            cpu = _medians([percentiles(times, "cpu_") for times in s.cpu_repeats])
            rec: dict[str, Any] = {
                "bench": "recall_latency", "record": "latency", "store": name,
                "memories_per_user": group.size, "users": group.users, "users_sampled": len(group.sampled),
                "queries": len(s.repeats[0]), "repeats": len(s.repeats),
                **_medians(per_repeat), **{k: v for k, v in cpu.items() if k != "cpu_max_ms"},
                "per_repeat": per_repeat,
                "first_recall_ms_p50": round(median(s.first_recall_ms), 3) if s.first_recall_ms else None,
                "avg_items": round(sum(s.items) / len(s.items), 2) if s.items else 0.0,
                "deadline_exceeded": s.exceeded,
            }
            target_ms = TARGETS_P95_MS.get(name) if group.size == TARGET_SIZE else None
            if target_ms is not None and name == "embedded" and model_embedder:
                target_ms = MODEL_EMBEDDER_TARGET_P95_MS
            rec["target_p95_ms"] = target_ms
            rec["meets_target"] = None if target_ms is None else rec["p95_ms"] <= target_ms
            rec["meets_target_on_cpu"] = None if target_ms is None else rec["cpu_p95_ms"] <= target_ms
            rec["machine"] = {k: machine[k] for k in ("cores", "memory_gib", "cpu_model")}
            out.append(rec)
    return out


def print_table(results: list[dict[str, Any]]) -> None:
    base = {r["memories_per_user"]: r["p95_ms"] for r in results if r["store"] == "embedded"}
    rows = []
    for r in results:
        ratio = r["p95_ms"] / base[r["memories_per_user"]] if base.get(r["memories_per_user"]) else None
        target = "" if r["target_p95_ms"] is None else (
            f"≤ {r['target_p95_ms']:g} {'ok' if r['meets_target'] else 'MISSED'}")
        cpu = f"{r['cpu_p50_ms']:.2f} / {r['cpu_p95_ms']:.2f}" if "cpu_p50_ms" in r else ""
        rows.append([r["store"], r["memories_per_user"], r["users"], r["users_sampled"],
                     f"{r['queries']}×{r['repeats']}", f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}",
                     f"{r['p99_ms']:.2f}", cpu, "" if ratio is None else f"{ratio:.1f}×", target,
                     "" if r["first_recall_ms_p50"] is None else f"{r['first_recall_ms_p50']:.1f}"])
    print()
    print(table(["store", "mem/user", "users", "queried", "q×rep", "p50 ms", "p95 ms", "p99 ms",
                 "CPU p50 / p95 ms", "p95 vs embedded", "target p95 (10k)", "first recall ms"], rows))
