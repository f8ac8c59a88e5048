"""Human and JSON renderings for the CLI."""

from __future__ import annotations

from contextlib import contextmanager
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import MemoryRecord

if TYPE_CHECKING:
    from engram.recall.service import RecallResult

    from .ingest_file import FileIngestResult


@contextmanager
def progress(total: int | None, label: str, enabled: bool, unit: str = "it") -> Iterator[tqdm]:
    bar = tqdm(total=total, desc=label, unit=unit, unit_scale=unit == "B", disable=not enabled, leave=False)
    try:
        yield bar
    finally:
        bar.close()


def ingest_summary(result: "FileIngestResult") -> str:
    r = result.report
    if r.runtime == "distributed":
        applied = ("not waited for (--no-wait)" if r.waited is None
                   else f"applied by the workers and projectors in {r.waited:.1f}s")
        return (f"produced {r.appended} turns to Kafka ({r.duplicates} already known, {_not_taken(result)}); "
                f"{applied}")
    return (
        f"ingested {r.appended} turns ({r.duplicates} already known, {_not_taken(result)})\n"
        f"skipped {r.events.get('TurnSkipped', 0)} turns as chit-chat or too short\n"
        f"memories changed: {r.events.get('MemoryChanged', 0)}; summaries: "
        f"{r.events.get('SummarySnapshotted', 0)}; guard actions: {r.events.get('GuardFired', 0)}"
    )


def _not_taken(result: "FileIngestResult") -> str:
    r = result.report
    parts = [f"{r.conflicts} conflicting", f"{result.invalid} invalid lines"]
    if too_large := r.rejected - r.conflicts:
        parts.append(f"{too_large} too large")
    if clamped := len(result.warnings):
        parts.append(f"{clamped} with times clamped")
    return ", ".join(parts)


ITEM_ID_NAMES = {"memory": "memory_id", "profile": "memory_id", "global": "card_id", "summary": "summary_id"}
"""A recalled item's id under its long name, by kind (as in the HTTP API's recall items)."""


def memory_dict(record: MemoryRecord) -> dict[str, Any]:
    """A memory for `--json`. `id` is the deprecated name of `memory_id`, kept for scripts of the first release."""
    return {
        "memory_id": record.memory_id, "id": record.memory_id, "type": record.type.value, "slot": record.slot, "layer": record.layer,
        "content": record.content, "confidence": record.confidence, "importance": record.importance,
        "source_count": record.source_count, "status": record.status, "pinned": record.pinned,
        "topic": record.topic, "negated": record.negated, "conflict_with": list(record.conflict_with),
        "source_message_ids": list(record.source_message_ids),
        "created_at": record.created_at.isoformat(), "updated_at": record.updated_at.isoformat(),
    }


def memory_table(records: list[MemoryRecord]) -> str:
    if not records:
        return "(no memories)"
    lines = [f"{len(records)} memories"]
    for r in records:
        flags = "".join(("📌" if r.pinned else "", "⚠" if r.conflict_with else ""))
        status = "" if r.status == "active" else f" ({r.status})"
        lines.append(f"- {r.memory_id[:8]} {r.stored_form}{status} ×{r.source_count} "
                     f"imp={r.importance:.2f} conf={r.confidence:.2f} {flags}".rstrip())
    return "\n".join(lines)


def recall_dict(result: "RecallResult") -> dict[str, Any]:
    return {
        "context": result.memory_section,
        "sections": {
            kind: [
                {"item_id": i.item_id, ITEM_ID_NAMES[i.kind]: i.item_id, "id": i.item_id, "kind": i.kind,
                 "text": i.text, "score": round(i.score, 4), "tokens": i.tokens,
                 "source_message_ids": list(i.source_message_ids), "conflict": i.conflict_note or None,
                 **i.details}
                for i in result.items if i.kind in kinds
            ]
            for kind, kinds in (("global", ("global",)), ("long_term", ("profile", "memory")),
                                ("summary", ("summary",)))
        },
        "recent": result.recent,
        "messages": result.messages(),
        "latency_ms": {"retrieval": round(result.retrieval_ms, 3), "build": round(result.build_ms, 3)},
        "deadline_exceeded": result.deadline_exceeded,
        "missed": list(result.missed),
        "recall_id": result.observation.recall_id,
        "user_known": result.user_known,
        "session_known": result.session_known,
    }


def recall_text(result: "RecallResult") -> str:
    body = result.memory_section or "(nothing recalled: no memory is injected)"
    timing = f"[{result.retrieval_ms + result.build_ms:.1f} ms, {len(result.items)} items, " \
             f"{len(result.recent)} recent messages]"
    if not result.user_known:
        timing += "\n(new user: nothing is recorded for this user yet)"
    elif not result.session_known:
        timing += "\n(new session: long-term memory only, no summary or recent messages yet)"
    return f"{body}\n\n{timing}"


def summary_text(snapshot: SummarySnapshotted) -> str:
    head = (f"session {snapshot.session_id} summary v{snapshot.version}: messages "
            f"{snapshot.range_start_message_id}..{snapshot.range_end_message_id} "
            f"({snapshot.source_message_count} new, {snapshot.total_message_count} in all)")
    return f"{head}\n{snapshot.sections.render()}"


def lineage_text(steps: list[dict[str, Any]]) -> str:
    """Lineage steps as dicts (`LineageStep.as_dict()` embedded, `lineage_steps` from ClickHouse)."""
    lines = []
    for step in steps:
        at = datetime.fromisoformat(step["at"])
        lines.append(f"{at:%Y-%m-%d %H:%M} {step['change']} ({step['relation']}, by {step['judge']}): {step['reason']}")
        before, after = step["before"], step["after"]
        if before is not None and after is not None and before != after:
            lines.append(f"    {before!r} -> {after!r}")
        elif after is not None:
            lines.append(f"    {after!r} [{step['status']}]")
        for turn in step["turns"]:
            lines.append(f"    from {turn['role']} message {turn['message_id']} in {turn['session_id']}: "
                         f"{turn['content']!r}")
    return "\n".join(lines)
