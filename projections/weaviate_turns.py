"""Turn search on Weaviate: BM25 over the turn collection's `search_text` (Engram's terms of the redacted
content, blind under the tenant's index key like the memories') and the turns' own vectors (embedded in one
batch per flush), within one tenant and user, as the embedded `TurnIndex` searches them.

A turn is written once: a turn applied again (replay, redelivery) that Weaviate already holds is not written
again, so a withdrawn turn stays withdrawn. The turn a queued turn answers is checked at flush too: when it
is withdrawn, the new turn is indexed by its own words only; withdrawing a turn re-indexes the turn that
answers it the same way. So a withdrawn turn's words are found neither in it nor in its reply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engram.core.text import terms

from .ports import RecentTurn, TurnHit
from .turn_index import answered_turn, ranked_turns, searchable_turn, turn_vectors
from .weaviate_batch import Item
from .weaviate_schema import TURNS, object_id

WITHDRAWN = "\u2205withdrawn"
"""The `search_text` of a turn that is evidence no more (no query term matches it)."""

if TYPE_CHECKING:
    from .weaviate_store import WeaviateStore


REMEMBERED_SESSIONS = 100_000
SHOWN = ("tenant_id", "user_id", "session_id", "message_id", "role", "position", "occurred_at", "content")


@dataclass(frozen=True)
class QueuedTurn:
    tenant: str
    user: str
    turn: RecentTurn
    answered: RecentTurn | None


def queue_turn(store: WeaviateStore, tenant: str, user: str, turn: RecentTurn) -> QueuedTurn:
    """The turn with the turn it answers: the session's latest turn seen before it (a turn applied again,
    at or before the latest, answers none: it is not written again unless Weaviate lost it)."""
    key = (tenant, user, turn.session_id)
    last = store.last_turns.get(key)
    if last is not None and turn.position <= last.position:
        return QueuedTurn(tenant, user, turn, None)
    store.last_turns[key] = turn
    store.last_turns.move_to_end(key)
    if len(store.last_turns) > REMEMBERED_SESSIONS:
        store.last_turns.popitem(last=False)
    return QueuedTurn(tenant, user, turn, answered_turn(last, turn))


def turn_items(store: WeaviateStore, queued: dict[str, QueuedTurn]) -> dict[str, list[Item]]:
    """Per tenant, the objects of the queued turns Weaviate does not hold yet, each with its search terms
    (without those of a withdrawn turn it answers) and its vector (one embedder call for all)."""
    stored = _stored_search_text(store, queued)
    fresh = [(uid, q) for uid, q in queued.items() if uid not in stored]
    vectors = turn_vectors(store.embed_turns, [q.turn.content for _, q in fresh])
    out: dict[str, list[Item]] = {}
    for (uid, q), vector in zip(fresh, vectors):
        answered = q.answered
        if answered is not None and stored.get(_uid(q.tenant, q.user, answered)) == WITHDRAWN:
            answered = None
        text = " ".join(store._blind(q.tenant, list(terms(searchable_turn(q.turn, answered)))))
        t = q.turn
        props = {"tenant_id": q.tenant, "user_id": q.user, "session_id": t.session_id, "message_id": t.message_id,
                 "role": t.role, "position": t.position, "occurred_at": t.occurred_at, "content": t.content,
                 "search_text": text}
        sealed = store.text.sealed(TURNS, uid, q.tenant, q.user, props, "content")
        out.setdefault(q.tenant, []).append((uid, sealed, vector, 0))
    return out


def _uid(tenant: str, user: str, turn: RecentTurn) -> str:
    return object_id("turn", tenant, user, turn.session_id, turn.message_id)


def _stored_search_text(store: WeaviateStore, queued: dict[str, QueuedTurn]) -> dict[str, str]:
    """uuid -> stored `search_text` of the queued turns and of the turns they answer that Weaviate holds."""
    by_tenant: dict[str, set[str]] = {}
    for uid, q in queued.items():
        wanted = by_tenant.setdefault(q.tenant, set())
        wanted.add(uid)
        if q.answered is not None:
            wanted.add(_uid(q.tenant, q.user, q.answered))
    flt, out = store._wvc.query.Filter, {}

    def held(tenant: str, chunk: list[str]) -> list[Any]:
        return store._query(TURNS, tenant, flt.by_id().contains_any(chunk), limit=len(chunk), props=["search_text"])

    reads = []  # one query per tenant (and 1,000 turns), all at once on the store's check pool
    for tenant, uids in by_tenant.items():
        ordered = sorted(uids)
        reads += [store.check_pool.submit(held, tenant, ordered[start:start + 1000])
                  for start in range(0, len(ordered), 1000)]
    for read in reads:
        for o in read.result():
            out[str(o.uuid)] = str(o.properties.get("search_text") or "")
    return out


def search_turns(store: WeaviateStore, tenant: str, user: str, query: str, limit: int,
                 vector: np.ndarray | None) -> list[TurnHit]:
    from .weaviate_reads import _unknown_tenant

    store.flush()
    words = " ".join(store._blind(tenant, list(terms(query))))
    coll, where, meta = store._tenant(TURNS, tenant), store._where(tenant, user), store._wvc.query.MetadataQuery
    shown = list(SHOWN)  # not the (long) search terms: only the vector search needs them, to skip withdrawn turns
    sparse = store.read_pool.submit(
        lambda: coll.query.bm25(query=words, query_properties=["search_text"], limit=limit, filters=where,
                                return_properties=shown, return_metadata=meta(score=True)).objects
    ) if words and limit > 0 else None
    try:
        dense = coll.query.near_vector(near_vector=np.asarray(vector).tolist(), limit=limit, filters=where,
                                       return_properties=[*shown, "search_text"],
                                       return_metadata=meta(distance=True)).objects \
            if vector is not None and limit > 0 and np.any(vector) else []
        keyword = sparse.result() if sparse is not None else []
    except Exception as exc:
        if _unknown_tenant(exc):
            return []
        raise
    return _fused(store, keyword, [o for o in dense if o.properties.get("search_text") != WITHDRAWN])


def _fused(store: WeaviateStore, sparse: list[Any], dense: list[Any]) -> list[TurnHit]:
    """Hits of both searches, each object opened once: BM25 scaled to its best hit, cosine as it is."""
    from .weaviate_reads import _turn

    turns: dict[Any, RecentTurn] = {}
    keyword: dict[Any, float] = {}
    cosine: dict[Any, float] = {}
    top = max((float(o.metadata.score or 0.0) for o in sparse), default=0.0) or 1.0
    for objs, scores, score_of in ((sparse, keyword, lambda o: float(o.metadata.score or 0.0) / top),
                                   (dense, cosine, lambda o: max(0.0, 1.0 - float(o.metadata.distance or 0.0)))):
        for o in objs:
            if o.uuid not in turns:
                content = store.text.opened(TURNS, o, "content")
                if content is None:
                    continue
                turns[o.uuid] = _turn(o.properties, content)
            scores[o.uuid] = score_of(o)
    return ranked_turns([TurnHit(t, keyword.get(u, 0.0), cosine.get(u, 0.0)) for u, t in turns.items()
                         if keyword.get(u, 0.0) > 0 or cosine.get(u, 0.0) > 0])


def source_turns(store: WeaviateStore, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
    from .weaviate_reads import _turn

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
    """The turns lose their search terms and are marked withdrawn (`source_turns` skips them); the turn
    answering one is re-indexed by its own words."""
    from .weaviate_reads import _turn

    store.flush()
    found = 0
    for session, message_id in keys:
        obj = store._fetch_by_id(TURNS, tenant, object_id("turn", tenant, user, session, message_id))
        if obj is None or obj.properties.get("search_text") == WITHDRAWN:
            found += obj is not None
            continue
        store._tenant(TURNS, tenant).data.update(uuid=obj.uuid, properties={"search_text": WITHDRAWN})
        found += 1
        content = store.text.opened(TURNS, obj, "content")
        withdrawn = _turn(obj.properties, content or "")
        answer = _next_turn(store, tenant, user, withdrawn)
        if answer is not None and answered_turn(withdrawn, answer[1]) is not None:
            own = " ".join(store._blind(tenant, list(terms(searchable_turn(answer[1], None)))))
            store._tenant(TURNS, tenant).data.update(uuid=answer[0], properties={"search_text": own})
    return found


def _next_turn(store: WeaviateStore, tenant: str, user: str, turn: RecentTurn) -> tuple[Any, RecentTurn] | None:
    """The turn just after `turn` in its session (uuid and turn), unless it is withdrawn too."""
    from .weaviate_reads import _turn

    flt = store._wvc.query.Filter
    where = flt.all_of([store._where(tenant, user, session_id=turn.session_id),
                        flt.by_property("position").greater_than(turn.position)])
    sort = store._wvc.query.Sort.by_property("position", ascending=True)
    for o in store._query(TURNS, tenant, where, limit=1, sort=sort):
        content = store.text.opened(TURNS, o, "content")
        if content is not None and o.properties.get("search_text") != WITHDRAWN:
            return o.uuid, _turn(o.properties, content)
    return None
