"""What both runtimes share of forget-as-erasure: the encryption switch and the erasure record."""

from __future__ import annotations

import os

from engram.schemas.base import derive_id
from engram.schemas.events import ErasureRecorded, ErasureScope, ForgetRequested

ENCRYPTION_ENV = "ENGRAM_ENCRYPTION"


def encryption_enabled(value: bool | None = None) -> bool:
    if value is not None:
        return value
    return os.environ.get(ENCRYPTION_ENV, "on").strip().lower() not in {"off", "0", "false", "no"}


def _scope(request: ForgetRequested) -> ErasureScope:
    if request.everything:
        return "everything"
    return "memories" if request.memory_ids else "topic"


def erasure_record(request: ForgetRequested, memory_ids: list[str], keys: int) -> ErasureRecorded:
    """The erasure record of a completed forget (what was erased, never its content); both runtimes."""
    ids = tuple(sorted(set(memory_ids)))
    return ErasureRecorded(
        event_id=derive_id(request.event_id, "erasure"), occurred_at=request.occurred_at,
        tenant_id=request.tenant_id, user_id=request.user_id, causation_ids=(request.event_id,),
        correlation_id=request.correlation_id, request_id=request.event_id, scope=_scope(request),
        requested_by=f"{request.tenant_id}/{request.user_id}", memories_erased=len(ids),
        memory_ids=ids, keys_destroyed=keys)
