"""The use cases behind every door (HTTP, MCP): ingest, recall, feedback, memories, user controls.

Every method takes the calling `Principal` first and checks the tenant before
anything else, so no door can forget to. A new session or a new user is normal
: recall, search and the memory list answer with `session_known` / `user_known`
set to false, or an empty list (counted and logged), never an error, so the
first message of a session gets the user's long-term memory. Reads of one named
thing (a memory, its lineage, a session's summary) and changes to one raise
NotFound instead of answering empty. Commands are appended as events; what they did is read back from the
MemoryChanged events they caused.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Literal

from engram.core.embedding import embed_text
from engram.core.text import has_visible, strip_control
from engram.projections.ports import MemoryStore, SearchHit, profile_order
from engram.recall.deadline import PARTS
from engram.core.domains import domains_of
from engram.core.sensitive import sensitive_domains
from engram.recall.profile import standing_profile
from engram.recall.service import RecallRequest, RecallResult
from engram.schemas.base import Event
from engram.schemas.events import (
    CorrectionRequested, FeedbackGiven, ForgetRequested, MemoryChanged, PinRequested, RecallServed,
    SummarySnapshotted,
)
from pydantic import ValidationError

from engram.runtime.engine import IngestReport
from engram.schemas.inputs import IngestIssue, TurnInput
from engram.streams.forget import select_forget_targets
from engram.schemas.memory import MemoryRecord
from engram.schemas.profile import ProfileDocument, ProfileItem

from .auth import Principal
from .backend import MemoryBackend
from .errors import BadRequest, Conflict, InvalidTurns, NotFound, invalid_input, unknown_memory, unknown_session, \
    unknown_user
from .metrics import Metrics
from .models import (
    ChatMessage, ControlResult, FeedbackRequest, FeedbackResult, ForgetBody, IngestResult, LineageStep,
    MemoryChange, RecallFreshness, RecallQuery, RecallResponse, RecalledMemory, SearchMatch, SearchResponse,
    ProfileEntry, ProfileResponse,
)

log = logging.getLogger("engram.access")
Clock = Callable[[], datetime]
StatusFilter = Literal["active", "all"]
ALL_STATUSES = ("active", "replaced", "retired", "archived")
MAX_LIMIT = 100
"""At most this many search results (every door)."""
FORGETTABLE = ("active", "archived")
MIN_PREFIX = 4
"""A memory id may be given by a unique prefix of at least this many characters (as listings show them)."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class SearchResult:
    """Search hits, and whether the user and the session were known (a new one is not an error)."""

    hits: list[SearchHit]
    user_known: bool = True
    session_known: bool = True


