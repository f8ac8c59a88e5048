"""Dropping and rebuilding the distributed runtime's projections from the Kafka topics.

`engram replay --projection weaviate|clickhouse|all` with ENGRAM_RUNTIME=distributed.
Every topic of the namespace is read from its beginning; partitions are merged
by record timestamp, each partition kept in offset order, so a user's turns,
commands and derived events are applied in the order they were written. Run
it while the projectors are idle (or stopped): a projector writing during the
rebuild would race the drop.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass

from engram.core.embedding import Embedder
from engram.core.ports import Progress
from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import ClickHouseTarget
from engram.projections.clickhouse_shared import shared_connection
from engram.projections.projector import PROJECTED_TYPES, CurrentMemoryProjector
from engram.projections.weaviate_store import WeaviateStore
from engram.schemas import topics as t

from engram.schemas.events import ErasureRecorded

from .erasure import AnalyticsErasures
from .readback import Record, iter_topic
from .topics import Namespace

@dataclass(frozen=True)
class RebuildReport:
    records: int
    before: str
    after: str


def merged_records(bootstrap: str, ns: Namespace, names: tuple[str, ...] | None = None) -> Iterator[Record]:
    """Every record of the namespace's topics (or of `names`), merged by timestamp, partitions in order."""
    topics = [ns.topic(x) for x in t.CATALOGUE if names is None or x.name in names]
    return heapq.merge(*(iter_topic(bootstrap, topic, timeout=600.0) for topic in topics),
                       key=lambda r: r.timestamp_ms)


def rebuild_weaviate(bootstrap: str, ns: Namespace, store: WeaviateStore, embedder: Embedder,
                     progress: Progress | None = None) -> RebuildReport:
    before = store.state_hash()
    store.clear()
    projector = CurrentMemoryProjector(store, embedder)
    count = 0
    sources = tuple(x.name for x in t.CATALOGUE if set(x.event_types) & PROJECTED_TYPES)
    for record in merged_records(bootstrap, ns, sources):
        count += 1
        if record.event is not None:
            projector.apply(record.event, record.offset)
        if progress is not None:
            progress(1)
    return RebuildReport(count, before, store.state_hash())


def rebuild_clickhouse(bootstrap: str, ns: Namespace, target: ClickHouseTarget,
                       progress: Progress | None = None) -> RebuildReport:
    with shared_connection(target) as conn:
        projector = ClickHouseProjector(conn)
        projector.create_schema()
        before = projector.state_hash()
        projector.drop_schema()
        projector.create_schema()
        count, erasures = 0, AnalyticsErasures()
        for record in merged_records(bootstrap, ns):
            count += 1
            if record.event is not None:
                projector.apply(record.event)
                if isinstance(record.event, ErasureRecorded):  # applied again where it happened
                    projector.flush()
                erasures.apply(projector, [record.event])
            if progress is not None:
                progress(1)
        projector.flush()
        return RebuildReport(count, before, projector.state_hash())
