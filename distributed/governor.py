"""The governance timer of the distributed runtime: the edge that turns wall-clock time into ticks.

Processors never read the clock (a replay must derive the same events), so a timer in the stage that owns
users' memories (consolidation) produces, every `governance_interval` seconds,
one `GovernanceTick` per user key in the stage's table, for the partitions
this worker owns, to the commands topic. The stage then consumes the ticks
like any other command, in order with the user's other records.

`as_of` is the wall clock rounded down to the interval, so two workers, a
restart or a replay generation emitting the same bucket emit the same event
ids; consumers drop the repeats (recent ids) and a repeat of the same tick
changes nothing anyway (archive first, delete only on a later tick).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from aiokafka.partitioner import murmur2

from engram.schemas import topics as t
from engram.schemas.codec import encode
from engram.streams.govern import governance_tick

from .progress import PREFIX as PROGRESS_PREFIX
from .sink import Send
from .topics import Namespace
from .tracking import TYPE_HEADER

TICK_TYPE = b"GovernanceTick"


def partition_of(key: bytes, partitions: int) -> int:
    """The partition the Java-compatible murmur2 partitioner (aiokafka's, librdkafka's `murmur2_random`) picks."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def user_keys(keys: Iterable[bytes], owned: frozenset[int], partitions: int) -> list[bytes]:
    """The `tenant/user` state keys of the owned partitions, sorted (progress marks are not users)."""
    return sorted(k for k in keys
                  if not k.startswith(PROGRESS_PREFIX) and b"/" in k and partition_of(k, partitions) in owned)


def tick_sends(keys: Iterable[bytes], ns: Namespace, as_of: datetime) -> list[Send]:
    """One keyed GovernanceTick record per user key, for the commands topic."""
    topic = ns.topic(t.COMMANDS)
    sends = []
    for key in keys:
        tenant, _, user = key.decode().partition("/")
        tick = governance_tick(tenant, user, as_of)
        sends.append(Send(topic, key, encode(tick), None, ((TYPE_HEADER, TICK_TYPE),)))
    return sends
