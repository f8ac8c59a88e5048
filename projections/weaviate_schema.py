"""Weaviate collections for current memory: names, properties, tenant names, object ids."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from engram.core.text_caches import registered
from engram.schemas.base import stable_id

MEMORIES = "EngramMemory"
SUMMARIES = "EngramSummary"
CARDS = "EngramCard"
TURNS = "EngramTurn"
USERS = "EngramUser"
SESSIONS = "EngramSession"
PROFILES = "EngramProfile"
COLLECTIONS = (MEMORIES, SUMMARIES, CARDS, TURNS, USERS, SESSIONS, PROFILES)

_TENANT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,60}$")


def tenant_name(tenant: str) -> str:
    """Weaviate tenant for an Engram tenant: the id itself when Weaviate allows it, else a hash."""
    if _TENANT_NAME.match(tenant):
        return tenant
    return "h-" + hashlib.sha1(tenant.encode("utf-8")).hexdigest()


def collection_prefix(namespace: str) -> str:
    """A collection-name prefix for a deployment namespace, injective: two namespaces never share one.

    Weaviate class names are ASCII letters, digits and `_`, starting with a capital, and
    Weaviate may compare them without case; so lowercase letters and digits stay as they
    are and every other character (capitals, `-`, `.`, `_`, non-ASCII) becomes `_` and
    the two hex digits of each of its UTF-8 bytes, after a leading `E`: "test-3f." ->
    "Etest_2d3f_2e", "probe-a" / "probe_a" / "probeA" -> "Eprobe_2da" / "Eprobe_5fa" /
    "Eprobe_41". The result has no capital after the first letter, so prefix + collection
    name ("EngramMemory", ...) decodes back to one namespace and one collection. "" stays "".
    """
    if not namespace:
        return ""
    return "E" + "".join(
        ch if ch in _PLAIN else "".join(f"_{byte:02x}" for byte in ch.encode("utf-8")) for ch in namespace)


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


@registered
@lru_cache(maxsize=1 << 16)
def object_id(kind: str, tenant: str, user: str, *key: str) -> str:
    """Deterministic object uuid: replays and duplicates overwrite, never add (cached: a turn asks for its
    user's and session's ids again, a memory change for its memory's; its keys hold user ids, so an erasure
    empties it with the other text caches)."""
    return stable_id("weaviate", kind, tenant, user, *key)


def collection_specs(wvc: Any) -> dict[str, dict[str, Any]]:
    """Keyword arguments for `client.collections.create`, per collection."""
    prop, dt, tok = wvc.config.Property, wvc.config.DataType, wvc.config.Tokenization

    def key(name: str) -> Any:
        return prop(name=name, data_type=dt.TEXT, tokenization=tok.FIELD)

    def blob(name: str) -> Any:
        return prop(name=name, data_type=dt.TEXT, index_filterable=False, index_searchable=False)

    def number(name: str, data_type: Any = None) -> Any:
        return prop(name=name, data_type=data_type or dt.NUMBER)

    def stored(name: str, data_type: Any = None) -> Any:
        """Returned with the object, never filtered, sorted or searched on: no inverted index to keep up."""
        data_type = data_type or dt.TEXT
        if data_type in (dt.TEXT, dt.TEXT_ARRAY):
            return prop(name=name, data_type=data_type, tokenization=tok.FIELD, index_filterable=False,
                        index_searchable=False)
        return prop(name=name, data_type=data_type, index_filterable=False)

    common = {"multi_tenancy_config": wvc.config.Configure.multi_tenancy(enabled=True, auto_tenant_creation=True)}
    return {
        MEMORIES: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [
                # filtered on: tenant_id, user_id, status, layer (and search_text searched); the rest are
                # kept for readers of the objects, without the per-object index work of a filterable property
                key("tenant_id"), key("user_id"), stored("memory_id"), stored("agent_id"), stored("session_id"),
                key("layer"), stored("type"), stored("slot"), key("status"), stored("topic"),
                prop(name="search_text", data_type=dt.TEXT, tokenization=tok.WHITESPACE),
                stored("importance", dt.NUMBER), stored("confidence", dt.NUMBER), stored("source_count", dt.INT),
                stored("version", dt.INT), stored("pinned", dt.BOOL),
                stored("last_seen_at", dt.DATE), stored("updated_at", dt.DATE),
                stored("source_message_ids", dt.TEXT_ARRAY), stored("embedding_model"), blob("record"),
            ],
        },
        SUMMARIES: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id"), key("session_id"), key("summary_id"),
                           number("version", dt.INT), blob("payload")],
        },
        CARDS: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id"), key("card_id"), number("version", dt.INT),
                           blob("payload")],
        },
        TURNS: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id"), key("session_id"), key("message_id"),
                           key("role"), number("position", dt.INT), prop(name="occurred_at", data_type=dt.DATE),
                           blob("content"), prop(name="search_text", data_type=dt.TEXT, tokenization=tok.WHITESPACE)],
        },
        USERS: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id")],
        },
        SESSIONS: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id"), key("session_id")],
        },
        PROFILES: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [key("tenant_id"), key("user_id"), number("version", dt.INT), blob("payload")],
        },
    }


def add_turn_search_text(collection: Any, wvc: Any) -> None:
    """A turn collection created before turns were searchable gains their `search_text` (turns recorded
    before then are found once re-projected)."""
    if "search_text" not in {p.name for p in collection.config.get().properties}:
        collection.config.add_property(wvc.config.Property(name="search_text", data_type=wvc.config.DataType.TEXT,
                                                           tokenization=wvc.config.Tokenization.WHITESPACE))
