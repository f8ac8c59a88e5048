"""The distributed benchmarks run end to end on a tiny size and print well-formed results (no timing asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(bootstrap: str, *args: str) -> list[dict]:  # type: ignore[type-arg]
    env = {**os.environ, "ENGRAM_KAFKA_BOOTSTRAP": bootstrap,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run([sys.executable, "-m", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_the_pipeline_benchmark_reports_throughput_and_freshness(kafka_bootstrap: str) -> None:
    lines = _run(kafka_bootstrap, "bench.distributed_pipeline", "--workers", "1", "--backlog", "300", "--rates",
                 "100", "--step-seconds", "2", "--freshness-rate", "100", "--freshness-seconds", "3")
    kinds = [line["kind"] for line in lines]
    assert kinds == ["distributed_backlog", "distributed_sustained", "distributed_freshness", "distributed_summary"]
    assert lines[0]["turns_per_s"] > 0 and lines[2]["turns_with_changes"] > 0


def test_the_producer_benchmark_reports_call_latency(kafka_bootstrap: str) -> None:
    lines = _run(kafka_bootstrap, "bench.distributed_producer", "--seconds", "1", "--repeat", "1")
    summary = lines[-1]
    assert summary["kind"] == "producer_summary" and summary["sdk_median_p99_ms"] > 0
    assert summary["sdk_failed"] == 0 and summary["sdk_dropped"] == 0


def test_the_kafka_ceiling_benchmark_reports_every_mode(kafka_bootstrap: str) -> None:
    lines = _run(kafka_bootstrap, "bench.kafka_ceiling", "--records", "200", "--repeat", "1")
    runs = [line for line in lines if line["kind"] == "kafka_ceiling"]
    summaries = {line["mode"]: line for line in lines if line["kind"] == "kafka_ceiling_summary"}
    assert [r["mode"] for r in runs] == ["produce", "consume", "consume_json", "aiokafka", "faust", "faust_produce",
                                         "faust_two_agents"]
    assert all(r["records"] >= 200 and r["records_per_s"] > 0 and r["cpu_us_per_record"] > 0 for r in runs)
    assert set(summaries) == {r["mode"] for r in runs} and lines[0]["value_bytes_median"] > 100
