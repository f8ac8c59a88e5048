"""Snapshots that let readers of the embedded store run beside its one writer without its lock.

The writer records what a transaction changed (`StoreChanges`: the users it touched and, in order,
the memory versions it put into or removed from a user's index). `Published` holds what readers
see: per user, a generation stamp and, when some reader asked for it, that user's search index.

Commit protocol (the writer calls both, around its COMMIT):

- `before_commit(users)` takes the users' current indexes as bases and bumps their generation:
  from then on a reader that read the old stamp can no longer install what it built (its SQL
  may or may not see the commit);
- `after_commit(users, changes)` applies the changes to a *copy* of each base (copy-on-write;
  readers keep using the old object undisturbed) and installs the copies under a new generation,
  bumped again, so anything a reader built while the commit was in flight is stale too. A turn
  index is not copied: it only grows (`TurnIndex`), so the writer's own index of each user whose
  turns changed is published as a new `TurnView` (its rows so far, frozen: the writer appends past
  them), and a user whose turns did not change keeps the view it had; readers keep their old view.

A reader builds a missing or stale entry from its own SQLite connection (WAL: it sees the last
committed transaction, never an open one), stamped with the generation it read *before* its query,
and installs it only if the generation has not moved since. So a reader never sees uncommitted
data, never keeps an entry older than a commit it could have missed, and never waits for the writer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from engram.schemas.memory import MemoryRecord

from .hybrid_index import UserIndex
from .turn_index import TurnIndex, TurnView

UserKey = tuple[str, str]
Stamp = tuple[int, int]
T = TypeVar("T")
MAX_ENTRIES = 50_000
"""Cached reads kept at most (then all are dropped and rebuilt on use)."""
IndexChange = tuple[MemoryRecord, np.ndarray, str] | str
"""A version put into the index (record, vector, context) or the id of a memory removed for good."""


@dataclass
class StoreChanges:
    """What the writer changed since the last commit (or rollback)."""

    users: set[UserKey] = field(default_factory=set)
    index: dict[UserKey, list[IndexChange]] = field(default_factory=dict)
    turns: dict[UserKey, TurnIndex] = field(default_factory=dict)
    """The writer's turn index of each user whose turns changed (readers get a view of it at commit)."""
    turns_reset: set[UserKey] = field(default_factory=set)
    """Users whose turns were deleted (their readers' turn indexes are built again from the rows)."""
    everything: bool = False

    def touch(self, tenant: str, user: str) -> None:
        self.users.add((tenant, user))

    def put(self, tenant: str, user: str, record: MemoryRecord, vector: np.ndarray, context: str) -> None:
        self.users.add((tenant, user))
        self.index.setdefault((tenant, user), []).append((record, vector, context))

    def forget(self, tenant: str, user: str, memory_id: str) -> None:
        self.users.add((tenant, user))
        self.index.setdefault((tenant, user), []).append(memory_id)

    def turns_changed(self, tenant: str, user: str, index: TurnIndex) -> None:
        self.users.add((tenant, user))
        self.turns[(tenant, user)] = index
        self.turns_reset.discard((tenant, user))

    def reset_turns(self, tenant: str, user: str) -> None:
        self.users.add((tenant, user))
        self.turns.pop((tenant, user), None)
        self.turns_reset.add((tenant, user))

    def take(self) -> StoreChanges:
        """These changes, leaving this object empty."""
        taken = StoreChanges(self.users, self.index, self.turns, self.turns_reset, self.everything)
        self.discard()
        return taken

    def discard(self) -> None:
        self.users, self.index, self.turns, self.turns_reset, self.everything = set(), {}, {}, set(), False

    def __bool__(self) -> bool:
        return bool(self.users) or self.everything


def apply_changes(index: UserIndex, changes: Iterable[IndexChange]) -> UserIndex:
    """A copy of `index` with the changes applied in order (the original is left as it was)."""
    twin = index.copy()
    for change in changes:
        if isinstance(change, str):
            twin.forget(change)
        else:
            twin.put(*change)
    return twin


@dataclass(frozen=True)
class Entry(Generic[T]):
    stamp: Stamp
    value: T


class Published:
    """Generation stamps per user and the entries readers cached under them (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # held for dictionary steps only, never across I/O or a build
        self._epoch = 0
        self._generations: dict[UserKey, int] = {}
        self._entries: dict[tuple[str, tuple[str, ...]], Entry[object]] = {}
        self._bases: dict[UserKey, UserIndex] = {}
        self._turn_views: dict[UserKey, TurnView] = {}

    def stamp(self, key: UserKey) -> Stamp:
        with self._lock:
            return self._epoch, self._generations.get(key, 0)

    def peek(self, kind: str, key: tuple[str, ...]) -> object | None:
        """The current entry of `kind` for `key`, or None (nothing is built)."""
        with self._lock:
            stamp = self._epoch, self._generations.get((key[0], key[1]), 0)
            entry = self._entries.get((kind, key))
        return entry.value if entry is not None and entry.stamp == stamp else None

    def cached(self, kind: str, key: tuple[str, ...], build: Callable[[], T]) -> T:
        """The entry of `kind` for `key` (its first two parts are the user) if current, else built now."""
        slot = (kind, key)
        with self._lock:
            stamp = self._epoch, self._generations.get((key[0], key[1]), 0)
            entry = self._entries.get(slot)
        if entry is not None and entry.stamp == stamp:
            return entry.value  # type: ignore[return-value]
        value = build()
        with self._lock:
            if (self._epoch, self._generations.get((key[0], key[1]), 0)) == stamp:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[slot] = Entry(stamp, value)
        return value

    # -- the writer's side -----------------------------------------------------------------------
    def before_commit(self, changes: StoreChanges) -> None:
        with self._lock:
            if changes.everything:
                self._epoch += 1
                self._entries.clear()
                self._bases, self._turn_views = {}, {}
                return
            self._bases, self._turn_views = {}, {}
            for key in changes.users:
                current = (self._epoch, self._generations.get(key, 0))
                entry = self._entries.get(("index", key))
                if entry is not None and entry.stamp == current and isinstance(entry.value, UserIndex):
                    self._bases[key] = entry.value
                turns = self._entries.get(("turns", key))
                if key not in changes.turns and key not in changes.turns_reset and turns is not None \
                        and turns.stamp == current and isinstance(turns.value, TurnView):
                    self._turn_views[key] = turns.value  # the commit changed no turn of the user
                self._generations[key] = self._generations.get(key, 0) + 1

    def after_commit(self, changes: StoreChanges) -> None:
        if changes.everything:
            with self._lock:
                self._epoch += 1
            return
        bases, self._bases = self._bases, {}
        turns, self._turn_views = self._turn_views, {}
        updated = {key: apply_changes(base, changes.index.get(key, ())) for key, base in bases.items()}
        turns.update((key, index.view()) for key, index in changes.turns.items())
        with self._lock:
            for key in changes.users:
                self._generations[key] = self._generations.get(key, 0) + 1
            for key, index in updated.items():
                self._entries[("index", key)] = Entry((self._epoch, self._generations[key]), index)
            for key, view in turns.items():
                self._entries[("turns", key)] = Entry((self._epoch, self._generations[key]), view)

    def __len__(self) -> int:
        return len(self._entries)
