"""Turn search on Weaviate: BM25 over the turn collection's `search_text` (Engram's terms of the redacted
content, blind under the tenant's index key like the memories'), within one tenant and user."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram.core.text import terms

from .ports import RecentTurn, TurnHit
from .turn_index import answered_turn, searchable_turn
from .weaviate_schema import TURNS, object_id

WITHDRAWN = "\u2205withdrawn"
"""The `search_text` of a turn that is evidence no more (no query term matches it)."""

if TYPE_CHECKING:
    from .weaviate_store import WeaviateStore


REMEMBERED_SESSIONS = 100_000


def turn_search_text(store: WeaviateStore, tenant: str, user: str, turn: RecentTurn) -> str:
    """The blind terms of the turn and of the turn it answers (as the embedded `TurnIndex` indexes it)."""
    key = (tenant, user, turn.session_id)
    last = store.last_turns.get(key)
    if last is not None and turn.position <= last.position:  # a turn applied again (replay, redelivery)
        last = _previous_turn(store, tenant, user, turn)
    else:
        store.last_turns[key] = turn
        store.last_turns.move_to_end(key)
        if len(store.last_turns) > REMEMBERED_SESSIONS:
            store.last_turns.popitem(last=False)
    return " ".join(store._blind(tenant, list(terms(searchable_turn(turn, answered_turn(last, turn))))))


def _previous_turn(store: WeaviateStore, tenant: str, user: str, turn: RecentTurn) -> RecentTurn | None:
    """The turn just before `turn` in its session, as stored (so a turn applied again is indexed as the first
    time, not against the session's latest turn)."""
    from .weaviate_store import _turn

    store.flush()
    flt = store._wvc.query.Filter
    where = flt.all_of([store._where(tenant, user, session_id=turn.session_id),
                        flt.by_property("position").less_than(turn.position)])
    sort = store._wvc.query.Sort.by_property("position", ascending=False)
    for o in store._query(TURNS, tenant, where, limit=1, sort=sort):
        content = store.text.opened(TURNS, o, "content")
        if content is not None:
            return _turn(o.properties, content)
    return None


def search_turns(store: WeaviateStore, tenant: str, user: str, query: str, limit: int) -> list[TurnHit]:
    from .weaviate_store import _turn, _unknown_tenant

    store.flush()
    words = " ".join(store._blind(tenant, list(terms(query))))
    if not words:
        return []
    try:
        objs = store._tenant(TURNS, tenant).query.bm25(
            query=words, query_properties=["search_text"], limit=limit, filters=store._where(tenant, user),
            return_metadata=store._wvc.query.MetadataQuery(score=True)).objects
    except Exception as exc:
        if _unknown_tenant(exc):
            return []
        raise
    top = max((float(o.metadata.score or 0.0) for o in objs), default=0.0) or 1.0
    hits = []
    for o in objs:
        content = store.text.opened(TURNS, o, "content")
        if content is not None:
            hits.append(TurnHit(_turn(o.properties, content), float(o.metadata.score or 0.0) / top))
    hits.sort(key=lambda h: (-h.keyword_score, h.turn.position))
    return hits


def source_turns(store: WeaviateStore, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
    from .weaviate_store import _turn

    if not keys:
        return []
    store.flush()
    ids = [object_id("turn", tenant, user, session, message_id) for session, message_id in keys]
    flt = store._wvc.query.Filter
    found: dict[str, Any] = {str(o.uuid): o for o in store._query(TURNS, tenant, flt.by_id().contains_any(ids),
                                                                  limit=len(ids))}
    out = []
    for uid in ids:
        obj = found.get(uid)
        content = store.text.opened(TURNS, obj, "content") if obj is not None else None
        if obj is not None and content is not None and obj.properties.get("search_text") != WITHDRAWN:
            out.append(_turn(obj.properties, content))
    return out


def withdraw_turns(store: WeaviateStore, tenant: str, user: str, keys: list[tuple[str, str]]) -> int:
    """The turns lose their search terms and are marked withdrawn (`source_turns` skips them)."""
    from .weaviate_store import _unknown_tenant

    store.flush()
    found = 0
    for session, message_id in keys:
        try:
            store._tenant(TURNS, tenant).data.update(uuid=object_id("turn", tenant, user, session, message_id),
                                                     properties={"search_text": WITHDRAWN})
            found += 1
        except Exception as exc:
            if not _unknown_tenant(exc) and "not found" not in str(exc).lower():
                raise
    return found
