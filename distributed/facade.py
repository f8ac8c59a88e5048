"""The core CLI on the distributed runtime (`ENGRAM_RUNTIME=distributed`): Kafka in, Weaviate and ClickHouse out.

`DistributedRuntime` offers what the CLI uses of `EmbeddedRuntime` — `ingest`,
`append`, `store`, `recall`, `lineage` — with the work done elsewhere:
turns are produced to Kafka, `engram worker` processes and projects them,
and reads go to Weaviate (current memory, summaries, cards, recent turns) and
ClickHouse (history). `ingest` waits until the workers and projectors have
applied what it produced (`engram.distributed.applied`), unless told not to.

Endpoints come from the environment: ENGRAM_KAFKA_BOOTSTRAP, ENGRAM_KAFKA_PREFIX,
ENGRAM_KAFKA_GENERATION, ENGRAM_WEAVIATE_URL, ENGRAM_WEAVIATE_GRPC_PORT,
ENGRAM_CLICKHOUSE_DSN (default: the data folder's chDB, shared with a worker
on the same data folder through `engram.projections.clickhouse_shared`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engram.core.pii import redact
from engram.core.ports import Progress
from engram.projections.clickhouse_client import ClickHouseTarget, configured_target
from engram.projections.clickhouse_queries import resolve_query, run_query
from engram.projections.clickhouse_shared import shared_connection
from engram.projections.weaviate_store import WeaviateStore
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime_port import IngestReport
from engram.streams.context import default_context
from engram.schemas.base import Event
from engram.schemas.codec import encode
from engram.schemas.events import MemoryChanged, RecallServed, TurnRecorded
from engram.schemas.inputs import Fingerprint, IngestIssue, SummaryTriggers, TurnInput, clamp_warning, screen, \
    to_turn_event
from engram.streams.processor import ProcessorContext

from .applied import AppliedWaiter, SharedWaiter
from .erasure import cipher_for
from .producer import TurnProducer
from .projector import weaviate_prefix
from .topics import Namespace

log = logging.getLogger("engram.distributed.facade")
MAX_RECORD_BYTES = 1_000_000
RECORD_OVERHEAD = 256
"""Bytes a record takes beyond its value and key (headers, framing), rounded up."""
RECALL_COLUMNS = tuple(name for name in RecallServed.model_fields if name not in ("type", "schema_version",
                                                                                 "causation_ids"))
"""The fields of a recall observation that ClickHouse's `recalls` table holds (one column each)."""
SHARED_WAIT_MAX = 20_000
"""Events one wait on the shared waiter may follow; a bulk ingest (a file) waits the round-based way."""
CHECK_CHUNK = 1000
"""Turns looked up in Weaviate per round trip."""

