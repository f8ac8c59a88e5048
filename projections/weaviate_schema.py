"""Weaviate collections for current memory: names, properties, tenant names, object ids."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from engram.schemas.base import stable_id

MEMORIES = "EngramMemory"
SUMMARIES = "EngramSummary"
CARDS = "EngramCard"
TURNS = "EngramTurn"
USERS = "EngramUser"
SESSIONS = "EngramSession"
COLLECTIONS = (MEMORIES, SUMMARIES, CARDS, TURNS, USERS, SESSIONS)

_TENANT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,60}$")


def tenant_name(tenant: str) -> str:
    """Weaviate tenant for an Engram tenant: the id itself when Weaviate allows it, else a hash."""
    if _TENANT_NAME.match(tenant):
        return tenant
    return "h-" + hashlib.sha1(tenant.encode("utf-8")).hexdigest()


def collection_prefix(namespace: str) -> str:
    """A valid collection-name prefix for a deployment namespace ("" stays ""): "test-3f.a" -> "Test3fA".

    Weaviate class names are letters and digits starting with a capital; each
    namespace gets its own six collections, so tests and rebuilds never mix.
    """
    words = [w for w in re.split(r"[^A-Za-z0-9]+", namespace) if w]
    joined = "".join(w[:1].upper() + w[1:] for w in words)
    if joined and not joined[0].isalpha():
        joined = "N" + joined
    return joined


def object_id(kind: str, tenant: str, user: str, *key: str) -> str:
    """Deterministic object uuid: replays and duplicates overwrite, never add."""
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

    common = {"multi_tenancy_config": wvc.config.Configure.multi_tenancy(enabled=True, auto_tenant_creation=True)}
    return {
        MEMORIES: {
            **common,
            "vector_config": wvc.config.Configure.Vectors.self_provided(),
            "properties": [
                key("tenant_id"), key("user_id"), key("memory_id"), key("agent_id"), key("session_id"),
                key("layer"), key("type"), key("slot"), key("status"), key("topic"),
                prop(name="search_text", data_type=dt.TEXT, tokenization=tok.WHITESPACE),
                number("importance"), number("confidence"), number("source_count", dt.INT),
                number("version", dt.INT), prop(name="pinned", data_type=dt.BOOL),
                prop(name="last_seen_at", data_type=dt.DATE), prop(name="updated_at", data_type=dt.DATE),
                prop(name="source_message_ids", data_type=dt.TEXT_ARRAY, tokenization=tok.FIELD),
                key("embedding_model"), blob("record"),
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
                           blob("content")],
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
    }
