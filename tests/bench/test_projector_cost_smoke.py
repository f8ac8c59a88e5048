"""The projector CPU benchmark runs at a tiny size on the real Weaviate (no timing asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

REPO = Path(__file__).resolve().parents[2]


def test_the_projector_cost_benchmark_projects_the_same_state_every_run(weaviate_endpoint: WeaviateEndpoint) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run(
        [sys.executable, "-m", "bench.projector_cost", "--turns", "60", "--repeat", "2", "--batch", "50",
         "--weaviate-url", weaviate_endpoint.url, "--weaviate-grpc-port", str(weaviate_endpoint.grpc_port)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    runs, summary = lines[:-1], lines[-1]
    assert len(runs) == 2 and summary["summary"] is True
    assert summary["turns"] == 60 and summary["records"] > summary["turns"]  # memories, summaries... too
    assert len(summary["state_hashes"]) == 1  # both runs projected the same memory
    assert all(r["cpu_s"] > 0 and r["decode_cpu_s"] > 0 and r["flush_cpu_s"] > 0 for r in runs)
    assert summary["median_cpu_s_per_1000_turns"] > 0 and "load" in summary
