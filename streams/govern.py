"""Governance: memory strength decays with time; weak memories are archived, then deleted.

Pure decisions for the consolidation processor, which owns a user's memories
and applies them when a `GovernanceTick` arrives. Time comes from the tick
(`as_of`), never from the clock, so a replay makes the same decisions.

Strength of a memory as of time `t`::

    half_life = lifetime_days[type] * (1 + log2(source_count))
    strength  = importance * conflict * 0.5 ** (max(0, t - last_seen_at) / half_life)
    conflict  = conflict_penalty if the memory is in conflict with another, else 1

- *Time decays*: `lifetime_days` (per type, `GovernanceConfig`) is the half-life
  of a memory mentioned once: task context fades in weeks, preferences in years.
- *Use reinforces*: every repeat of a memory (consolidation's `reinforced`)
  moves `last_seen_at` to the repeat, restarting the decay, raises
  `source_count`, lengthening the half-life (each doubling of mentions adds
  one lifetime), and bumps `importance`.
- *Conflicts weaken*: a memory contradicted by another counts `conflict_penalty`.

Eviction, below `evict_below_strength`: an active memory is first *archived*
(it leaves recall but is kept); an archived memory still below the threshold
is *deleted* by a later tick, at least `archive_grace_days` after it was
archived. So the same tick applied twice changes nothing the second time.

Safety valve, never evicted: importance >= `protect_importance`, pinned
memories and L3 persona. Global memory (user-managed cards) is never part of
this state, so no tick can reach it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal

from engram.core.config import GovernanceConfig
from engram.schemas.base import stable_id, utc
from engram.schemas.events import GovernanceTick
from engram.schemas.memory import PERSONA_SLOTS, MemoryRecord

SECONDS_PER_DAY = 86_400.0
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EvictionKind = Literal["archived", "deleted"]


@dataclass(frozen=True)
class Eviction:
    """One governance decision: archive an active memory or delete an archived one."""

    kind: EvictionKind
    before: MemoryRecord
    after: MemoryRecord | None
    strength: float
    reason: str


def governance_tick(tenant_id: str, user_id: str, as_of: datetime) -> GovernanceTick:
    """The tick for one user and instant; its id depends only on them (timers agree on ids)."""
    as_of = utc(as_of)
    event_id = stable_id("governance-tick", tenant_id, user_id, as_of.isoformat())
    return GovernanceTick(event_id=event_id, occurred_at=as_of, tenant_id=tenant_id, user_id=user_id,
                          correlation_id=event_id, as_of=as_of)


def tick_bucket(now: datetime, interval_seconds: float) -> datetime:
    """`now` rounded down to a multiple of the interval since the epoch (same bucket, same tick id)."""
    if interval_seconds <= 0:
        return utc(now)
    elapsed = (utc(now) - EPOCH).total_seconds()
    return EPOCH + timedelta(seconds=math.floor(elapsed / interval_seconds) * interval_seconds)


def half_life_days(record: MemoryRecord, cfg: GovernanceConfig) -> float:
    base = cfg.lifetime_days.get(record.type.value, cfg.default_lifetime_days)
    return max(base, 1e-9) * (1.0 + math.log2(max(record.source_count, 1)))


def strength(record: MemoryRecord, as_of: datetime, cfg: GovernanceConfig) -> float:
    """The memory's strength at `as_of` (see the module docstring for the formula)."""
    age_days = max(0.0, (as_of - record.last_seen_at).total_seconds() / SECONDS_PER_DAY)
    conflict = cfg.conflict_penalty if record.conflict_with else 1.0
    return record.importance * conflict * 0.5 ** (age_days / half_life_days(record, cfg))


def protected(record: MemoryRecord, cfg: GovernanceConfig) -> bool:
    """The safety valve: important, pinned and persona memories are never evicted."""
    return (record.importance >= cfg.protect_importance or record.pinned
            or record.layer == "L3" or record.slot in PERSONA_SLOTS)


def plan_evictions(active: Iterable[MemoryRecord], archived: Iterable[MemoryRecord], as_of: datetime,
                   cfg: GovernanceConfig) -> list[Eviction]:
    """Deletions of archived memories, then archivals of active ones, each sorted by memory id."""
    deletions = [e for r in sorted(archived, key=_by_id) if (e := _delete(r, as_of, cfg)) is not None]
    archivals = [e for r in sorted(active, key=_by_id) if (e := _archive(r, as_of, cfg)) is not None]
    return deletions + archivals


def _by_id(record: MemoryRecord) -> str:
    return record.memory_id


def _archive(record: MemoryRecord, as_of: datetime, cfg: GovernanceConfig) -> Eviction | None:
    if protected(record, cfg) or as_of <= record.last_seen_at:
        return None
    value = strength(record, as_of, cfg)
    if value >= cfg.evict_below_strength:
        return None
    after = record.model_copy(update={"status": "archived", "updated_at": as_of, "version": record.version + 1})
    return Eviction("archived", record, after, value, _reason("archived", value, cfg))


def _delete(record: MemoryRecord, as_of: datetime, cfg: GovernanceConfig) -> Eviction | None:
    """An archived memory goes for good once the grace period is over and it is still weak."""
    if as_of <= record.updated_at + timedelta(days=cfg.archive_grace_days) or protected(record, cfg):
        return None
    value = strength(record, as_of, cfg)
    if value >= cfg.evict_below_strength:
        return None
    return Eviction("deleted", record, None, value, _reason("deleted", value, cfg))


def _reason(kind: EvictionKind, value: float, cfg: GovernanceConfig) -> str:
    return f"{kind}: strength {value:.4f} below {cfg.evict_below_strength:g}"
