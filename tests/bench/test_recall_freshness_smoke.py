"""The end-to-end freshness benchmark runs at a tiny size on real Kafka and Weaviate (no timing asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.services import WeaviateEndpoint, import_client

import_client("confluent_kafka", "kafka")
import_client("faust", "kafka")
import_client("weaviate", "weaviate")

REPO = Path(__file__).resolve().parents[2]


def test_the_freshness_benchmark_sees_its_probes_through_recall(kafka_bootstrap: str,
                                                                 weaviate_endpoint: WeaviateEndpoint) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run(
        [sys.executable, "-m", "bench.recall_freshness", "--rate", "50", "--seconds", "3", "--warmup", "100",
         "--bootstrap", kafka_bootstrap, "--weaviate-url", weaviate_endpoint.url,
         "--weaviate-grpc-port", str(weaviate_endpoint.grpc_port)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [line["kind"] for line in lines] == ["recall_freshness"]
    result = lines[0]
    assert result["probes"] > 0 and result["probes_seen"] > 0
    assert result["probes_seen"] + result["probes_not_seen"] == result["probes"]
    assert result["seen_p50_ms"] > 0 and result["background_queued"] == result["background_turns"] == 150
    assert result["machine"]["cores"] >= 1
    assert "p95" in done.stdout and "machine:" in done.stdout
