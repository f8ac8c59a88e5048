"""Reading Weaviate objects back: fused search hits, vectors, turns, and the canonical dump that the
state hash and the store parity tests compare (every object's fields, its user text opened)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import numpy as np

from engram.schemas.memory import MemoryRecord

from .ports import RecentTurn, SearchHit
from .weaviate_schema import CARDS, MEMORIES, PROFILES, SESSIONS, SUMMARIES, TURNS
from .weaviate_sealing import SealedText


def canonical_sections(client: Any, prefix: str, text: SealedText) -> list[list[tuple[Any, ...]]]:
    def canonical(collection: str, fields: tuple[str, ...], field: str = "") -> list[tuple[Any, ...]]:
        return sorted(_canonical(client, prefix + collection, collection, fields, text, field))

    memories = canonical(MEMORIES, ("memory_id", "version", "status", "record"), "record")
    summaries = canonical(SUMMARIES, ("session_id", "version", "payload"), "payload")
    cards = canonical(CARDS, ("card_id", "version", "payload"), "payload")
    turns = [(t, u, s, m, role, content) for t, u, s, _p, m, role, content in
             canonical(TURNS, ("session_id", "position", "message_id", "role", "content"), "content")]
    sessions = canonical(SESSIONS, ("session_id",))
    profiles = canonical(PROFILES, ("version", "payload"), "payload")
    return [memories, summaries, cards, turns, sessions, profiles]


def _canonical(client: Any, name: str, collection: str, fields: tuple[str, ...], text: SealedText,
               field: str) -> Iterable[tuple[Any, ...]]:
    """Each object's fields, its text opened; an object whose key is destroyed is left out."""
    coll = client.collections.get(name)
    for tenant in coll.tenants.get():
        for obj in coll.with_tenant(tenant).iterator():
            p = dict(obj.properties)
            if field:
                opened = text.opened(collection, obj, field)
                if opened is None:
                    continue
                p[field] = opened
            yield (p["tenant_id"], p["user_id"], *(p[f] for f in fields))

def _fuse(dense: list[Any], sparse: list[Any], text: SealedText) -> list[SearchHit]:
    records: dict[str, tuple[MemoryRecord, np.ndarray | None]] = {}
    by_uuid: dict[Any, MemoryRecord] = {}  # an object found by both searches is decoded once
    vector_score: dict[str, float] = {}
    keyword_score: dict[str, float] = {}
    for obj in dense:
        found = text.record(obj)
        if found is None:
            continue
        record = by_uuid[obj.uuid] = found
        records[record.memory_id] = (record, _vector(obj))
        vector_score[record.memory_id] = 1.0 - float(obj.metadata.distance or 0.0)
    top = max((float(o.metadata.score or 0.0) for o in sparse), default=0.0) or 1.0
    for obj in sparse:
        known = by_uuid.get(obj.uuid) or text.record(obj)
        if known is None:
            continue
        record = known
        if record.memory_id not in records:
            records[record.memory_id] = (record, _vector(obj))
        keyword_score[record.memory_id] = float(obj.metadata.score or 0.0) / top
    hits = [SearchHit(rec, vector_score.get(i, 0.0), keyword_score.get(i, 0.0), vec)
            for i, (rec, vec) in records.items()]
    hits.sort(key=lambda h: (-(h.vector_score + h.keyword_score), h.record.memory_id))
    return hits


def _vector(obj: Any) -> np.ndarray | None:
    vector = obj.vector.get("default") if isinstance(obj.vector, dict) else obj.vector
    return np.asarray(vector, dtype=np.float32) if vector is not None else None


def _turn(p: dict[str, Any], content: str) -> RecentTurn:
    at = p["occurred_at"]
    return RecentTurn(p["session_id"], p["message_id"], p["role"], content,
                      at if isinstance(at, datetime) else datetime.fromisoformat(at), int(p["position"]))


def _unknown_tenant(exc: Exception) -> bool:
    text = str(exc).lower()
    return "tenant" in text and ("not found" in text or "not exist" in text or "does not exist" in text)
