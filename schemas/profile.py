"""The standing profile as a versioned document: its entries and how one `ProfileChanged` changes it.

An entry names a memory (its text stays in the memory, sealed in the memory events), the slot it fills,
the life domains it is about, the sensitive domains it states, whether it is pinned, the other entries
it conflicts with (two live values of one single-valued slot) and the memory version its text was last
changed at (`revision`: a correction is a change of the profile, a mere reinforcement is not).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import Frozen

RemovalReason = Literal["superseded", "replaced", "retired", "archived", "deleted", "forgotten", "left"]
"""Why an entry left: a later change superseded it (a move, a change of diet), consolidation replaced or
retired its memory, governance archived or deleted it, the user forgot it, or it is no longer L3."""


class ProfileItem(Frozen):
    """One entry of the profile document."""

    memory_id: str
    slot: str
    domains: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    pinned: bool = False
    conflict_with: tuple[str, ...] = ()
    revision: int = Field(default=1, ge=1)


class ProfileRemoval(Frozen):
    """An entry that left the profile, and why."""

    memory_id: str
    reason: RemovalReason


class ProfileDocument(Frozen):
    """The user's profile at one version: the fold of their `ProfileChanged` events."""

    tenant_id: str
    user_id: str
    version: int = Field(default=0, ge=0)
    revision: int = Field(default=0, ge=0)
    """How many changes the stored document took, restarts included: the stores' write guard (`version`
    is the profile's own and starts again at 1 when the profile restarts)."""
    entries: tuple[ProfileItem, ...] = ()
    updated_at: datetime | None = None
    first_event_id: str = ""
    """The change it started with (version 1): another version 1 is a restarted profile, not a redelivery."""
    last_event_id: str = ""

    @property
    def member_ids(self) -> frozenset[str]:
        return frozenset(e.memory_id for e in self.entries)

    def entry(self, memory_id: str) -> ProfileItem | None:
        return next((e for e in self.entries if e.memory_id == memory_id), None)
