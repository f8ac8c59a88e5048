"""The LLM path inside `engram worker`: a worker configured by ENGRAM_LLM_* against the scripted server.

The other LLM cases build their processor context in-process; here the worker
process builds it from its environment, as a deployment would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.schemas.events import LLMCallRecorded
from tests.drivers import user_turns
from tests.services import WeaviateEndpoint, import_client

from .conftest import EXTRACT
from .models import memories
from .scripted_server import ScriptedServer

import_client("confluent_kafka", "kafka")
import_client("weaviate", "weaviate")

from tests.distributed_driver import Deployment, DistributedDriver  # noqa: E402

pytestmark = pytest.mark.llm


@pytest.fixture
def llm_worker(kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path,
               llm_server: ScriptedServer) -> Iterator[DistributedDriver]:
    env = {"ENGRAM_LLM_BASE_URL": llm_server.base_url, "ENGRAM_LLM_API_KEY": "test-key",
           "ENGRAM_LLM_MODEL_EXTRACT": EXTRACT, "ENGRAM_LLM_MODEL_JUDGE": "off",
           "ENGRAM_LLM_MODEL_SUMMARIZE": "off", "ENGRAM_LLM_TIMEOUT_S": "5", "ENGRAM_LLM_RETRIES": "0"}
    deployment = Deployment(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port, tmp_path, env)
    driver = DistributedDriver(deployment)
    yield driver
    driver.close()


def test_a_worker_extracts_with_the_model_its_environment_names(llm_worker: DistributedDriver,
                                                                llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "user_preference", "content": "用户喜欢用Java写后端", "confidence": 0.9, "topic": "Java"}))
    llm_worker.ingest(user_turns("我平时最喜欢用Java写后端服务"))
    assert [m.content for m in llm_worker.memories("t1", "u1")] == ["用户喜欢用Java写后端"]
    [request] = llm_server.requests_for(EXTRACT)
    assert "我平时最喜欢用Java写后端服务" in request.prompt
    calls = [e for e in llm_worker.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]
    assert [(c.task, c.model, c.outcome) for c in calls] == [("extract", EXTRACT, "ok")], calls
