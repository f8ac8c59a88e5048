"""Acceptance case 1 (tests/golden) inside `engram worker` on the distributed runtime, with a real model.

The worker process builds its processor context from the ENGRAM_LLM_* it
inherits (as a deployment would); judge and summaries are off to keep the
run short, so only the extraction goes to the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.llm.settings import LLMSettings
from engram.schemas.events import LLMCallRecorded, MemoryProposed
from engram.schemas.memory import MemoryType
from tests.drivers import user_turns
from tests.services import WeaviateEndpoint, import_client

from .test_golden_real_llm import CASE1

import_client("confluent_kafka", "kafka")
import_client("weaviate", "weaviate")

from tests.distributed_driver import Deployment, DistributedDriver  # noqa: E402

pytestmark = pytest.mark.real_llm


@pytest.fixture
def real_worker(kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path,
                real_settings: LLMSettings) -> Iterator[DistributedDriver]:
    env = {"ENGRAM_LLM_MODEL_JUDGE": "off", "ENGRAM_LLM_MODEL_SUMMARIZE": "off"}
    deployment = Deployment(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port, tmp_path, env)
    driver = DistributedDriver(deployment)
    yield driver
    driver.close()


def test_case01_a_worker_extracts_the_three_facts_with_the_real_model(real_worker: DistributedDriver,
                                                                        real_settings: LLMSettings) -> None:
    real_worker.ingest(user_turns(CASE1))
    everything = real_worker.memories("t1", "u1")
    shown = " | ".join(f"{m.type.value}: {m.content}" for m in everything)
    by_type = {t: [m.content for m in everything if m.type == t] for t in MemoryType}
    assert any("java" in c.lower() for c in by_type[MemoryType.USER_PROFILE]), shown
    assert any("跳槽" in c for c in by_type[MemoryType.USER_GOAL]), shown
    assert any(re.search(r"8|八", c) for c in by_type[MemoryType.USER_CONSTRAINT]), shown
    proposed = [e for e in real_worker.events(("MemoryProposed",)) if isinstance(e, MemoryProposed)]
    assert {p.extractor for p in proposed} == {"llm"}
    calls = [e for e in real_worker.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]
    assert [(c.task, c.model, c.outcome) for c in calls] == [("extract", real_settings.extract_model, "ok")]
