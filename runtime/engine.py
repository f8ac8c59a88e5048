"""The embedded runtime: the pure processors driven in-process in log order.

Commit order, per batch, in one SQLite transaction: projection writes and
derived events are appended as each event is handled, then dirty processor
states are flushed, then the cursor moves. A crash anywhere rolls the whole
batch back, so the next run redoes it from the last cursor: effectively
exactly-once in this runtime (the distributed one relies on idempotency).
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from engram.core.ports import Progress
from engram.llm.index_model import ensure_index_model
from engram.projections.clickhouse_runtime import open_analytics
from engram.projections.embedded_reader import EmbeddedReader
from engram.projections.embedded_store import EmbeddedStore
from engram.projections.snapshots import Published, StoreChanges
from engram.projections.projector import PROJECTED_TYPES, CurrentMemoryProjector
from engram.projections.rebuild import rebuild_store
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime_port import GovernReport, IngestReport
from engram.schemas.base import Event, utc
from engram.schemas.events import ForgetRequested, MemoryChanged, TurnRecorded
from engram.schemas.inputs import Fingerprint, IngestIssue, SummaryTriggers, TurnInput, clamp_warning, exact, screen, \
    to_turn_event
from engram.streams.consolidate import UserMemories
from engram.streams.context import default_context
from engram.streams.govern import governance_tick, plan_evictions
from engram.streams.harness import dead_letter
from engram.streams.processor import Processor, ProcessorContext
from engram.streams.topology import build_topology

from .erasure import Eraser, open_cipher
from .lineage import memory_lineage
from .log import EventLog, open_database

log = logging.getLogger("engram.runtime")

PIPELINE = "pipeline"
__all__ = ["EmbeddedRuntime", "GovernReport", "IngestReport", "PIPELINE"]  # the reports live in engram.runtime_port


class EmbeddedRuntime:
    """Event log, processors and the current-memory projection in one process and one file."""

    def __init__(self, data_dir: Path | str, ctx: ProcessorContext | None = None, batch_size: int = 2000,
                 analytics: str | None = None, encryption: bool | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.db = open_database(self.data_dir / "engram.db")
        # user text sealed under its owner's key (keys.db beside the log); forget destroys the key
        self.log = EventLog(self.db, open_cipher(self.data_dir, encryption))
        self.eraser = Eraser(self.log.cipher)
        self.ctx = ctx or default_context()
        self.store = EmbeddedStore(self.db, self.ctx.embedder.dimensions)
        # readers (recall, search, listings) on their own connections, beside the writer (snapshots.py)
        self.published = Published()
        self.reader = EmbeddedReader(self.data_dir / "engram.db", self.ctx.embedder.dimensions, self.published)
        self.projector = CurrentMemoryProjector(self.store, self.ctx.embedder)
        self.batch_size = batch_size
        self.counters: Counter[str] = Counter()
        self._routes: dict[str, list[Processor]] = {}  # type: ignore[type-arg]
        for stage in build_topology():
            for event_type in stage.processor.consumes:
                self._routes.setdefault(event_type, []).append(stage.processor)
        self._states: dict[tuple[str, str], BaseModel | None] = {}
        self._dirty: set[tuple[str, str]] = set()
        # ClickHouse analytics (chDB): inline second projector, or None when off (ENGRAM_ANALYTICS)
        self.analytics = open_analytics(self.data_dir, self.log, analytics, handled=self.log.cursor(PIPELINE))
        self.eraser.recover(self.log, self.log.cursor(PIPELINE))  # a forget cut short by a crash finishes
        # never two embedding models in one index: a changed embedder re-embeds by replay here
        ensure_index_model(self)

    # -- edges -----------------------------------------------------------------
    def ingest(self, turns: Iterable[TurnInput], now: datetime | None = None,
               progress: Progress | None = None) -> IngestReport:
        """Append turns (plus one summary trigger per touched session) and process them.

        A message id already recorded with other content is a conflict: reported
        in `report.issues`, not appended (the first version stays).
        """
        stamp = now or datetime.now(timezone.utc)
        report = IngestReport()
        triggers = SummaryTriggers()
        chunk: list[tuple[int, TurnRecorded]] = []
        for index, turn in enumerate(turns):
            event = to_turn_event(turn, stamp)
            if (warning := clamp_warning(index, turn, event)) is not None:
                report.issues.append(warning)
            chunk.append((index, event))
            if len(chunk) >= self.batch_size:
                self._ingest_chunk(chunk, report, triggers, progress)
                chunk = []
        self._ingest_chunk(chunk, report, triggers, progress)
        self.append(triggers.requests(), report=report)
        return report

    def _ingest_chunk(self, chunk: list[tuple[int, TurnRecorded]], report: IngestReport, triggers: SummaryTriggers,
                      progress: Progress | None) -> None:
        accepted, conflicts = screen(chunk, self._recorded(chunk), {})
        report.issues += conflicts
        for event in accepted:
            triggers.saw(event)
        appended = self.append(accepted, report=report)
        report.received += len(chunk)
        report.appended += appended
        report.duplicates += len(accepted) - appended
        if progress is not None:
            progress(len(chunk))

    def _recorded(self, chunk: list[tuple[int, TurnRecorded]]) -> dict[str, Fingerprint]:
        """What the log holds for these turns' ids (the earlier chunks of this call are in it already)."""
        found = self.log.get_many([event.event_id for _, event in chunk])
        return {event_id: exact(event) for event_id, event in found.items() if isinstance(event, TurnRecorded)}

    def append(self, events: Iterable[Event], process: bool = True, report: IngestReport | None = None) -> int:
        """Append edge events and, unless told not to, process them and all they derive.

        The log is drained first, so after this transaction everything up to
        the last sequence number has been handled and the cursor can move there.
        """
        batch = list(events)
        if not process:
            with self._transaction():
                return len(self.log.append_all(batch))
        self.pump()
        counts: Counter[str] = Counter()
        try:
            with self._transaction():
                appended = self.log.stage(batch)
                self._handle(appended, follow_derived=True, counts=counts)
                self._commit_progress(self.log.last_seq())
        except _ProcessorFailed:
            self._forget_uncommitted()
            with self._transaction():
                appended = self.log.append_all(batch)
            counts.clear()
            self.pump(counts=counts)
        if report is not None:
            report.events.update(counts)
        self._finish_erasures()
        return len(appended)

    def govern(self, as_of: datetime | None = None, *, dry_run: bool = False, tenant: str | None = None,
               user: str | None = None) -> GovernReport:
        """Edge (the governance timer): one GovernanceTick per known user, processed at once.

        The clock is read here, at the edge, only when `as_of` is not given; the
        processors take the time from the ticks. `tenant` / `user` narrow the pass
        to those users; `dry_run` plans the evictions from the stored states and
        appends nothing.
        """
        stamp = utc(as_of) if as_of is not None else datetime.now(timezone.utc)
        self.pump()
        users = [(t, u) for t, u in self.known_users()
                 if (tenant is None or t == tenant) and (user is None or u == user)]
        if dry_run:
            return self._plan_govern(stamp, users)
        start = self.log.last_seq()
        report = GovernReport(stamp, users=len(users))
        report.ticks = self.append([governance_tick(tenant, user, stamp) for tenant, user in users])
        for _, event in self.log.scan(after=start, types=("MemoryChanged",)):
            if isinstance(event, MemoryChanged) and event.relation == "decay":
                report.archived += event.change == "archived"
                report.deleted += event.change == "deleted"
        return report

    def _plan_govern(self, stamp: datetime, users: list[tuple[str, str]]) -> GovernReport:
        """What `govern` would archive and delete, read from the consolidation states; nothing is written."""
        report = GovernReport(stamp, users=len(users), dry_run=True)
        owners = [p for p in self._routes.get("GovernanceTick", ()) if isinstance(p.state_type, type)
                  and issubclass(p.state_type, UserMemories)]
        for tenant, user in users:
            key = governance_tick(tenant, user, stamp).partition_key
            for processor in owners:
                state = self._state(processor, key)
                if not isinstance(state, UserMemories):
                    continue
                for e in plan_evictions(state.memories.values(), state.archived.values(), stamp,
                                        self.ctx.config.governance):
                    report.archived += e.kind == "archived"
                    report.deleted += e.kind == "deleted"
                    report.planned.append({"tenant": tenant, "user": user, "memory_id": e.before.memory_id,
                                           "change": e.kind, "reason": e.reason})
        return report

    def known_users(self) -> list[tuple[str, str]]:
        """(tenant, user) of every user some governed processor holds state for, sorted."""
        names = sorted({p.name for p in self._routes.get("GovernanceTick", ())})
        marks = ",".join("?" * len(names))
        rows = self.db.execute(
            f"SELECT DISTINCT key FROM log_state WHERE processor IN ({marks}) ORDER BY key", names).fetchall()
        return [(tenant, user) for tenant, _, user in (row[0].partition("/") for row in rows)]

    # -- processing ---------------------------------------------------------------
    def pump(self, progress: Progress | None = None, counts: Counter[str] | None = None) -> int:
        """Handle every event after the cursor, in log order, until the log is idle."""
        handled = 0
        counts = counts if counts is not None else Counter()
        while batch := self.log.read(after=self.log.cursor(PIPELINE), limit=self.batch_size):
            try:
                with self._transaction():
                    self._handle(batch, follow_derived=False, counts=counts)
                    self._commit_progress(batch[-1][0])
                self.eraser.commit()
            except _ProcessorFailed:
                self._forget_uncommitted()
                self._handle_one_by_one(batch, counts)
            handled += len(batch)
            if progress is not None:
                progress(len(batch))
        self._finish_erasures()
        return handled

    def _finish_erasures(self) -> None:
        """After a forget committed: destroy keys, log the erasure records, leave no old WAL page."""
        if not self.eraser.pending:
            return
        done = self.eraser.complete()
        if self.analytics is not None:
            for record, request in done:
                self.analytics.erase(record, request.topic_text)
        with self._transaction():
            self.log.append_all([record for record, _ in done])
        self.pump()
        self.log.checkpoint()

    def _commit_progress(self, cursor: int) -> None:
        """Commit order inside the transaction: projection rows, derived events, states, the cursor."""
        self.store.flush()
        self.log.flush()
        self._flush_states()
        if self.analytics is not None:  # before the cursor moves: at-least-once, rows dedup by event id
            self.analytics.flush(cursor)
        self.log.set_cursor(PIPELINE, cursor)

    def _handle(self, batch: list[tuple[int, Event]], follow_derived: bool, counts: Counter[str],
                safe: bool = False) -> None:
        queue = deque(batch)
        while queue:
            seq, event = queue.popleft()
            counts[event.type] += 1
            self.counters[event.type] += 1
            if event.type in PROJECTED_TYPES:  # the projector ignores the rest (proposals, skips, requests)
                self.projector.apply(event, seq)
            if self.analytics is not None:
                self.analytics.apply(event, seq)
            for processor in self._routes.get(event.type, ()):
                derived = self.log.stage(self._run(processor, event, safe), dedupe=False)
                if isinstance(event, ForgetRequested):  # what the eraser looks at (saves a list per event)
                    self.eraser.saw(event, [e for _, e in derived])
                if follow_derived:
                    queue.extend(derived)
                else:
                    counts.update(e.type for _, e in derived)

    def _handle_one_by_one(self, batch: list[tuple[int, Event]], counts: Counter[str]) -> None:
        """Safe mode after a processor failure: one event per transaction, failures dead-lettered."""
        for seq, event in batch:
            with self._transaction():
                self._handle([(seq, event)], follow_derived=False, counts=counts, safe=True)
                self._commit_progress(seq)
            self.eraser.commit()

    def _run(self, processor: Processor, event: Event, safe: bool) -> list[Event]:  # type: ignore[type-arg]
        key = processor.state_key(event)
        state = self._state(processor, key) if key is not None else None
        if safe and state is not None:
            state = state.model_copy(deep=True)
        try:
            new_state, outputs = processor.process(state, event, self.ctx)
        except Exception as exc:
            if not safe:
                raise _ProcessorFailed(processor.name) from exc
            log.exception("processor %s failed on %s", processor.name, event.event_id)
            self.counters[f"failed.{processor.name}"] += 1
            return [dead_letter(processor.name, event, exc)]
        if key is not None:
            self._states[(processor.name, key)] = new_state
            self._dirty.add((processor.name, key))
        return outputs

    def _state(self, processor: Processor, key: str) -> BaseModel | None:  # type: ignore[type-arg]
        slot = (processor.name, key)
        if slot not in self._states:
            row = self.db.execute("SELECT value FROM log_state WHERE processor=? AND key=?", slot).fetchone()
            state_type = processor.state_type
            self._states[slot] = state_type.model_validate_json(row[0]) if row and state_type else None
        return self._states[slot]

    def _flush_states(self) -> None:
        rows = [
            (name, key, state.model_dump_json().encode())
            for (name, key) in self._dirty
            if (state := self._states.get((name, key))) is not None
        ]
        self.db.executemany("INSERT OR REPLACE INTO log_state VALUES (?,?,?)", rows)
        self._dirty.clear()
        if len(self._states) > 50_000:
            self._states.clear()

    def _forget_uncommitted(self) -> None:
        self.log.discard()
        self.eraser.rollback()  # only this batch's forgets: a committed one still gets its keys destroyed
        self._states.clear()
        self._dirty.clear()
        self.store.forget_cache()
        if self.analytics is not None:
            self.analytics.discard()

    # -- reads ---------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> RecallResult:
        """Assemble the memory context and log the observation. Never raises into the chat."""
        result = RecallService(self.store, self.ctx.embedder, self.ctx.config).safe_recall(request)
        try:
            self.append([result.observation], process=False)
        except Exception:  # the observation is best effort; the chat goes on
            log.exception("could not log recall %s", result.observation.recall_id)
            self.counters["failed.recall_observation"] += 1
        return result

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, object]]:
        """The memory's changes back to the L0 turns, from the log (one dict per change)."""
        return [step.as_dict() for step in memory_lineage(self.log, tenant, user, memory_id)]

    # -- rebuild -----------------------------------------------------------------
    def replay(self, progress: Progress | None = None) -> str:
        """Drop the projection and rebuild it from the log; return the new state hash."""
        self.pump()
        with self._transaction():
            return rebuild_store(self.store, self.ctx.embedder, self.log.scan(), progress)

    def _transaction(self) -> "_Tx":
        return _Tx(self.db, self._forget_uncommitted, self.store.changes, self.published)

    def close(self) -> None:
        if self.analytics is not None:
            self.analytics.close()
        self.reader.close()
        self.db.close()
        if self.log.cipher is not None:
            close = getattr(self.log.cipher.keys, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> "EmbeddedRuntime":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ProcessorFailed(Exception):
    """A processor raised in a batch: the batch is redone one event at a time."""


class _Tx:
    """One SQLite transaction; a commit is announced to the readers' snapshots around the COMMIT."""

    def __init__(self, db, on_rollback=None, changes: StoreChanges | None = None,  # type: ignore[no-untyped-def]
                 published: Published | None = None) -> None:
        self.db = db
        self.on_rollback = on_rollback
        self.changes = changes
        self.published = published

    def __enter__(self) -> None:
        self.db.execute("BEGIN")

    def __exit__(self, exc_type, exc, tb) -> None:  # type: ignore[no-untyped-def]
        if exc_type is not None:
            self.db.execute("ROLLBACK")
            if self.on_rollback is not None:
                self.on_rollback()
            return
        changed = self.changes.take() if self.changes is not None else None
        if changed and self.published is not None:
            self.published.before_commit(changed)
        self.db.execute("COMMIT")
        if changed and self.published is not None:
            self.published.after_commit(changed)
