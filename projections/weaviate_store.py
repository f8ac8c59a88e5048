"""The MemoryStore port on Weaviate: one Weaviate tenant per Engram tenant, own vectors.

Writes are buffered and flushed in batches. Weaviate has no conditional
write, so `flush` reads the stored versions of the buffered objects first and
drops anything older (the version guard); a single projector writes each
tenant/user partition, so nothing races it. Keyword search runs BM25 on a
`search_text` property holding Engram's own terms (CJK bigrams and stemmed
words), so both stores rank keywords the same way. With a master key configured
(the distributed runtime: `ENGRAM_MASTER_KEY`) those terms, and the `topic`
field, are stored blind: each term a keyed hash under a per-tenant index key
(`engram.core.crypto.blind_terms`), one term one token, so BM25 ranks exactly
as before while Weaviate's inverted index (whose LSM files keep a deleted
memory's terms until Weaviate compacts them) never holds a word of the user.
With a cipher (the distributed runtime with encryption on) every user-text
property (a memory's `record`, a summary's or card's `payload`, a turn's
`content`) is sealed under the owner's data key, bound to its collection and
uuid (`SealedText`): a forget destroys the key, so text that Weaviate flushed
to its LSM segments before the forget can no longer be read; an object whose
key is gone reads as absent.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from engram.core.crypto import FieldCipher, blind_terms, forget_blind_cache, index_key
from engram.core.erasure import encryption_enabled
from engram.core.keystore import master_key, master_key_configured
from engram.core.text import terms
from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord
from engram.schemas.profile import ProfileDocument

from .hybrid_index import searchable_text
from .weaviate_batch import Item, insert as insert_batch
from .weaviate_sealing import SealedText
from .ports import RecentTurn, SearchHit, TurnEmbedder, TurnHit, canonical_hash, check_owner
from .weaviate_schema import CARDS, COLLECTIONS, MEMORIES, PROFILES, SESSIONS, SUMMARIES, TURNS, USERS, \
    collection_prefix, add_turn_search_text, collection_specs, object_id, tenant_name
from .weaviate_profiles import profile_entries
from .weaviate_reads import _fuse, _turn, _unknown_tenant, canonical_sections
from .weaviate_turns import QueuedTurn, queue_turn, search_turns, source_turns, turn_items, withdraw_turns

log = logging.getLogger("engram.weaviate")
_MARKERS = frozenset({USERS, SESSIONS})
PAGE = 1000
MAX_BUFFERED = 2000
"""Buffered writes beyond this are flushed at once (the buffer is bounded)."""
WRITE_CHUNK = 500
MAX_MARKERS = 200_000
MAX_HANDLES = 10_000
READ_THREADS = 6
CHECK_THREADS = 4
"""A recall's four independent reads plus the keyword half of its search, with room to spare."""


def default_index_master() -> bytes | None:
    """The master key when one is configured and encryption is on (then every process of a deployment
    blinds the search terms the same way); None otherwise."""
    if not encryption_enabled():
        return None
    return master_key() if master_key_configured() else None


def _wvc() -> Any:
    import weaviate.classes as wvc

    return wvc


