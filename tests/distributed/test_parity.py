"""Embedded parity: the same generated conversations through both runtimes derive the same state."""

from __future__ import annotations

from pathlib import Path

from engram.distributed.readback import fold_memories
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import SummarySnapshotted
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import as_dicts, edge_events, mismatch

EDGE_TYPES = ("TurnRecorded", "SummaryRequested")


def _embedded(events: list, folder: Path) -> dict:  # type: ignore[type-arg]
    with EmbeddedRuntime(folder) as runtime:
        runtime.append(events)
        return {e.event_id: e for _, e in runtime.log.scan() if e.type not in EDGE_TYPES}


def _latest_summaries(events: dict) -> dict:  # type: ignore[type-arg]
    latest: dict[tuple[str, str, str], SummarySnapshotted] = {}
    for e in events.values():
        if isinstance(e, SummarySnapshotted):
            key = (e.tenant_id, e.user_id, e.session_id)
            if key not in latest or latest[key].version < e.version:
                latest[key] = e
    return {k: v.model_dump(mode="json") for k, v in latest.items()}


def test_kafka_workers_derive_exactly_what_the_embedded_runtime_derives(cluster: Cluster, tmp_path: Path) -> None:
    events = edge_events(seed=31, turns=400, users=4) + edge_events(seed=32, turns=300, users=5, every=5)
    embedded = _embedded(events, tmp_path / "embedded")
    cluster.produce(events)
    cluster.worker().start()
    cluster.wait_idle()
    kafka = cluster.derived()
    assert mismatch(embedded, kafka) == "", cluster.logs()
    assert as_dicts(embedded) == as_dicts(kafka)
    assert fold_memories(embedded.values()) == fold_memories(kafka.values())
    assert _latest_summaries(embedded) == _latest_summaries(kafka)
    assert sum(1 for e in kafka.values() if e.type == "MemoryChanged") > 100
    assert any(e.type == "SummarySnapshotted" for e in kafka.values())
    assert any(e.type == "ProfileChanged" for e in kafka.values())  # the profile stage runs on the workers too
