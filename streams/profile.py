"""The standing profile as a versioned document per user, derived from the memory changes. Pure.

A memory is a profile entry while it is active and in L3 (consolidation files it there by
`core.domains.profile_layer`) and no later change supersedes it (`recall.profile.SUPERSESSIONS`: a move,
a change of diet, of job or of rate, an activity dropped, a relationship ended). Two live entries in one single-valued slot are both kept and marked as conflicting
with each other. Each `MemoryChanged` that changes the set (an entry added, removed, re-labelled,
pinned, corrected, or its conflict mark) makes one `ProfileChanged` at the next version, naming the
memory change it came from; a change that leaves the document as it was makes none.

The state keeps no user text: per live L3 memory, its slot, creation time, what the supersession
rules read in its text (`supersession_marks`), its labels and pin; and the document as last emitted.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from engram.core.domains import domains_of
from engram.core.sensitive import sensitive_domains
from engram.recall.home_slot import moved_here
from engram.recall.profile import Marked, Marks, place_keys, subject_keys, superseded_marked, supersession_marks, value_keys
from engram.schemas.base import Event, derive_id
from engram.schemas.events import MemoryChanged, ProfileChanged
from engram.schemas.memory import MemoryRecord, is_single_valued
from engram.schemas.profile import ProfileItem, ProfileRemoval, RemovalReason

from .processor import ProcessorContext


class LiveEntry(BaseModel):
    """An active L3 memory as the profile needs it (no text)."""

    slot: str
    created_at: datetime
    marks: Marks
    subject: frozenset[str] = frozenset()
    places: frozenset[str] | None = None
    """The places the entry names (`place_keys`); None in a state saved before they were kept."""
    moves_home: bool = False
    """Whether the entry tells of a change of home (`moved_here`); False in a state saved before it was kept,
    so such a claim counts as a residence restated and takes out only entries naming another place."""
    values: frozenset[str] = frozenset()
    """What the entry's claims name (`value_keys`: a rate's amount, an activity dropped, a partner left)."""
    domains: tuple[str, ...]
    sensitive: tuple[str, ...]
    pinned: bool
    conflict_with: tuple[str, ...]
    revision: int


class UserProfileState(BaseModel):
    """One user's live L3 memories, the active memories outside L3 that tell of a change (`changes`: "Tom
    quit judo" said in passing still ends the standing "judo on Tuesdays"), and their profile document
    as last emitted."""

    version: int = 0
    live: dict[str, LiveEntry] = Field(default_factory=dict)
    changes: dict[str, LiveEntry] = Field(default_factory=dict)
    document: dict[str, ProfileItem] = Field(default_factory=dict)


def tells_of_change(record: MemoryRecord) -> bool:
    """Whether an active memory outside the profile tells of a change a supersession rule reads
    (`supersession_marks`): it takes entries out of the profile without entering it."""
    return record.status == "active" and record.layer != "L3" and any(m[0] for m in supersession_marks(record.content))


def live_entry(record: MemoryRecord, revision: int) -> LiveEntry:
    return LiveEntry(slot=record.slot, created_at=record.created_at, marks=supersession_marks(record.content),
                     subject=subject_keys(record.content), places=place_keys(record.content),
                     moves_home=moved_here(record.content), values=value_keys(record.content),
                     domains=tuple(sorted(domains_of(record.content))),
                     sensitive=tuple(sorted(sensitive_domains(record.content).union(record.sensitive))), pinned=record.pinned,
                     conflict_with=record.conflict_with, revision=revision)


def profile_document(live: dict[str, LiveEntry], previous: dict[str, ProfileItem] | None = None,
                     changes: dict[str, LiveEntry] | None = None) -> dict[str, ProfileItem]:
    """The entries of the profile: the live ones no later change (theirs or one of `changes`) supersedes,
    with their conflict marks (another live entry of the same single-valued slot, or a conflict
    consolidation recorded between two entries). An entry equal to its `previous` one is that object again."""
    told = {**(changes or {}), **live}
    gone = superseded_marked([Marked(memory_id, e.created_at, e.marks, e.subject, e.places, e.moves_home, e.values)
                              for memory_id, e in told.items()])
    kept = {memory_id: e for memory_id, e in live.items() if memory_id not in gone}
    by_slot: dict[str, list[str]] = {}
    for memory_id, e in kept.items():
        if is_single_valued(e.slot):
            by_slot.setdefault(e.slot, []).append(memory_id)
    out = {}
    for memory_id in sorted(kept):
        e = kept[memory_id]
        rivals: tuple[str, ...] = ()
        if len(by_slot.get(e.slot, ())) > 1 or e.conflict_with:
            found = {m for m in by_slot.get(e.slot, ()) if m != memory_id}
            found |= {m for m in e.conflict_with if m in kept and m != memory_id}
            rivals = tuple(sorted(found))
        old = previous.get(memory_id) if previous is not None else None
        if old is not None and (old.slot, old.domains, old.sensitive, old.pinned, old.conflict_with, old.revision) \
                == (e.slot, e.domains, e.sensitive, e.pinned, rivals, e.revision):
            out[memory_id] = old
        else:  # built from validated parts (a hot path: one document per profile change)
            out[memory_id] = ProfileItem.model_construct(memory_id=memory_id, slot=e.slot, domains=e.domains,
                                                         sensitive=e.sensitive, pinned=e.pinned,
                                                         conflict_with=rivals, revision=e.revision)
    return out


_REASONS: dict[str, RemovalReason] = {"replaced": "replaced", "retired": "retired", "archived": "archived",
                                      "deleted": "deleted", "discarded": "deleted"}


def _removal_reason(memory_id: str, event: MemoryChanged, live: dict[str, LiveEntry]) -> RemovalReason:
    if memory_id in live:
        return "superseded"
    if memory_id != event.memory_id:
        return "deleted"
    if event.change == "deleted" and event.relation == "user":
        return "forgotten"
    if event.after is not None and event.after.status == "active":
        return "left"  # still a memory, no longer L3
    return _REASONS.get(event.change, "deleted")


class ProfileProcessor:
    """Keeps each user's standing profile document and emits its changes."""

    name = "profile"
    consumes = frozenset({"MemoryChanged"})
    state_type = UserProfileState

    def state_key(self, event: Event) -> str | None:
        return event.partition_key

    def process(self, state: UserProfileState | None, event: Event, ctx: ProcessorContext
                ) -> tuple[UserProfileState | None, list[Event]]:
        if not isinstance(event, MemoryChanged):
            return state, []
        after = event.after
        entering = after is not None and after.status == "active" and after.layer == "L3"
        changing = after is not None and not entering and tells_of_change(after)
        known = state is not None and (event.memory_id in state.live or event.memory_id in state.changes)
        if not entering and not changing and not known:
            return state, []  # not a profile memory nor a change, before or after: nothing to do (the common case)
        state = state if state is not None else UserProfileState()
        if changing and after is not None:
            state.live.pop(event.memory_id, None)
            state.changes[event.memory_id] = live_entry(after, after.version)
        elif entering and after is not None:
            state.changes.pop(event.memory_id, None)
            entry = live_entry(after, _revision(state, event, after))
            if state.live.get(event.memory_id) == entry:
                return state, []  # a reinforcement: nothing the profile keeps has changed
            state.live[event.memory_id] = entry
        else:
            state.live.pop(event.memory_id, None)
            state.changes.pop(event.memory_id, None)
        document = profile_document(state.live, state.document, state.changes)
        change = _change(state, document, event)
        state.document = document
        return state, [change] if change is not None else []


