"""Event envelope shared by every Engram event, and deterministic ids."""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator

ENGRAM_NAMESPACE = uuid.UUID("6f1c2b9e-5d0a-4c57-9a61-2f0e8d7b3c41")

_ID_PATTERN = re.compile(r"^[^\s/\x00-\x1f\x7f\ud800-\udfff]{1,128}$")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_identifier(value: str) -> str:
    if not _ID_PATTERN.match(value):
        raise ValueError(
            "must be 1-128 characters of valid UTF-8 (no lone surrogate) with no whitespace, '/' or "
            "control characters"
        )
    return value


def check_utf8(value: str) -> str:
    """`value`, or ValueError when it holds a lone surrogate (a JSON "\\ud800" escape): such a string
    cannot be encoded as UTF-8, so it could be neither hashed into an id nor stored."""
    found = _SURROGATE.search(value)
    if found is not None:
        raise ValueError(f"is not valid UTF-8: a lone surrogate U+{ord(found.group()):04X} at position "
                         f"{found.start()}")
    return value


Identifier = Annotated[str, AfterValidator(_check_identifier)]
"""A tenant, user, agent, session or message id as clients send it."""


def utc(value: datetime) -> datetime:
    """Return `value` as an aware UTC datetime (naive values are taken as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


_NAMESPACE_BYTES = ENGRAM_NAMESPACE.bytes


def uuid5_text(name: str) -> str:
    """`str(uuid.uuid5(ENGRAM_NAMESPACE, name))`, without building UUID objects (hot path)."""
    digest = hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8")).digest()
    raw = bytearray(digest[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def derive_id(source_id: str, processor: str, index: int | str = 0) -> str:
    """Deterministic id of a derived event: replays produce the same ids."""
    return uuid5_text(f"{source_id}/{processor}/{index}")


def stable_id(*parts: str) -> str:
    """Deterministic id from a tuple of natural-key parts."""
    return uuid5_text("/".join(parts))


class Frozen(BaseModel):
    """Base for immutable value objects."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Event(Frozen):
    """Envelope: every event has an id, a type, a schema version and an event time.

    `causation_ids` are the ids of the events this one was derived from;
    `correlation_id` is the trace id of the chat turn that started the chain.
    """

    event_id: str
    type: str
    schema_version: int
    occurred_at: datetime
    tenant_id: Identifier
    user_id: Identifier
    causation_ids: tuple[str, ...] = ()
    correlation_id: str = ""

    @field_validator("occurred_at")
    @classmethod
    def _aware_utc(cls, value: datetime) -> datetime:
        return utc(value)

    @property
    def partition_key(self) -> str:
        """Every topic is keyed by tenant/user so one user's events stay ordered."""
        return f"{self.tenant_id}/{self.user_id}"
