"""What a state has applied, stored in the same table value as the state itself.

At-least-once delivery replays inputs after a crash, and a replayed upstream
stage re-emits derived events it had already emitted (same ids, new offsets).
So every keyed state carries `Applied`: per origin partition, the highest
*origin position* it has applied, plus a bounded window of recent event ids.

The origin of a record is the L0 record it descends from: an L0 record (turn,
command) is its own origin, `(topic, partition) @ (offset,)`; a derived event
carries its origin in the `engram-origin` header, extended by its index among
the outputs of its parent, e.g. the 2nd candidate of the turn at offset 41 is
`@ (41, 1)`. Per key, origins are *applied* in increasing order, so an input
at or below the mark was applied before, and is skipped. That order is not the
arrival order: after a rebalance two producers (the old and the new owner of
a turns partition) can land a later turn's candidates before earlier ones, and
a mark alone would then skip the earlier ones for good. The chain gate
(`engram.distributed.chain`) restores it: every derived record of an L0 input
names its predecessor in its origin partition, and a stage holds a record back
until its predecessor is applied. So per origin partition the applied
positions are exactly a prefix of the chain (compactly: its last position),
whatever order records arrive in; the mark here is that set seen from one key,
and a position at or below it is a replay. The id window catches the remaining
case, an edge re-sending an event it already sent.

Because the marks live in the same value as the state, one changelog write
records both: there is no moment where a state is stored without knowing
what it contains.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import orjson
from pydantic import BaseModel

from engram.core.crypto import FieldCipher

from .erasure import open_state, seal_state

ORIGIN_HEADER = "engram-origin"
TYPE_HEADER = "engram-type"
DEFAULT_RECENT_IDS = 256

Position = tuple[int, ...]
S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class Origin:
    """The L0 record an input descends from: `topic:partition` and a position in it."""

    tp: str
    position: Position

    def child(self, index: int) -> Origin:
        return Origin(self.tp, self.position + (index,))

    def header(self) -> bytes:
        return ":".join((self.tp, *map(str, self.position))).encode()

    @classmethod
    def parse(cls, raw: bytes | str) -> Origin | None:
        """Parse a header value; None when it is malformed (then the record is its own origin)."""
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        topic, _, rest = text.partition(":")
        parts = rest.split(":")
        if not topic or len(parts) < 2 or not all(p.isdigit() for p in parts):
            return None
        return cls(f"{topic}:{parts[0]}", tuple(int(p) for p in parts[1:]))


def origin_of(topic: str, partition: int, offset: int, headers: Sequence[tuple[str, bytes]]) -> Origin:
    """The origin of a record: from its header if it has one, else the record itself."""
    for name, value in headers:
        if name == ORIGIN_HEADER:
            parsed = Origin.parse(value)
            if parsed is not None:
                return parsed
    return Origin(f"{topic}:{partition}", (offset,))


@dataclass
class Applied:
    """Per origin partition the highest position applied, and the last applied event ids."""

    marks: dict[str, list[int]] = field(default_factory=dict)
    recent: list[str] = field(default_factory=list)

    def seen(self, origin: Origin, event_id: str) -> bool:
        mark = self.marks.get(origin.tp)
        if mark is not None and origin.position <= tuple(mark):
            return True
        return event_id in self.recent

    def record(self, origin: Origin, event_id: str, window: int = DEFAULT_RECENT_IDS) -> None:
        self.marks[origin.tp] = list(origin.position)
        if window > 0:
            self.recent.append(event_id)
            if len(self.recent) > window:
                del self.recent[: len(self.recent) - window]

    def to_json(self) -> bytes:
        return orjson.dumps({"marks": self.marks, "recent": self.recent})

    @classmethod
    def from_json(cls, raw: bytes) -> Applied:
        data = orjson.loads(raw)
        return cls(marks=dict(data.get("marks", {})), recent=list(data.get("recent", [])))


@dataclass
class Entry(Generic[S]):
    """One table value: the processor's state and what it has applied."""

    applied: Applied
    state: S | None


def encode_entry(entry: Entry[S], cipher: FieldCipher | None = None, key: bytes = b"") -> bytes:
    """`applied` JSON, a newline, then the state's JSON (`null` for none); JSON never holds a raw newline.

    With a cipher the state's JSON is sealed under the owner's key (`key` is the table key,
    `tenant/user`; see `engram.distributed.erasure`); `applied` stays readable.
    """
    state = entry.state
    body = state.__pydantic_serializer__.to_json(state) if state is not None else b"null"
    if cipher is not None:
        body = seal_state(cipher, key, body)
    return entry.applied.to_json() + b"\n" + body


def decode_entry(raw: bytes, state_type: type[S], cipher: FieldCipher | None = None, key: bytes = b"") -> Entry[S]:
    """The entry back; a sealed state whose key is destroyed reads as no state."""
    head, _, body = raw.partition(b"\n")
    body = open_state(cipher, key, body)
    state = None if body in (b"", b"null") else state_type.model_validate_json(body)
    return Entry(Applied.from_json(head), state)
