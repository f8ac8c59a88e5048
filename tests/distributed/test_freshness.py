"""A recall on the distributed runtime says whether it holds the user's writes (`freshness`).

Real Kafka, a real `engram worker --role all`, real Weaviate: a write that was waited for is reported
current once the check has read the stages' progress; a turn no worker has processed (the worker is
stopped) is reported behind, on the user's partition. The embedded runtime is always current.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Memory
from engram.access.models import RecallFreshness
from engram.distributed.freshness import levels
from engram.schemas.inputs import TurnInput
from engram.schemas import topics as t
from tests.services import WeaviateEndpoint, import_client

pytestmark = [pytest.mark.kafka, pytest.mark.weaviate]
TENANT, USER = "fresh-tenant", "fresh-user"


def test_each_topic_is_checked_after_every_topic_its_writers_read() -> None:
    order = {name: depth for depth, level in enumerate(levels()) for name in level}
    assert order[t.TURNS.name] == order[t.COMMANDS.name] == 0
    assert order[t.TURNS.name] < order[t.CANDIDATES.name] < order[t.MEMORY_CHANGES.name] < order[t.PROFILES.name]
    assert order[t.COMMANDS.name] < order[t.CARDS.name]
    assert t.RECALLS.name not in order and t.LLM_CALLS.name not in order  # recall does not read what they feed


def test_an_embedded_recall_is_current(tmp_path: Path) -> None:
    memory = Memory(data=tmp_path / "data", env={"ENGRAM_RUNTIME": "embedded"})
    try:
        memory.record(USER, "I love kayaking.")
        fresh = memory.recall(USER, "What do I love?").freshness
        assert (fresh.runtime, fresh.current, fresh.behind) == ("embedded", True, 0)
    finally:
        memory.close()


@pytest.fixture
def deployment(kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path) -> Iterator[object]:
    import_client("weaviate", "weaviate")
    from tests.distributed_driver import Deployment

    d = Deployment(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port, tmp_path / "dist")
    yield d
    d.close()


def test_a_recall_says_whether_it_holds_the_users_last_write(deployment: object) -> None:
    from engram.distributed.backend import DistributedBackend
    from engram.distributed.facade import DistributedRuntime

    backend = DistributedBackend(DistributedRuntime(deployment.endpoints, wait_timeout=120.0))  # type: ignore[attr-defined]
    memory = Memory(runtime=backend, tenant=TENANT)
    try:
        memory.record(USER, "I love kayaking.")  # waits until the workers and projectors applied it
        assert backend.freshness.ready(60.0)
        fresh = _until_current(memory)
        assert fresh.runtime == "distributed" and fresh.behind == 0 and fresh.partition is not None
        assert "kayak" in memory.recall(USER, "What do I love?").context.lower()
        out_of_time = backend.freshness.check(TENANT, USER, budget=0.0)  # no time to ask Kafka: cannot tell
        assert (out_of_time.current, out_of_time.behind) == (False, None)

        deployment.worker.stop()  # type: ignore[attr-defined]
        turn = TurnInput(tenant=TENANT, user=USER, agent="assistant", session="default", role="user",
                         message_id="fresh-m-2", content="I also love sailing.")
        backend.runtime.ingest([turn], wait=False)  # acknowledged by Kafka, processed by nobody
        stale = memory.recall(USER, "What do I love?").freshness
        assert not stale.current and stale.behind is not None and stale.behind >= 1
        assert stale.partition == fresh.partition
    finally:
        backend.runtime.store.drop()
        memory.close()


def _until_current(memory: Memory, attempts: int = 100) -> RecallFreshness:
    """The first recall that says it is current (the check reads the stages' progress as it lands)."""
    fresh = memory.recall(USER, "What do I love?").freshness
    for _ in range(attempts):
        if fresh.current:
            return fresh
        time.sleep(0.2)
        fresh = memory.recall(USER, "What do I love?").freshness
    raise AssertionError(f"never current: {fresh}")
