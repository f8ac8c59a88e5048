"""Zero loss under scale-out, on the real broker: three `--role all` workers on one prefix, SIGKILLed by pid
and joining while turns arrive, end with the embedded run's derived events, memory fold and projected
memories (ids, contents, statuses, source counts and versions of every user's memories in Weaviate).

The bounded CI form of `python -m bench.chaos` (which runs 20,000 turns, several times).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.services import import_client

import_client("confluent_kafka", "kafka")
import_client("faust", "kafka")
import_client("weaviate", "weaviate")

from bench.chaos import Endpoints, run_once  # noqa: E402
from tests.services import WeaviateEndpoint  # noqa: E402


@pytest.mark.slow
@pytest.mark.kafka
@pytest.mark.weaviate
def test_workers_killed_and_joining_on_one_prefix_end_equal_to_the_embedded_run(
        kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path) -> None:
    endpoints = Endpoints(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port)
    result = run_once(endpoints, turns=3000, workers=3, seed=1616, rate=150.0, every=3.0, folder=tmp_path,
                      timeout=240.0)
    print(result)
    assert result["kills"] >= 2 and result["joins"] >= 1, result
    assert result["diffs"] == {}, result
    assert result["actual"]["memory_changes"] > 1000 and result["actual"]["reinforcements"] > 100
