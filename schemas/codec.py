"""Serialization of events, kept apart from the models, with upcasting on read."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from engram.core.crypto import SEALED, FieldCipher, open_sealed

from .base import Event
from .events import EVENT_TYPES, AnyEvent


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(AnyEvent)


class EventDecodeError(ValueError):
    """Raised for bytes that are not a valid event; the message is the reason."""


def _turn_v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """v1 turns named the message text `text` and had no metadata."""
    out = {k: v for k, v in raw.items() if k != "text"}
    out["content"] = raw.get("text", raw.get("content", ""))
    out.setdefault("metadata", {})
    out["schema_version"] = 2
    return out


def _unmarked_v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """v1 memory events had no `sensitive` mark on their candidate or records: none is read as none made."""
    return {**raw, "schema_version": 2}


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("TurnRecorded", 1): _turn_v1_to_v2,
    ("MemoryProposed", 1): _unmarked_v1_to_v2,
    ("MemoryChanged", 1): _unmarked_v1_to_v2,
}
"""(type, version) -> function lifting a raw dict to version + 1."""


@functools.cache
def current_version(event_type: str) -> int:
    """The schema version an event type is written with (cached: it is read once per decoded event)."""
    return int(EVENT_TYPES[event_type].model_fields["schema_version"].default)


def upcast(raw: dict[str, Any]) -> dict[str, Any]:
    """Lift a raw event dict to the current schema version of its type."""
    event_type = raw.get("type")
    if event_type not in EVENT_TYPES:
        raise EventDecodeError(f"unknown event type {event_type!r}")
    target = current_version(event_type)
    version = raw.get("schema_version")
    if not isinstance(version, int) or version < 1 or version > target:
        raise EventDecodeError(
            f"unknown schema version {version!r} for {event_type} (current is {target})"
        )
    while version < target:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise EventDecodeError(f"no upcaster for {event_type} v{version}")
        raw = step(raw)
        version = raw["schema_version"]
    return raw


def encode(event: Event, cipher: FieldCipher | None = None) -> bytes:
    """Compact JSON bytes of an event; with a cipher, its user text sealed under the owner's key."""
    serializer = event.__pydantic_serializer__
    if cipher is None:
        return serializer.to_json(event)
    # the JSON-mode dict directly (same values as parsing `to_json`'s bytes, half the time) ...
    try:
        return orjson.dumps(cipher.seal(serializer.to_python(event, mode="json")))
    except orjson.JSONEncodeError:  # ... except an integer past 64 bits: parsed from the bytes it is a float
        return orjson.dumps(cipher.seal(orjson.loads(serializer.to_json(event))))


def to_dict(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json")


def decode(data: bytes | str | dict[str, Any], cipher: FieldCipher | None = None) -> Event:
    """Parse bytes, text or a dict into the current event model, upcasting on the way.

    Sealed text (see `engram.core.crypto`) is opened with `cipher`; without the
    cipher or the owner's key it decodes as shredded (placeholders, text gone).
    """
    try:
        raw = data if isinstance(data, dict) else orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise EventDecodeError(f"not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise EventDecodeError("event must be a JSON object")
    if SEALED in raw:
        raw = open_sealed(dict(raw) if raw is data else raw, cipher)
    try:
        return _ADAPTER.validate_python(upcast(raw))
    except ValidationError as exc:
        raise EventDecodeError(_short_validation_message(exc)) from exc


def _short_validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        location = ".".join(str(p) for p in error["loc"])
        parts.append(f"{location}: {error['msg']}")
    return "invalid event: " + "; ".join(parts)
