"""The recall deadline over HTTP: a blocked store read is missed, the rest is served (recall/deadline.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engram.recall.deadline import PARTS
from tests.unit.test_recall_deadline import BlockingStore

from .conftest import Deployment
from .test_http_api import _recall, _user_with_facts

SUMMARY_FACTS = [f"I like fact number {i} about tea and hiking" for i in range(12)]


@contextmanager
def _blocked(d: Deployment, *reads: str) -> Iterator[BlockingStore]:
    runtime = d.backend.runtime
    real = runtime.reader
    store = BlockingStore(real, set(reads))
    runtime.reader = store  # type: ignore[assignment]
    try:
        yield store
    finally:
        runtime.reader = real
        store.release.set()


def _counters(d: Deployment) -> dict[str, int]:
    return dict(d.http(d.admin_key).get("/v1/metrics").json()["counters"])


def test_a_recall_past_its_deadline_serves_the_ready_parts_and_names_the_missed(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d, SUMMARY_FACTS)
    full = _recall(d, user, "What tea do I like?").json()
    assert full["missed"] == [] and not full["deadline_exceeded"] and not full["degraded"]
    assert {i["kind"] for i in full["items"]} >= {"memory", "summary"} and full["recent"]
    before = _counters(d)
    with _blocked(d, "latest_summary") as store:
        body = _recall(d, user, "What tea do I like?", deadline_ms=3000).json()
        assert store.finished == []
    # the parts read on their own connections: only the blocked one is missed
    assert body["deadline_exceeded"] and body["degraded"] and body["missed"] == ["summary"]
    assert "summary" not in {i["kind"] for i in body["items"]}
    assert all(i in full["items"] for i in body["items"])
    assert body["recent"] == full["recent"]
    after = _counters(d)
    assert after["recall.missed.summary"] == before.get("recall.missed.summary", 0) + 1
    assert after.get("recall.missed.memories", 0) == before.get("recall.missed.memories", 0)


def test_a_busy_writer_does_not_hold_up_a_recall(deployment: Deployment) -> None:
    """Readers never take the writer's lock: a recall while the writer is busy is served in full."""
    d = deployment
    user = _user_with_facts(d)
    full = _recall(d, user, "What tea do I like?").json()
    with d.backend.exclusive():  # the writer is busy (an ingest, a forget, a replay)
        body = _recall(d, user, "What tea do I like?", deadline_ms=3000).json()
        search = d.as_a().post("/v1/search", json={"tenant": d.tenant_a, "user": user, "query": "tea"})
        listed = d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user})
    assert not body["degraded"] and body["missed"] == [] and body["injected"]
    assert [i["item_id"] for i in body["items"]] == [i["item_id"] for i in full["items"]]
    assert search.status_code == 200 and search.json()["results"]
    assert listed.status_code == 200 and listed.json()
    hurried = _recall(d, user, "What tea do I like?", deadline_ms=0.001).json()
    assert hurried["degraded"] and hurried["missed"] == list(PARTS)