class AccessService:
    """Ingest, recall, feedback, memories and user controls for one back end."""

    def __init__(self, backend: MemoryBackend, metrics: Metrics | None = None, clock: Clock = utc_now) -> None:
        self.backend = backend
        self.metrics = metrics or Metrics()
        self.clock = clock

    # -- checks --------------------------------------------------------------------
    def require_user(self, who: Principal, tenant: str, user: str) -> None:
        who.check_tenant(tenant)
        if not self.backend.read(lambda store: store.has_user(tenant, user)):
            raise unknown_user(tenant, user)

    def require_session(self, who: Principal, tenant: str, user: str, session: str) -> None:
        who.check_tenant(tenant)
        self.backend.read(_session_check(tenant, user, session))

    def _active(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        """The active memory of that id or unique prefix (BadRequest / NotFound as `resolve_id`)."""
        return self._resolved(tenant, user, memory_id, ("active",))

    def _resolved(self, tenant: str, user: str, given: str, statuses: tuple[str, ...]) -> MemoryRecord:
        """The memory `given` names, by its id or a unique prefix of one, among those statuses."""
        record = self.backend.read(lambda store: store.get_memory(tenant, user, given))
        if record is not None and record.status in statuses:
            return record
        records = self.backend.read(lambda store: store.list_memories(tenant, user, statuses))
        full = resolve_id(given, [r.memory_id for r in records])
        return next(r for r in records if r.memory_id == full)

    # -- ingest and recall ------------------------------------------------------------
    def ingest(self, who: Principal, turns: Sequence[TurnInput | Mapping[str, Any]]) -> IngestResult:
        return self.record(who, turns)[0]

    def record(self, who: Principal, items: Sequence[TurnInput | Mapping[str, Any] | Refused],
               ) -> tuple[IngestResult, list[MemoryChange]]:
        """Ingest, and the memory changes the turns caused (with their text).

        Each item is validated on its own: the valid ones are recorded even when others are not
        (InvalidTurns then names each invalid one by its index, with what was recorded).
        """
        turns, positions, invalid = parse_turns(items)
        for turn in turns:
            who.check_tenant(turn.tenant)
        report = self.backend.ingest(turns) if turns else IngestReport()
        report.issues = sorted([replace(i, index=positions[i.index]) for i in report.issues] + invalid,
                               key=lambda i: i.index)
        report.received = len(items)
        self.metrics.add("turns.received", report.received)
        self.metrics.add("turns.appended", report.appended)
        result = IngestResult(received=report.received, appended=report.appended, duplicates=report.duplicates,
                              events=dict(report.events), warnings=[_numbered(i) for i in report.issues
                                                                    if not i.is_error])
        if invalid:
            self.metrics.add("turns.invalid", len(invalid))
            raise ingest_refusal(report, result, InvalidTurns)
        if report.rejected:
            self.metrics.add("turns.conflicts", report.conflicts)
            raise ingest_conflict(report, result)
        return result, control_result(report.changes).changes

    def recall(self, who: Principal, query: RecallQuery, spent_ms: float = 0.0) -> RecallResponse:
        """The memory context; a failure or an exhausted deadline yields an empty, degraded one.

        `spent_ms`: time the request already waited (queued, read) before reaching here; the deadline
        is end to end, so only what is left of it is given to the runtime.
        """
        who.check_tenant(query.tenant)
        request = RecallRequest(query.tenant, query.user, query.agent, query.session, query.question,
                                self.clock(), query.message_id, query.memory_enabled, query.token_budget,
                                query.limit)
        deadline = (query.deadline_ms or self.backend.config.recall.deadline_ms) - spent_ms
        self.metrics.add("recall.served")
        if deadline <= 0:  # the queue ate the deadline: degrade without reading
            self.metrics.add("recall.deadline_spent_queued")
            self.metrics.add("recall.degraded")
            self._note_missed(query, list(PARTS))
            return RecallResponse.empty(query, deadline_exceeded=True, missed=list(PARTS))
        result = self.backend.recall(request, deadline)
        if result is None:
            self.metrics.add("recall.degraded")
            return RecallResponse.empty(query)
        self.metrics.add("recall.injected" if result.items else "recall.nothing_injected")
        if result.deadline_exceeded:
            self.metrics.add("recall.deadline_exceeded")
        if result.missed:
            self.metrics.add("recall.degraded")
            self._note_missed(query, result.missed)
        self.note_unknown("recall", query.tenant, query.user, query.session, result.user_known,
                          result.session_known)
        return recall_response(result, query.system_prompt)

    def _note_missed(self, query: RecallQuery, missed: list[str]) -> None:
        """A recall assembled without some parts (deadline): one counter per part and one log line."""
        for part in missed:
            self.metrics.add(f"recall.missed.{part}")
        log.info("recall for user %r of tenant %r past its deadline: without %s", query.user, query.tenant,
                 ", ".join(missed))

    def note_unknown(self, what: str, tenant: str, user: str, session: str | None, user_known: bool,
                     session_known: bool) -> None:
        """A new user or session is normal, but never silent: one counter and one log line."""
        if not user_known:
            self.metrics.add(f"{what}.unknown_user")
            log.info("%s for user %r of tenant %r: nothing recorded yet (new user); empty context",
                     what, user, tenant)
        elif not session_known and session is not None:
            self.metrics.add(f"{what}.new_session")
            log.info("%s for session %r of user %r (tenant %r): no turn yet (new session); long-term memory only",
                     what, session, user, tenant)

    def known(self, tenant: str, user: str, session: str | None) -> tuple[bool, bool]:
        """(user_known, session_known) from the projection; a session not given counts as known."""
        def check(store: MemoryStore) -> tuple[bool, bool]:
            if not store.has_user(tenant, user):
                return False, False
            return True, session is None or store.has_session(tenant, user, session)
        return self.backend.read(check)

    def feedback(self, who: Principal, body: FeedbackRequest) -> FeedbackResult:
        """Attach a verdict to a recall of this user (appended as FeedbackGiven)."""
        who.check_tenant(body.tenant)
        served = self.backend.event(body.tenant, body.user, body.recall_id)
        if not isinstance(served, RecallServed):
            raise NotFound(f"no recall {body.recall_id!r} for this user", "unknown_recall")
        event = FeedbackGiven(
            event_id=new_id(), occurred_at=self.clock(), tenant_id=body.tenant, user_id=body.user,
            causation_ids=(served.event_id,), correlation_id=served.correlation_id or served.event_id,
            recall_id=body.recall_id, rating=body.rating, reason=body.reason, remark=body.remark,
        )
        self.backend.record([event])
        self.metrics.add(f"feedback.rating_{body.rating}")
        return FeedbackResult(feedback_id=event.event_id, recall_id=body.recall_id, rating=body.rating)

    # -- reads ---------------------------------------------------------------------------
    def memories(self, who: Principal, tenant: str, user: str, status: StatusFilter = "active") -> list[MemoryRecord]:
        """The user's memories; a new user has none (not an error, as in recall and search)."""
        who.check_tenant(tenant)
        user_known, _ = self.known(tenant, user, None)
        if not user_known:
            self.note_unknown("memories", tenant, user, None, False, False)
            return []
        statuses = ALL_STATUSES if status == "all" else ("active",)
        return self.backend.read(lambda store: store.list_memories(tenant, user, statuses))

    def profile(self, who: Principal, tenant: str, user: str) -> ProfileResponse:
        """The user's standing profile (a new user: no entries, `user_known` false)."""
        who.check_tenant(tenant)
        known = bool(self.backend.read(lambda store: store.has_user(tenant, user)))
        if not known:
            return ProfileResponse(tenant_id=tenant, user_id=user, user_known=False)
        document, records = self.backend.read(
            lambda store: (store.profile_document(tenant, user), store.persona_memories(tenant, user)))
        return profile_response(tenant, user, document, records)

    def memory(self, who: Principal, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        self.require_user(who, tenant, user)
        return self._resolved(tenant, user, memory_id, ALL_STATUSES)

    def lineage(self, who: Principal, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
        self.require_user(who, tenant, user)
        try:
            memory_id = self._resolved(tenant, user, memory_id, ALL_STATUSES).memory_id
        except NotFound:
            pass  # a forgotten memory has no row any more: its full id still finds its lineage
        steps = self.backend.lineage(tenant, user, memory_id)
        if not steps:
            raise NotFound(f"no memory {memory_id!r} was ever recorded for this user", "unknown_memory")
        return [LineageStep.model_validate(step) for step in steps]

    def search(self, who: Principal, tenant: str, user: str, session: str | None, query: str,
               limit: int = 10) -> SearchResult:
        """Hybrid search over the user's active memories. A new user or session is normal (see the flags)."""
        who.check_tenant(tenant)
        if not query.strip():
            raise BadRequest("the search query is empty", "invalid_request")
        if not 1 <= limit <= MAX_LIMIT:
            raise BadRequest(f"limit must be between 1 and {MAX_LIMIT}, got {limit}", "invalid_request")
        user_known, session_known = self.known(tenant, user, session)
        self.metrics.add("search.served")
        self.note_unknown("search", tenant, user, session, user_known, session_known)
        if not user_known:
            return SearchResult([], False, False)
        vector = embed_text(self.backend.embedder, query)
        hits = self.backend.read(lambda store: store.search_memories(tenant, user, query, vector, limit))
        floor = self.backend.config.recall.semantic_match_cosine
        found = [h for h in hits if h.keyword_score > 0 or h.vector_score >= floor][:limit]
        return SearchResult(found, True, session_known)

    def summary(self, who: Principal, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        self.require_session(who, tenant, user, session)
        return self.backend.read(lambda store: store.latest_summary(tenant, user, session))

    def resolve(self, who: Principal, tenant: str, user: str, memory_id: str,
                status: StatusFilter = "active") -> str:
        """A full memory id from an id or a unique prefix of one (at least 4 characters), among the user's
        active memories (or all of them); unknown_user / unknown_memory / ambiguous_id / prefix_too_short."""
        self.require_user(who, tenant, user)
        return self._resolved(tenant, user, memory_id, ALL_STATUSES if status == "all" else ("active",)).memory_id

    # -- user controls -------------------------------------------------------------------
    def correct(self, who: Principal, tenant: str, user: str, memory_id: str, content: str) -> ControlResult:
        self.require_user(who, tenant, user)
        content = strip_control(content).strip()
        if not has_visible(content):
            raise BadRequest("the correction has no visible characters (control and invisible formatting "
                             "characters are stripped)", "invalid_request")
        memory_id = self._active(tenant, user, memory_id).memory_id
        return self._command(CorrectionRequested, tenant, user, memory_id=memory_id, content=content)

    def pin(self, who: Principal, tenant: str, user: str, memory_id: str, pinned: bool = True) -> ControlResult:
        self.require_user(who, tenant, user)
        memory_id = self._active(tenant, user, memory_id).memory_id
        return self._command(PinRequested, tenant, user, memory_id=memory_id, pinned=pinned)

    def forget_one(self, who: Principal, tenant: str, user: str, memory_id: str) -> ControlResult:
        self.require_user(who, tenant, user)
        memory_id = self._active(tenant, user, memory_id).memory_id
        return self._command(ForgetRequested, tenant, user, memory_ids=(memory_id,))

    def forget(self, who: Principal, body: ForgetBody) -> ControlResult:
        """Forget memories by id, by topic text, or everything (also summaries and the recent window)."""
        self.require_user(who, body.tenant, body.user)
        if body.memory_ids:  # ids or unique prefixes of memories that can be forgotten; an unknown one is a 404
            full = [self._resolved(body.tenant, body.user, m, FORGETTABLE).memory_id for m in body.memory_ids]
            body = body.model_copy(update={"memory_ids": full})
        if body.dry_run:
            return self._forget_preview(body)
        return self._command(ForgetRequested, body.tenant, body.user, memory_ids=tuple(body.memory_ids),
                             topic_text=body.topic, everything=body.everything)

    def _forget_preview(self, body: ForgetBody) -> ControlResult:
        """What the forget would erase, matched as consolidation will match it; nothing is written."""
        request = ForgetRequested(event_id="dry-run", occurred_at=self.clock(), tenant_id=body.tenant,
                                  user_id=body.user, memory_ids=tuple(body.memory_ids),
                                  topic_text=body.topic, everything=body.everything)
        memories = self.backend.read(lambda store: store.list_memories(body.tenant, body.user,
                                                                       ("active", "archived")))
        targets = select_forget_targets(memories, request, self.backend.embedder, self.backend.config)
        return ControlResult(affected=len(targets), dry_run=True, changes=[
            MemoryChange(memory_id=m.memory_id, change="deleted", before=m.content) for m in targets])

    def _command(self, kind: type[Event], tenant: str, user: str, **fields: Any) -> ControlResult:
        event_id = new_id()
        command = kind(event_id=event_id, occurred_at=self.clock(), tenant_id=tenant, user_id=user,
                       correlation_id=event_id, **fields)
        changes = self.backend.submit([command])
        self.metrics.add(f"controls.{kind.model_fields['type'].default}")
        return control_result(changes)


def resolve_id(given: str, known: Sequence[str]) -> str:
    """`given` itself if known, else the one known id it starts.

    NotFound `unknown_memory` when none matches, BadRequest `prefix_too_short` for a prefix shorter
    than MIN_PREFIX, `ambiguous_id` when several match.
    """
    if given in known:
        return given
    if len(given) < MIN_PREFIX:
        raise BadRequest(f"memory id prefix {given!r} is too short: give at least {MIN_PREFIX} characters "
                         "(or the full id)", "prefix_too_short")
    matches = [k for k in known if k.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise BadRequest(f"memory id prefix {given!r} matches {len(matches)} memories: give more of it",
                         "ambiguous_id")
    raise unknown_memory(given)


def _numbered(issue: IngestIssue) -> str:
    return f"turn {issue.index}: {issue.message}"


def ingest_conflict(report: IngestReport, result: IngestResult) -> Conflict:
    """409 naming every turn not recorded (index in the request); the other turns were ingested."""
    message, details = _refusal(report, result)
    return Conflict(message, "message_id_conflict", details=details)


def ingest_refusal(report: IngestReport, result: IngestResult, kind: type[InvalidTurns]) -> InvalidTurns:
    """422 `invalid_turns` naming every turn not recorded (index in the request); the others were ingested."""
    return kind(*_refusal(report, result), changes=control_result(report.changes).changes)


def _refusal(report: IngestReport, result: IngestResult) -> tuple[str, dict[str, Any]]:
    rejected = [i for i in report.issues if i.is_error]
    message = (f"{len(rejected)} of {report.received} turn(s) not recorded: "
               + "; ".join(_numbered(i) for i in rejected[:5]) + ("; ..." if len(rejected) > 5 else "")
               + f". The other turns were ingested ({report.appended} new, {report.duplicates} already known).")
    return message, {
        "turns": [{"index": i.index, "message_id": i.message_id, "reason": i.kind, "message": i.message}
                  for i in rejected],
        "ingested": result.model_dump(mode="json")}


@dataclass(frozen=True)
class Refused:
    """An item a door already found invalid (`message` says why, in the door's own words)."""

    message: str
    message_id: str = ""


def parse_turns(items: Sequence[TurnInput | Mapping[str, Any] | Refused]) -> tuple[list[TurnInput], list[int], list[IngestIssue]]:
    """(valid turns, their positions in `items`, an `invalid` issue for each item that is not a turn)."""
    turns: list[TurnInput] = []
    positions: list[int] = []
    invalid: list[IngestIssue] = []
    for index, item in enumerate(items):
        if isinstance(item, Refused):
            invalid.append(IngestIssue(index, "invalid", item.message_id, item.message))
            continue
        try:
            turns.append(item if isinstance(item, TurnInput) else TurnInput.model_validate(item))
            positions.append(index)
        except ValidationError as exc:
            message_id = item.get("message_id") if isinstance(item, Mapping) else None
            invalid.append(IngestIssue(index, "invalid", message_id if isinstance(message_id, str) else "",
                                       invalid_input(exc.errors()).message))
    return turns, positions, invalid


def _session_check(tenant: str, user: str, session: str) -> Callable[[MemoryStore], None]:
    def check(store: MemoryStore) -> None:
        if not store.has_user(tenant, user):
            raise unknown_user(tenant, user)
        if not store.has_session(tenant, user, session):
            raise unknown_session(tenant, user, session)
    return check


def control_result(changes: list[MemoryChanged]) -> ControlResult:
    return ControlResult(affected=len(changes), changes=[
        MemoryChange(memory_id=c.memory_id, change=c.change,
                     before=c.before.content if c.before else None, after=c.after.content if c.after else None)
        for c in changes
    ])


def recall_response(result: RecallResult, system_prompt: str = "") -> RecallResponse:
    items = [
        RecalledMemory(kind=i.kind, item_id=i.item_id, id=i.item_id,
                       memory_id=i.item_id if i.kind in ("memory", "profile") else None,
                       card_id=i.item_id if i.kind == "global" else None,
                       summary_id=i.item_id if i.kind == "summary" else None,
                       message_id=i.item_id if i.kind == "turn" else None,
                       text=i.text, score=round(i.score, 6), tokens=i.tokens,
                       source_message_ids=list(i.source_message_ids), conflict=i.conflict_note or None,
                       details={k: v for k, v in i.details.items()})
        for i in result.items
    ]
    return RecallResponse(
        recall_id=result.observation.recall_id, context=result.memory_section, tokens=result.tokens,
        injected=bool(result.items),
        items=items, recent=[ChatMessage(**m) for m in result.recent],
        messages=[ChatMessage(**m) for m in result.messages(system_prompt)],
        retrieval_ms=round(result.retrieval_ms, 3), build_ms=round(result.build_ms, 3),
        deadline_exceeded=result.deadline_exceeded, degraded=bool(result.missed), missed=list(result.missed),
        user_known=result.user_known, session_known=result.session_known,
        freshness=RecallFreshness(**dataclasses.asdict(result.freshness)),
    )


def search_response(found: SearchResult) -> SearchResponse:
    return SearchResponse(results=[
        SearchMatch(memory=h.record, score=round(h.vector_score + h.keyword_score, 6),
                    vector_score=round(h.vector_score, 6), keyword_score=round(h.keyword_score, 6))
        for h in found.hits], user_known=found.user_known, session_known=found.session_known)


def profile_response(tenant: str, user: str, document: ProfileDocument | None,
                     records: list[MemoryRecord]) -> ProfileResponse:
    """The profile as every surface shows it: the document's entries (its version), most important first;
    without a document yet (a log written before them), the L3 memories no later change supersedes."""
    if document is None:
        return ProfileResponse(tenant_id=tenant, user_id=user,
                               entries=[profile_entry(r) for r in standing_profile(records)])
    members = sorted((r for r in records if r.memory_id in document.member_ids), key=profile_order)
    return ProfileResponse(tenant_id=tenant, user_id=user, version=document.version,
                           entries=[profile_entry(r, document.entry(r.memory_id)) for r in members])


def profile_entry(record: MemoryRecord, item: ProfileItem | None = None) -> ProfileEntry:
    """A profile entry as every surface shows it (labels and conflict mark from the document's entry)."""
    if item is not None and item.domains:
        domains, sensitive = item.domains, item.sensitive
    else:  # no document entry, or its labels were shredded with their key: read from the text
        domains = tuple(domains_of(record.content))
        sensitive = tuple(sensitive_domains(record.content).union(record.sensitive))
    conflicts = set(record.conflict_with) | set(item.conflict_with if item is not None else ())
    return ProfileEntry(memory_id=record.memory_id, type=record.type.value, slot=record.slot, content=record.content,
                        domains=sorted(domains), sensitive=sorted(sensitive), pinned=record.pinned,
                        importance=record.importance, conflict_with=sorted(conflicts), event_time=record.created_at)
