"""The standing profile's entries on Weaviate: the members of the user's profile document, read in one
bounded query."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engram.schemas.memory import MemoryRecord

from .ports import profile_order
from .weaviate_reads import _unknown_tenant
from .weaviate_schema import MEMORIES, object_id

if TYPE_CHECKING:
    from .weaviate_store import WeaviateStore


def profile_entries(store: WeaviateStore, tenant: str, user: str, limit: int,
                    vector: np.ndarray | None = None) -> list[MemoryRecord]:
    """Importance is stored, not indexed for sorting: with a `vector`, one bounded read of the entries
    nearest it (all of them when there are no more than `limit`); without, every entry. The entries
    are the members of the profile document (the L3 memories while the user has none yet)."""
    document = store.profile_document(tenant, user)
    if document is not None and not document.entries:
        return []
    if vector is None and document is None:
        return sorted(store.persona_memories(tenant, user), key=profile_order)[:limit]
    store.flush()
    where = store._where(tenant, user, status="active", layer="L3")
    if document is not None:
        ids = [object_id("memory", tenant, user, m) for m in sorted(document.member_ids)]
        where = store._wvc.query.Filter.all_of([where, store._wvc.query.Filter.by_id().contains_any(ids)])
        if vector is None or len(ids) <= limit:
            return sorted(store.text.records(store._all(MEMORIES, tenant, where, props=["record"])),
                          key=profile_order)[:limit]
    try:
        found = store._tenant(MEMORIES, tenant).query.near_vector(
            near_vector=np.asarray(vector).tolist(), limit=limit, filters=where,
            return_properties=["record"]).objects
    except Exception as exc:
        if _unknown_tenant(exc):
            return []
        raise
    return sorted(store.text.records(found), key=profile_order)
