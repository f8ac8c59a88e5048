"""bench.access_load runs at a tiny size and prints a well-formed result (no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_access_load_test_reports_percentiles_and_errors() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "bench.access_load", "--runtime", "embedded", "--clients", "3",
                           "--rounds", "4"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    [result] = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert (result["recalls"], result["records"], result["errors"]) == (12, 12, {})
    assert result["recall_p50_ms"] <= result["recall_p95_ms"] <= result["recall_p99_ms"]
    assert result["new_session_recalls"] == 6  # rounds 0 and 3 of each client open a new session