@dataclass(frozen=True)
class Endpoints:
    """Where the distributed runtime lives."""

    bootstrap: str
    namespace: Namespace
    weaviate_url: str
    weaviate_grpc_port: int
    clickhouse: ClickHouseTarget

    @classmethod
    def from_env(cls, data_dir: Path | str, env: Mapping[str, str] | None = None) -> Endpoints:
        e = os.environ if env is None else env
        return cls(
            bootstrap=e.get("ENGRAM_KAFKA_BOOTSTRAP", "127.0.0.1:9092"),
            namespace=Namespace(e.get("ENGRAM_KAFKA_PREFIX", ""), int(e.get("ENGRAM_KAFKA_GENERATION", "0") or 0)),
            weaviate_url=e.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080"),
            weaviate_grpc_port=int(e.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051") or 50051),
            clickhouse=configured_target(data_dir, e.get("ENGRAM_CLICKHOUSE_DSN") or None,
                                         e.get("ENGRAM_CLICKHOUSE_DATABASE") or None),
        )


class DistributedRuntime:
    """Produce to Kafka, wait for the workers, read Weaviate and ClickHouse."""

    def __init__(self, endpoints: Endpoints, ctx: ProcessorContext | None = None,
                 wait_timeout: float = 300.0, max_record_bytes: int | None = None) -> None:
        self.endpoints = endpoints
        self.ctx = ctx or default_context()
        self.wait_timeout = wait_timeout
        self.max_record_bytes = max_record_bytes or int(os.environ.get("ENGRAM_KAFKA_MAX_RECORD_BYTES") or
                                                        MAX_RECORD_BYTES)
        """Largest record `ingest` produces: librdkafka's and the broker's default message.max.bytes."""
        self._store: WeaviateStore | None = None
        self._producer: TurnProducer | None = None
        self.applied: SharedWaiter | None = None
        """The process's one applied-waiter, when a long-lived server set it (else one per wait)."""

    # -- connections (opened on first use) ---------------------------------------------------
    @property
    def store(self) -> WeaviateStore:
        if self._store is None:
            e = self.endpoints
            self._store = WeaviateStore.connect(e.weaviate_url, e.weaviate_grpc_port, self.ctx.embedder.model_id,
                                                weaviate_prefix(e.namespace), cipher_for(e.bootstrap, e.namespace.prefix))
        return self._store

    @property
    def producer(self) -> TurnProducer:
        if self._producer is None:
            self._producer = TurnProducer(self.endpoints.bootstrap, self.endpoints.namespace, summary_checks="off",
                                          config={"message.max.bytes": max(self.max_record_bytes, MAX_RECORD_BYTES)})
        return self._producer

    # -- writes ---------------------------------------------------------------------------------
    def ingest(self, turns: Iterable[TurnInput], now: datetime | None = None, progress: Progress | None = None,
               wait: bool = True) -> IngestReport:
        """Produce turns (plus one summary trigger per touched session, as the embedded runtime does).

        Checked per turn before anything is produced: a record larger than Kafka
        takes (`max_record_bytes`), or a message id recorded before (Weaviate's
        turns) or earlier in this call with other content, is an issue in the
        report and is not produced. A same-content re-send of a turn Weaviate
        already has is a duplicate and is not produced again; re-sends still in
        flight (produced, not yet projected) are left to the workers' id check.
        """
        stamp = now or datetime.now(timezone.utc)
        report = IngestReport(runtime="distributed")
        screening = _Screening(report)
        for index, turn in enumerate(turns):
            event = to_turn_event(turn, stamp)
            report.received += 1
            if (warning := clamp_warning(index, turn, event)) is not None:
                report.issues.append(warning)
            if (too_large := self._too_large(index, event)) is not None:
                report.issues.append(too_large)
            elif screening.add(index, event) >= CHECK_CHUNK:
                screening.run(self._recorded)
            if progress is not None:
                progress(1)
        screening.run(self._recorded)
        report.appended = len(screening.events)
        self.append([*screening.events, *screening.triggers.requests()], wait=wait, report=report)
        return report

    def _too_large(self, index: int, event: TurnRecorded) -> IngestIssue | None:
        size = len(encode(event)) + len(event.partition_key) + RECORD_OVERHEAD
        if size <= self.max_record_bytes:
            return None
        return IngestIssue(index, "too_large", event.message_id,
                           f"the record would be {size:,} bytes, more than Kafka takes ({self.max_record_bytes:,}, "
                           "ENGRAM_KAFKA_MAX_RECORD_BYTES): shorten its content or metadata")

    def _recorded(self, chunk: Sequence[tuple[int, TurnRecorded]]) -> dict[str, Fingerprint]:
        """What Weaviate's turns hold for these turns (role, redacted content), by event id; {} if unreachable."""
        by_tenant: dict[str, dict[tuple[str, str, str], str]] = {}
        for _, e in chunk:
            by_tenant.setdefault(e.tenant_id, {})[(e.user_id, e.session_id, e.message_id)] = e.event_id
        try:
            return {keys[key]: found for tenant, keys in by_tenant.items()
                    for key, found in self.store.recorded_turns(tenant, keys).items()}
        except Exception as exc:  # noqa: BLE001 - the check is best effort; the workers still dedupe by id
            log.warning("could not check re-sent message ids against Weaviate (%s); only this input is checked",
                        str(exc)[:200])
            return {}

    def append(self, events: Sequence[Event], wait: bool = True, report: IngestReport | None = None) -> int:
        """Produce edge events; with `wait`, return once workers and projectors have applied them."""
        marks, queued = self.produce(events)
        if wait:
            seconds, caused = self.wait_caused(marks, [event.event_id for event in events])
            if report is not None:
                report.waited = seconds
                report.changes = [e for e in caused if isinstance(e, MemoryChanged)]
        return queued

    def produce(self, events: Sequence[Event]) -> tuple[dict[tuple[str, int], int], int]:
        """Produce edge events and wait for the broker's acknowledgement; return the marks and the count."""
        producer = self.producer
        before, failed_before = dict(producer.delivered), producer.counters["failed"]
        queued = sum(1 for event in events if producer.record(event))
        left = producer.flush(self.wait_timeout)
        failed = producer.counters["failed"] - failed_before  # delivery failed after librdkafka's own retries
        if left or failed or queued < len(events):
            raise RuntimeError(f"Kafka at {self.endpoints.bootstrap} took {queued - left - failed} of {len(events)} "
                               f"record(s) (producer counters: {dict(producer.counters)})")
        return {tp: end for tp, end in producer.delivered.items() if end != before.get(tp)}, queued

    def wait(self, marks: Mapping[tuple[str, int], int]) -> float:
        return self.wait_caused(marks, ())[0]

    def wait_caused(self, marks: Mapping[tuple[str, int], int], ids: Sequence[str]) -> tuple[float, list[Event]]:
        """Wait until the records below `marks` (events `ids`) and what they derive are applied.

        With the process's shared waiter (`applied`, set by the back end) the answer also lists the
        events they caused; without it, or for a bulk ingest (more than SHARED_WAIT_MAX events), one
        `AppliedWaiter` waits for everything derived so far, and lists nothing.
        """
        if self.applied is not None and len(ids) <= SHARED_WAIT_MAX:
            return self.applied.wait(marks, ids, self.wait_timeout)
        with AppliedWaiter(self.endpoints.bootstrap, self.endpoints.namespace) as waiter:
            return waiter.wait(marks, self.wait_timeout), []

    # -- reads ----------------------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> RecallResult:
        """Assemble the context from Weaviate; the observation goes to the recalls topic (best effort)."""
        result = RecallService(self.store, self.ctx.embedder, self.ctx.config).safe_recall(request)
        if not self.producer.record(result.observation):
            log.warning("recall observation %s not queued", result.observation.recall_id)
        return result

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes back to the L0 turns, from ClickHouse (the shipped memory_lineage query)."""
        sql = resolve_query("memory_lineage").read_text(encoding="utf-8")
        with shared_connection(self.endpoints.clickhouse) as conn:
            result = run_query(conn.client, sql, {"tenant": tenant, "user": user, "memory_id": memory_id})
        return lineage_steps(result.as_dicts())

    def recall_observation(self, tenant: str, user: str, event_id: str) -> RecallServed | None:
        """This user's recall observation by its id, from ClickHouse (whichever process served it), or None.

        Scoped to the tenant and user: the table's key prunes to the tenant, and no query crosses tenants.
        """
        sql = (f"SELECT {', '.join(RECALL_COLUMNS)} FROM recalls FINAL WHERE tenant_id = {{tenant:String}} "
               "AND user_id = {user:String} AND event_id = {id:String} LIMIT 1")
        with shared_connection(self.endpoints.clickhouse) as conn:
            result = run_query(conn.client, sql, {"tenant": tenant, "user": user, "id": event_id})
        rows = result.as_dicts()
        return RecallServed.model_validate(rows[0]) if rows else None

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close()
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> DistributedRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Screening:
    """The turns of one distributed ingest call, screened in chunks for conflicts and projected duplicates."""

    def __init__(self, report: IngestReport) -> None:
        self.report = report
        self.triggers = SummaryTriggers()
        self.events: list[Event] = []
        self._chunk: list[tuple[int, TurnRecorded]] = []
        self._seen: dict[str, Fingerprint] = {}
        self._produced: set[str] = set()

    def add(self, index: int, event: TurnRecorded) -> int:
        self._chunk.append((index, event))
        return len(self._chunk)

    def run(self, recorded_for: Any) -> None:
        recorded = recorded_for(self._chunk) if self._chunk else {}
        accepted, conflicts = screen(self._chunk, recorded, self._seen, _projected)
        self._chunk = []
        self.report.issues += conflicts
        for event in accepted:
            self.triggers.saw(event)
            if event.event_id in recorded or event.event_id in self._produced:
                self.report.duplicates += 1
            else:
                self._produced.add(event.event_id)
                self.events.append(event)


def _projected(event: TurnRecorded) -> Fingerprint:
    """A turn as Weaviate's turns collection holds it (content redacted)."""
    return event.role, redact(event.content).text


def lineage_steps(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """memory_lineage rows (one per change and source turn) -> one dict per change, like LineageStep.as_dict."""
    steps: dict[str, dict[str, Any]] = {}
    for row in rows:
        step = steps.get(row["change_event_id"])
        if step is None:
            step = steps[row["change_event_id"]] = {
                "event_id": row["change_event_id"], "at": _iso(row["at"]), "change": row["change"],
                "relation": row["relation"], "judge": row["judge"], "reason": row["reason"],
                "before": row["before_content"] or None, "after": row["after_content"] or None,
                "status": row["after_status"] or "deleted",
                "candidate": ({"content": row["candidate_content"], "extractor": row["extractor"]}
                              if row.get("candidate_content") else None),
                "turns": [],
            }
        if row.get("turn_event_id"):
            step["turns"].append({
                "event_id": row["turn_event_id"], "message_id": row["turn_message_id"],
                "session_id": row["turn_session_id"], "role": row["turn_role"], "at": _iso(row["turn_at"]),
                "content": row["turn_content"]})
    return list(steps.values())


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
    return str(value)