class WeaviateStore:
    """Current memory in Weaviate behind the same port as the embedded store."""

    def __init__(self, client: Any, embedding_model: str = "", prefix: str = "",
                 index_master: bytes | None | Literal["env"] = "env", cipher: FieldCipher | None = None) -> None:
        self._client = client
        self.prefix = collection_prefix(prefix)
        self._index_master = default_index_master() if index_master == "env" else index_master
        """With a master key the search terms are blind (keyed hashes: `engram.core.crypto.blind_terms`)."""
        self._index_keys: dict[str, bytes] = {}
        self.text = SealedText(cipher, self.prefix)
        """Seals the user-text properties with a cipher; without one they are stored as they are."""
        self._wvc = _wvc()
        self._embedding_model = embedding_model
        self._memories: dict[str, tuple[str, str, MemoryRecord, np.ndarray, str]] = {}
        self._other: dict[tuple[str, str], tuple[str, str, dict[str, Any], None, int]] = {}
        self._turns: dict[str, QueuedTurn] = {}
        """Turns queued by uuid: written at flush unless Weaviate holds them already (`weaviate_turns`)."""
        self.embed_turns: TurnEmbedder | None = None
        self._markers_written: set[str] = set()
        self._pending_profiles: dict[tuple[str, str], ProfileDocument] = {}
        """Profile documents queued and not yet flushed: what `profile_document` reads back first."""
        self._handles: dict[tuple[str, str], Any] = {}
        self.last_turns: OrderedDict[tuple[str, str, str], RecentTurn] = OrderedDict()
        """The latest turn written of each recent session: what the next turn answers (`weaviate_turns`)."""
        self.read_pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="engram-weaviate-read")
        self.check_pool = ThreadPoolExecutor(CHECK_THREADS, thread_name_prefix="engram-weaviate-check")
        """A flush's reads (one per collection and tenant) run here at once; a pool of its own, so a flush
        called from a reader on `read_pool` never waits for a slot it holds."""
        self.write_stats: Counter[str] = Counter()
        """Flushes, objects written and milliseconds spent (the projector logs them)."""
        """Reads are network round trips: the search's two halves, and RecallService's independent
        reads, overlap on this pool (the client is thread-safe); it lives as long as the connection."""
        self.ensure_collections()

    @classmethod
    def connect(cls, url: str, grpc_port: int = 50051, embedding_model: str = "", prefix: str = "",
                cipher: FieldCipher | None = None) -> "WeaviateStore":
        import weaviate
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        client = weaviate.connect_to_custom(
            http_host=parts.hostname or "127.0.0.1", http_port=parts.port or 8080, http_secure=False,
            grpc_host=parts.hostname or "127.0.0.1", grpc_port=grpc_port, grpc_secure=False,
            skip_init_checks=True)
        return cls(client, embedding_model, prefix, cipher=cipher)

    def close(self) -> None:
        self.read_pool.shutdown(wait=False)
        self.check_pool.shutdown(wait=False)
        self._client.close()

    def ensure_collections(self) -> None:
        """Create the missing collections; another process creating one at the same time is fine."""
        existing = set(self._client.collections.list_all(simple=True))
        for name, spec in collection_specs(self._wvc).items():
            if self.prefix + name in existing and name == TURNS:
                add_turn_search_text(self._client.collections.get(self.prefix + name), self._wvc)
            if self.prefix + name not in existing:
                try:
                    self._client.collections.create(self.prefix + name, **spec)
                except Exception:
                    if not self._client.collections.exists(self.prefix + name):
                        raise

    def _tenant(self, collection: str, tenant: str) -> Any:
        """The collection handle of one tenant (kept: building one costs more than the write of a small batch)."""
        handle = self._handles.get((collection, tenant))
        if handle is None:
            if len(self._handles) > MAX_HANDLES:
                self._handles.clear()
            coll = self._client.collections.get(self.prefix + collection)
            handle = self._handles[(collection, tenant)] = coll.with_tenant(tenant_name(tenant))
        return handle

    def _where(self, tenant: str, user: str, **equal: Any) -> Any:
        flt = self._wvc.query.Filter
        clauses = [flt.by_property("tenant_id").equal(tenant), flt.by_property("user_id").equal(user)]
        clauses += [flt.by_property(k).equal(v) for k, v in equal.items()]
        return flt.all_of(clauses)

    # -- memories -----------------------------------------------------------------
    def upsert_memory(self, tenant: str, user: str, record: MemoryRecord, vector: np.ndarray,
                      context: str = "") -> None:
        check_owner(tenant, user, record.tenant_id, record.user_id)
        uid = object_id("memory", tenant, user, record.memory_id)
        queued = self._memories.get(uid)
        if queued is None or queued[2].version < record.version:
            self._memories[uid] = (tenant, user, record, np.asarray(vector, dtype=np.float32), context)
        self._touch_user(tenant, user)

    def delete_memory(self, tenant: str, user: str, memory_id: str) -> bool:
        uid = object_id("memory", tenant, user, memory_id)
        self.flush()
        if self._fetch_by_id(MEMORIES, tenant, uid) is None:
            return False
        return bool(self._tenant(MEMORIES, tenant).data.delete_by_id(uid))

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord | None:
        self.flush()
        obj = self._fetch_by_id(MEMORIES, tenant, object_id("memory", tenant, user, memory_id))
        return self.text.record(obj) if obj is not None else None

    def list_memories(self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)) -> list[MemoryRecord]:
        self.flush()
        flt = self._wvc.query.Filter
        where = flt.all_of([self._where(tenant, user), flt.by_property("status").contains_any(list(statuses))])
        records = self.text.records(self._all(MEMORIES, tenant, where, props=["record"]))
        return sorted(records, key=lambda r: (r.created_at, r.memory_id))

    def persona_memories(self, tenant: str, user: str) -> list[MemoryRecord]:
        self.flush()
        where = self._where(tenant, user, status="active", layer="L3")
        records = self.text.records(self._all(MEMORIES, tenant, where, props=["record"]))
        return sorted(records, key=lambda r: (r.slot, r.memory_id))

    def profile_entries(self, tenant: str, user: str, limit: int,
                        vector: np.ndarray | None = None) -> list[MemoryRecord]:
        return profile_entries(self, tenant, user, limit, vector)

    def put_profile(self, tenant: str, user: str, document: ProfileDocument) -> bool:
        check_owner(tenant, user, document.tenant_id, document.user_id)
        held = self._pending_profiles.get((tenant, user))
        if held is not None and held.revision >= document.revision:
            return False
        props = {"tenant_id": tenant, "user_id": user, "version": document.revision,
                 "payload": document.model_dump_json()}
        uid = object_id("profile", tenant, user)
        self._pending_profiles[(tenant, user)] = document
        self._queue(PROFILES, tenant, user, uid, self.text.sealed(PROFILES, uid, tenant, user, props, "payload"),
                    document.revision)
        return True

    def profile_document(self, tenant: str, user: str) -> ProfileDocument | None:
        """The queued document if one is (a single projector writes each user), else the stored one."""
        held = self._pending_profiles.get((tenant, user))
        if held is not None:
            return held
        obj = self._fetch_by_id(PROFILES, tenant, object_id("profile", tenant, user))
        payload = self.text.opened(PROFILES, obj, "payload") if obj is not None else None
        return ProfileDocument.model_validate_json(payload) if payload is not None else None

    def search_memories(self, tenant: str, user: str, query: str, vector: np.ndarray, limit: int) -> list[SearchHit]:
        self.flush()
        where = self._where(tenant, user, status="active")
        meta = self._wvc.query.MetadataQuery
        coll = self._tenant(MEMORIES, tenant)
        words = " ".join(self._blind(tenant, terms(query)))
        # only the record blob comes back: the other properties would double the transfer and decode time;
        # the keyword search runs on a second thread while this one waits for the vector search
        sparse = self.read_pool.submit(
            lambda: coll.query.bm25(query=words, query_properties=["search_text"], limit=limit, filters=where,
                                    include_vector=True, return_properties=["record"],
                                    return_metadata=meta(score=True)).objects) if words else None
        try:
            dense = coll.query.near_vector(near_vector=np.asarray(vector).tolist(), limit=limit, filters=where,
                                           include_vector=True, return_properties=["record"],
                                           return_metadata=meta(distance=True)).objects
            keyword = sparse.result() if sparse is not None else []
        except Exception as exc:
            if _unknown_tenant(exc):
                return []
            raise
        return _fuse(dense, keyword, self.text)

    # -- summaries, cards, turns, users -----------------------------------------------
    def upsert_summary(self, tenant: str, user: str, snapshot: SummarySnapshotted) -> bool:
        check_owner(tenant, user, snapshot.tenant_id, snapshot.user_id)
        props = {"tenant_id": tenant, "user_id": user, "session_id": snapshot.session_id,
                 "summary_id": snapshot.summary_id, "version": snapshot.version,
                 "payload": snapshot.model_dump_json()}
        uid = object_id("summary", tenant, user, snapshot.session_id, str(snapshot.version))
        self._queue(SUMMARIES, tenant, user, uid, self.text.sealed(SUMMARIES, uid, tenant, user, props, "payload"),
                    snapshot.version)
        return True

    def latest_summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        self.flush()
        sort = self._wvc.query.Sort.by_property("version", ascending=False)
        objs = self._query(SUMMARIES, tenant, self._where(tenant, user, session_id=session), limit=1, sort=sort,
                           props=["payload"])
        payload = self.text.opened(SUMMARIES, objs[0], "payload") if objs else None
        return SummarySnapshotted.model_validate_json(payload) if payload is not None else None

    def upsert_card(self, tenant: str, user: str, card: GlobalCard) -> bool:
        check_owner(tenant, user, card.tenant_id, card.user_id)
        props = {"tenant_id": tenant, "user_id": user, "card_id": card.card_id, "version": card.version,
                 "payload": card.model_dump_json()}
        uid = object_id("card", tenant, user, card.card_id)
        self._queue(CARDS, tenant, user, uid, self.text.sealed(CARDS, uid, tenant, user, props, "payload"),
                    card.version)
        self._touch_user(tenant, user)  # as the embedded store: a user with only a card is a known user
        return True

    def list_cards(self, tenant: str, user: str) -> list[GlobalCard]:
        self.flush()
        payloads = (self.text.opened(CARDS, o, "payload")
                    for o in self._all(CARDS, tenant, self._where(tenant, user), props=["payload"]))
        cards = [GlobalCard.model_validate_json(p) for p in payloads if p is not None]
        return sorted(cards, key=lambda c: c.card_id)

    def embed_turns_with(self, embed: TurnEmbedder) -> None:
        self.embed_turns = embed

    def add_turn(self, tenant: str, user: str, turn: RecentTurn) -> None:
        """Queued; at `flush` the turns Weaviate does not hold yet are embedded in one call and written."""
        uid = object_id("turn", tenant, user, turn.session_id, turn.message_id)
        if uid not in self._turns:
            self._turns[uid] = queue_turn(self, tenant, user, turn)
        self._queue(SESSIONS, tenant, user, object_id("session", tenant, user, turn.session_id),
                    {"tenant_id": tenant, "user_id": user, "session_id": turn.session_id}, 0)
        self._touch_user(tenant, user)

    def recent_turns(self, tenant: str, user: str, session: str, limit: int) -> list[RecentTurn]:
        self.flush()
        sort = self._wvc.query.Sort.by_property("position", ascending=False)
        objs = self._query(TURNS, tenant, self._where(tenant, user, session_id=session), limit=limit, sort=sort)
        turns = ((o.properties, self.text.opened(TURNS, o, "content")) for o in reversed(objs))
        return [_turn(p, content) for p, content in turns if content is not None]

    def turn_neighbours(self, tenant: str, user: str, session: str, message_id: str) -> list[RecentTurn]:
        self.flush()
        own = self._fetch_by_id(TURNS, tenant, object_id("turn", tenant, user, session, message_id))
        if own is None:
            return []
        position, flt = int(own.properties["position"]), self._wvc.query.Filter
        out = []
        for before in (True, False):
            side = flt.by_property("position")
            where = flt.all_of([self._where(tenant, user, session_id=session),
                                side.less_than(position) if before else side.greater_than(position)])
            sort = self._wvc.query.Sort.by_property("position", ascending=not before)
            for o in self._query(TURNS, tenant, where, limit=1, sort=sort):
                content = self.text.opened(TURNS, o, "content")
                if content is not None:
                    out.append(_turn(o.properties, content))
        return out

    def search_turns(self, tenant: str, user: str, query: str, limit: int,
                     vector: np.ndarray | None = None) -> list[TurnHit]:
        return search_turns(self, tenant, user, query, limit, vector)

    def source_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
        return source_turns(self, tenant, user, keys)

    def recorded_turns(self, tenant: str, keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], tuple[str, str]]:
        """(user, session, message_id) -> (role, redacted content) for those of `keys` already projected."""
        ids = {object_id("turn", tenant, *key): key for key in keys}
        uids, flt = list(ids), self._wvc.query.Filter
        out: dict[tuple[str, str, str], tuple[str, str]] = {}
        for start in range(0, len(uids), PAGE):
            chunk = uids[start:start + PAGE]
            for o in self._query(TURNS, tenant, flt.by_id().contains_any(chunk), limit=len(chunk),
                                 props=["role", "content"]):
                content = self.text.opened(TURNS, o, "content")
                if content is not None:
                    out[ids[str(o.uuid)]] = (o.properties["role"], content)
        return out

    def has_user(self, tenant: str, user: str) -> bool:
        self.flush()
        return self._fetch_by_id(USERS, tenant, object_id("user", tenant, user)) is not None

    def has_session(self, tenant: str, user: str, session: str) -> bool:
        self.flush()
        return self._fetch_by_id(SESSIONS, tenant, object_id("session", tenant, user, session)) is not None

    def session_users(self, tenant: str, session: str) -> list[str]:
        self.flush()
        flt = self._wvc.query.Filter
        where = flt.all_of([flt.by_property("tenant_id").equal(tenant), flt.by_property("session_id").equal(session)])
        return sorted({o.properties["user_id"] for o in self._all(SESSIONS, tenant, where)})

    def withdraw_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> int:
        return withdraw_turns(self, tenant, user, keys)

    def forget_context(self, tenant: str, user: str) -> int:
        """Delete the user's session summaries and recent-turn window; return the objects deleted."""
        self.flush()
        forget_blind_cache()
        for key in [k for k in self.last_turns if k[:2] == (tenant, user)]:
            del self.last_turns[key]
        deleted = 0
        for collection in (SUMMARIES, TURNS):
            try:
                result = self._tenant(collection, tenant).data.delete_many(where=self._where(tenant, user))
            except Exception as exc:
                if _unknown_tenant(exc):
                    continue
                raise
            deleted += int(result.successful)
        return deleted

    def _touch_user(self, tenant: str, user: str) -> None:
        self._queue(USERS, tenant, user, object_id("user", tenant, user), {"tenant_id": tenant, "user_id": user}, 0)

    # -- buffering -------------------------------------------------------------------------
    def _queue(self, collection: str, tenant: str, user: str, uid: str, props: dict[str, Any], version: int) -> None:
        if collection in _MARKERS and uid in self._markers_written:
            return  # a user or session marker never changes once written: one write, not one per turn
        queued = self._other.get((collection, uid))
        if queued is None or queued[4] <= version:
            self._other[(collection, uid)] = (tenant, user, props, None, version)
        if len(self._other) + len(self._memories) + len(self._turns) >= MAX_BUFFERED:
            self.flush()

    def flush(self) -> None:
        """Write buffered objects, newest version only, every collection and tenant in one gRPC batch.

        The reads a flush needs first (which queued turns Weaviate holds, the stored versions of versioned
        objects) are one query per collection and tenant; they run at once on `check_pool`, so a flush
        costs about one read's round trip and the insert, not one round trip per collection and tenant.
        """
        if not self._memories and not self._other and not self._turns:
            return
        start = time.perf_counter()
        rows: dict[tuple[str, str], list[Item]] = {}
        turns, self._turns = self._turns, {}
        for uid, (tenant, user, record, vector, context) in self._memories.items():
            rows.setdefault((MEMORIES, tenant), []).append(
                (uid, self.text.sealed(MEMORIES, uid, tenant, user, self._memory_props(tenant, user, record, context),
                                       "record"), vector, record.version))
        for (collection, uid), (tenant, _user, props, other_vector, version) in self._other.items():
            rows.setdefault((collection, tenant), []).append((uid, props, other_vector, version))
        self._memories.clear()
        self._other.clear()
        self._pending_profiles.clear()
        checked = {key: self.check_pool.submit(self._newer, *key, items) for key, items in rows.items()}
        for tenant, items in turn_items(self, turns).items():
            rows.setdefault((TURNS, tenant), []).extend(items)
        newer = {key: checked[key].result() if key in checked else items for key, items in rows.items()}
        read = time.perf_counter()
        groups = [(self._tenant(*key), items) for key, items in newer.items() if items]
        rejected = insert_batch(groups, WRITE_CHUNK)
        self.write_stats.update(writes=1, objects=sum(map(len, rows.values())),
                                memories=sum(len(items) for (collection, _t), items in rows.items()
                                             if collection == MEMORIES),
                                ms=round(1000 * (time.perf_counter() - start)),
                                read_ms=round(1000 * (read - start)))
        if rejected:
            raise RuntimeError(f"weaviate rejected {len(rejected)} objects: {rejected[0][0]}: {rejected[0][1]}")
        if len(self._markers_written) > MAX_MARKERS:
            self._markers_written.clear()
        self._markers_written.update(uid for (collection, _t), items in rows.items() if collection in _MARKERS
                                     for uid, *_ in items)

    def _newer(self, collection: str, tenant: str, items: list[Item]) -> list[Item]:
        """The version guard: of versioned objects, only those newer than what Weaviate holds."""
        if collection not in (MEMORIES, SUMMARIES, CARDS, PROFILES):
            return items
        stored = self._stored_versions(collection, tenant, [uid for uid, *_ in items])
        return [i for i in items if i[3] > stored.get(i[0], 0)]

    def _stored_versions(self, collection: str, tenant: str, uids: list[str]) -> dict[str, int]:
        flt = self._wvc.query.Filter
        out: dict[str, int] = {}
        for start in range(0, len(uids), PAGE):
            chunk = uids[start:start + PAGE]
            objs = self._query(collection, tenant, flt.by_id().contains_any(chunk), limit=len(chunk),
                               props=["version"])
            out.update({str(o.uuid): int(o.properties["version"]) for o in objs})
        return out

    def _memory_props(self, tenant: str, user: str, r: MemoryRecord, context: str = "") -> dict[str, Any]:
        return {
            "tenant_id": tenant, "user_id": user, "memory_id": r.memory_id, "agent_id": r.agent_id,
            "session_id": r.session_id, "layer": r.layer, "type": r.type.value, "slot": r.slot, "status": r.status,
            "topic": " ".join(self._blind(tenant, [r.topic])) if r.topic else "",
            "search_text": " ".join(self._blind(tenant, terms(searchable_text(r, context)))),
            "importance": r.importance, "confidence": r.confidence, "source_count": r.source_count,
            "version": r.version, "pinned": r.pinned, "last_seen_at": r.last_seen_at, "updated_at": r.updated_at,
            "source_message_ids": list(r.source_message_ids), "embedding_model": self._embedding_model,
            "record": r.model_dump_json(),
        }

    def _blind(self, tenant: str, words: list[str]) -> list[str]:
        """Search terms as stored: keyed hashes under the tenant's index key, or as they are without one."""
        if self._index_master is None:
            return words
        key = self._index_keys.get(tenant)
        if key is None:
            key = self._index_keys[tenant] = index_key(self._index_master, f"weaviate|{self.prefix}|{tenant}")
        return blind_terms(key, words)

    # -- reads ------------------------------------------------------------------------------
    def _query(self, collection: str, tenant: str, where: Any, limit: int, sort: Any = None,
               offset: int = 0, props: list[str] | None = None) -> list[Any]:
        try:
            return list(self._tenant(collection, tenant).query.fetch_objects(
                filters=where, limit=limit, offset=offset, sort=sort, return_properties=props).objects)
        except Exception as exc:
            if _unknown_tenant(exc):
                return []
            raise

    def _all(self, collection: str, tenant: str, where: Any, props: list[str] | None = None) -> Iterable[Any]:
        offset = 0
        while True:
            page = self._query(collection, tenant, where, limit=PAGE, offset=offset, props=props)
            yield from page
            if len(page) < PAGE:
                return
            offset += PAGE

    def _fetch_by_id(self, collection: str, tenant: str, uid: str) -> Any | None:
        try:
            return self._tenant(collection, tenant).query.fetch_object_by_id(uid)
        except Exception as exc:
            if _unknown_tenant(exc):
                return None
            raise

    # -- housekeeping -----------------------------------------------------------------------------
    def forget_cache(self) -> None:
        self._memories.clear()
        self._other.clear()
        self._turns.clear()
        self._pending_profiles.clear()
        self._markers_written.clear()
        self.last_turns.clear()

    def clear(self) -> None:
        """Drop every Engram collection (a rebuild recreates them)."""
        self.drop()
        self.ensure_collections()

    def drop(self) -> None:
        """Delete this store's collections (every tenant's objects with them)."""
        self.forget_cache()
        self._handles.clear()
        for name in COLLECTIONS:
            if self._client.collections.exists(self.prefix + name):
                self._client.collections.delete(self.prefix + name)

    def state_hash(self) -> str:
        """The same canonical hash as the embedded store, over every tenant."""
        self.flush()
        return canonical_hash(self.canonical_sections())

    def canonical_sections(self) -> list[list[tuple[Any, ...]]]:
        return canonical_sections(self._client, self.prefix, self.text)