def _revision(state: UserProfileState, event: MemoryChanged, after: MemoryRecord) -> int:
    """The memory version its text last changed at: kept while the text stays the same."""
    known = state.live.get(event.memory_id)
    if known is not None and event.before is not None and event.before.content == after.content:
        return known.revision
    return after.version


def _change(state: UserProfileState, document: dict[str, ProfileItem], event: MemoryChanged) -> ProfileChanged | None:
    old = state.document
    added = tuple(item for memory_id, item in document.items() if memory_id not in old)
    updated = tuple(item for memory_id, item in document.items() if memory_id in old and old[memory_id] is not item)
    removed = tuple(ProfileRemoval(memory_id=memory_id, reason=_removal_reason(memory_id, event, state.live))
                    for memory_id in sorted(old) if memory_id not in document)
    if not (added or updated or removed):
        return None
    state.version += 1
    return ProfileChanged(
        event_id=derive_id(event.event_id, ProfileProcessor.name, 0),
        occurred_at=event.occurred_at, tenant_id=event.tenant_id, user_id=event.user_id,
        causation_ids=(event.event_id,), correlation_id=event.correlation_id or event.event_id,
        profile_version=state.version, added=added, updated=updated, removed=removed,
        source_memory_ids=(event.memory_id,), entry_count=len(document),
    )
