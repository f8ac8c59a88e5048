"""Origin order that survives a rebalance: each derived record names its predecessor.

Why it is needed. A stage reading a derived topic (consolidation reads the
candidates) used to assume that, per origin partition, records arrive in
origin order, except for replays of what it already saw. Two producers break
that: when partitions of the turns topic move (a worker killed, one joining),
the old owner may still land a batch it computed while the new owner has begun
producing from the durable progress. The candidates partition then holds, say,
the new owner's candidates of turns 100-120, the old owner's of turns 200-299,
then the new owner's of 121-199. A high-water mark skips 121-199 (memories lost)
and, applied as they come, a user's "no longer likes python" (turn 150) would be
applied after a later turn's candidate, not in the embedded run's order.

The mechanism. A stage that reads an L0 topic (turns, commands) is the only
producer of its outputs' origin positions, and its outputs are a pure function
of the L0 partition's content. So, per origin partition and destination
partition, its outputs form a chain that every producer (old owner, new owner,
a replay) derives identically. `ChainLinks` stamps each output with the origin
position of the previous output of the same origin partition to the same
destination partition (`engram-prev`; `-` for the first), keeping the chain's
last position in the stage's progress value (so it lands atomically with the
progress, and a replay from that progress re-derives the same links).

`ChainGate`, in front of a stage reading a derived topic, keeps per origin
partition the `head` (the last position applied, in chain order) and releases
a record only when its predecessor is the head; a record whose predecessor has
not arrived yet is held back, with its bytes, in the progress value of its
input partition until the gap is filled (the missing records are in the topic:
a producer lands outputs before it records progress). So the stage applies
each origin's records in origin order whatever the arrival order, and the set
of applied positions of an origin is exactly the chain's prefix up to `head`:
a compact, bounded representation of the applied set (plus the held records,
which only exist while a gap is open). Duplicates (position at or below the
head, or already held) pass to the runner, whose per-key `Applied` marks skip
them: per key, the application order is now the origin order those marks
assume.

Records without a link (L0 records, records written before this scheme) pass
straight through. A link to a position below the head (a producer whose
outputs are not deterministic, e.g. an LLM extractor re-run) is released, not
held, so nothing waits forever; and `MAX_HELD` records or `MAX_HELD_BYTES` bound
what one partition holds (beyond either the oldest held records are released in
position order, logged).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .records import Inbound
from .tracking import Origin, Position

log = logging.getLogger("engram.distributed.chain")

PREV_HEADER = "engram-prev"
START = b"-"
MAX_HELD = 20_000
MAX_HELD_BYTES = 4 * 1024 * 1024  # held records live (base64) in the progress value, bounded by MAX_STATE_BYTES


def link_header(prev: Position | None) -> tuple[str, bytes]:
    return PREV_HEADER, START if prev is None else ":".join(map(str, prev)).encode()


def parse_link(record: Inbound) -> tuple[bool, Position | None]:
    """(has a link, the predecessor's position or None for the chain's first record)."""
    raw = record.header(PREV_HEADER)
    if raw is None:
        return False, None
    if raw == START:
        return True, None
    parts = raw.decode(errors="replace").split(":")
    if not all(p.isdigit() for p in parts):
        return False, None
    return True, tuple(int(p) for p in parts)


class ChainLinks:
    """Producer side: the last position sent per destination `topic:partition`, kept in a progress value."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self._last: dict[str, list[int]] = meta.setdefault("chain", {})

    def link(self, destination: str, position: Position) -> Position | None:
        prev = self._last.get(destination)
        self._last[destination] = list(position)
        return tuple(prev) if prev is not None else None


@dataclass
class _Held:
    origin: Origin
    prev: Position
    record: Inbound


@dataclass
class ChainGate:
    """Consumer side, one per input partition: releases records in chain order (see the module docstring)."""

    meta: dict[str, Any]
    heads: dict[str, list[int]] = field(init=False)
    held: list[_Held] = field(init=False)
    legacy: bool = False
    changed: bool = False
    newly_held: int = 0

    def __post_init__(self) -> None:
        self.legacy = "heads" not in self.meta and bool(self.meta.get("next"))
        self.heads = dict(self.meta.get("heads", {}))
        self.held = [_decode_held(h) for h in self.meta.get("held", [])]

    def admit(self, record: Inbound, origin: Origin) -> Iterator[Inbound]:
        """The records to handle now, in order: `record` (or nothing, if held) and what it unblocks."""
        linked, prev = parse_link(record)
        if not linked:
            yield record
            return
        head = self._head(origin.tp)
        if prev is not None and (head is None or prev > head) and not (self.legacy and head is None):
            if not any(h.origin == origin for h in self.held):
                self.held.append(_Held(origin, prev, record))
                self.changed, self.newly_held = True, self.newly_held + 1
                yield from self._overflow()
            return
        yield from self._release(origin, record)

    def _head(self, tp: str) -> Position | None:
        head = self.heads.get(tp)
        return tuple(head) if head is not None else None

    def _release(self, origin: Origin, record: Inbound) -> Iterator[Inbound]:
        head = self._head(origin.tp)
        if head is None or origin.position > head:
            self.heads[origin.tp] = list(origin.position)
            self.changed = True
        yield record
        yield from self._unblocked(origin.tp)

    def _unblocked(self, tp: str) -> Iterator[Inbound]:
        while True:
            head = self._head(tp)
            ready = [h for h in self.held if h.origin.tp == tp and head is not None and h.prev <= head]
            if not ready:
                return
            first = min(ready, key=lambda h: h.origin.position)
            self.held.remove(first)
            self.changed = True
            if first.origin.position > head:  # type: ignore[operator]
                self.heads[tp] = list(first.origin.position)
            yield first.record

    def _overflow(self) -> Iterator[Inbound]:
        while len(self.held) > MAX_HELD or sum(map(_size, self.held)) > MAX_HELD_BYTES:
            first = min(self.held, key=lambda h: (h.origin.tp, h.origin.position))
            log.error("chain gap not filled: releasing %s @ %s out of order (more than %d held)",
                      first.origin.tp, first.origin.position, MAX_HELD)
            self.held.remove(first)
            self.heads[first.origin.tp] = list(first.origin.position)
            yield first.record
            yield from self._unblocked(first.origin.tp)

    def store(self) -> None:
        """Write heads and held records back into the progress value."""
        self.meta["heads"] = self.heads
        self.meta["held"] = [_encode_held(h) for h in self.held]
        if not self.meta["held"]:
            del self.meta["held"]


def _size(held: _Held) -> int:
    return len(held.record.value or b"") + sum(len(k) + len(v) for k, v in held.record.headers)


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _encode_held(held: _Held) -> dict[str, Any]:
    r = held.record
    return {"tp": held.origin.tp, "pos": list(held.origin.position), "prev": list(held.prev),
            "topic": r.topic, "partition": r.partition, "offset": r.offset, "key": _b64(r.key),
            "value": _b64(r.value), "ts": r.timestamp, "headers": [[k, _b64(v)] for k, v in r.headers]}


def _decode_held(data: dict[str, Any]) -> _Held:
    headers = tuple((str(k), _unb64(v) or b"") for k, v in data["headers"])
    record = Inbound(data["topic"], int(data["partition"]), int(data["offset"]), _unb64(data["key"]),
                     _unb64(data["value"]), float(data["ts"]), headers)
    return _Held(Origin(data["tp"], tuple(data["pos"])), tuple(data["prev"]), record)
