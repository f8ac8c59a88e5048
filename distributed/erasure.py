"""Forget is erasure, on the distributed runtime: sealed records, sealed states, key destruction.

What is encrypted, and where it is opened:

- Every event a distributed process produces goes through `encode(event, cipher)`
  (`engram.schemas.codec`, the same hook and `FieldCipher` as the embedded
  runtime): the user text of L0 turns and of every derived event is sealed
  under its owner's data key before it reaches Kafka. Workers, projectors,
  replay and readers decode with the same cipher; without the key (destroyed)
  an event decodes as shredded (text gone, ids kept).
- The processors' states (one value per `tenant/user` in the stage tables and
  their compacted changelogs: a user's memories, summaries) are sealed as one
  blob under the owner's key (`seal_state`): the changelog's old records,
  which compaction keeps for a while, are unreadable once the key is gone. A
  state that no longer opens is read as no state (the user as if never seen;
  the applied marks stay readable, so nothing is processed twice).
- Keys: `engram.distributed.keystore.KafkaKeyStore`, one per namespace
  prefix and process (`cipher_for`).

A forget (`DistributedEraser`, run by the server's forget path once the
workers and projectors have applied the `ForgetRequested`): for forget
everything the owner's keys are tombstoned; then an `ErasureRecorded` (counts
and ids, no content) goes to the audit topic. The projectors delete the
Weaviate objects when they apply the forget itself; when they apply the
erasure record they blank the ClickHouse text it covers (`AnalyticsErasures`,
the same `clickhouse_erasure` rewrite as the embedded runtime).

`ENGRAM_ENCRYPTION=off` turns sealing off (benchmarks of the overhead); the
records are then plain, and a forget still deletes and blanks the projections.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from typing import TYPE_CHECKING

from engram.core.crypto import FieldCipher
from engram.core.keystore import owner_of
from engram.core.erasure import encryption_enabled, erasure_record
from engram.core.text_caches import clear_text_caches
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.events import ErasureRecorded, ForgetRequested, MemoryChanged

if TYPE_CHECKING:  # the runner stays free of Kafka and ClickHouse clients: those are imported where used
    from engram.projections.clickhouse import ClickHouseProjector

STATE_SEALED = "_sealed_state"

_CIPHERS: dict[tuple[str, str], FieldCipher] = {}
_LOCK = threading.Lock()
_GENERATION = re.compile(r"^(\.g\d+)?$")


def cipher_for(bootstrap: str, prefix: str) -> FieldCipher | None:
    """The cipher of one deployment (namespace prefix) in this process; None with encryption off."""
    if not encryption_enabled():
        return None
    from .keystore import KafkaKeyStore

    with _LOCK:
        found = _CIPHERS.get((bootstrap, prefix))
        if found is None:
            found = _CIPHERS[(bootstrap, prefix)] = FieldCipher(KafkaKeyStore(bootstrap, prefix))
        return found


def close_ciphers(bootstrap: str | None = None, prefix: str | None = None) -> None:
    """Close the key stores of this process (of one broker / namespace, or all): their clients stop."""
    with _LOCK:
        for (where, space), cipher in list(_CIPHERS.items()):
            if (bootstrap is None or where == bootstrap) and (prefix is None or space == prefix):
                del _CIPHERS[(where, space)]
                close = getattr(cipher.keys, "close", None)
                if close is not None:
                    close()


def prefix_of(kafka_topic: str) -> str | None:
    """The namespace prefix of a catalogue topic's Kafka name (None for other topics)."""
    for topic in t.CATALOGUE:
        at = kafka_topic.rfind(topic.name)
        if at >= 0 and _GENERATION.match(kafka_topic[at + len(topic.name):]):
            return kafka_topic[:at]
    return None


def cipher_for_topic(bootstrap: str, kafka_topic: str) -> FieldCipher | None:
    """The cipher to decode the records of one Kafka topic with."""
    prefix = prefix_of(kafka_topic)
    return None if prefix is None else cipher_for(bootstrap, prefix)


# -- the producer's gate ------------------------------------------------------------------------
class KeyGate:
    """Holds a producer's records of owners whose data key this process does not have yet.

    Getting (or making) an owner's key is a broker round trip, and the chat path must not wait:
    `offer` holds the event and a daemon thread fetches the keys of every owner waiting (one `prepare`:
    one key-store round trip for all of them), then sends each owner's held
    events in order (later events of that owner wait behind them). An event of an owner whose
    key is known is sent at once. If the key cannot be had, the held events count as failed.
    """

    def __init__(self, cipher: FieldCipher, send: Callable[[Event], None],
                 failed: Callable[[int, str], None]) -> None:
        self.cipher, self._send, self._failed = cipher, send, failed
        self._lock = threading.Condition()
        self._held: dict[str, list[Event]] = {}
        self._todo: list[str] = []
        self._thread: threading.Thread | None = None

    @property
    def held(self) -> int:
        with self._lock:
            return sum(map(len, self._held.values()))

    def offer(self, event: Event, room: int) -> bool:
        """Send now (True) or hold (False; BufferError past `room` held events). `send` runs under the lock."""
        owner = owner_of(event.tenant_id, event.user_id)
        with self._lock:
            known = getattr(self.cipher.keys, "known", None)
            waiting = owner in self._held
            if not waiting and (not self.cipher.needs_key(event.type) or known is None or known(owner)):
                self._send(event)
                return True
            if sum(map(len, self._held.values())) >= room:
                raise BufferError("producer queue full (records waiting for their owner's key)")
            self._held.setdefault(owner, []).append(event)
            if not waiting:
                self._todo.append(owner)
                self._start()
                self._lock.notify_all()
            return False

    def _start(self) -> None:
        """Start the worker thread unless one runs (under the lock: `_run` clears `_thread` under it
        when it leaves, so an owner queued as it leaves is never stranded)."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="engram-key-gate", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._todo:
                    if self._thread is threading.current_thread():
                        self._thread = None  # the next `offer` starts a new thread
                    return
                owners, self._todo = self._todo, []
            try:
                self._fetch(owners)  # every owner waiting now in one key-store round trip
                error = ""
            except Exception as exc:  # noqa: BLE001 - the held records are counted as failed
                error = f"no data key for {len(owners)} owner(s) ({owners[0]}, ...): {exc}"[:300]
            with self._lock:
                for owner in owners:
                    self._release(owner, error)
                self._lock.notify_all()

    def _fetch(self, owners: list[str]) -> None:
        prepare = getattr(self.cipher.keys, "prepare", None)
        if prepare is not None:
            prepare(owners)
        else:
            for owner in owners:
                self.cipher.keys.current(owner)

    def _release(self, owner: str, error: str) -> None:
        """Send the owner's held events in order (under the lock), or count them failed."""
        events = self._held.pop(owner, [])
        sent = 0
        try:
            if not error:
                for event in events:
                    self._send(event)
                    sent += 1
        except Exception as exc:  # noqa: BLE001
            error = f"records of {owner} not queued: {exc}"[:300]
        if error and len(events) > sent:
            self._failed(len(events) - sent, error)

    def drain(self, timeout: float) -> bool:
        """Wait until nothing is held (True) or the timeout passed (False)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._held:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def abandon(self, reason: str) -> int:
        """Give up on every held record (counted failed); return how many."""
        with self._lock:
            count = sum(map(len, self._held.values()))
            self._held.clear()
            self._todo.clear()
        if count:
            self._failed(count, reason)
        return count


# -- states ----------------------------------------------------------------------------------
def seal_state(cipher: FieldCipher | None, key: bytes, body: bytes) -> bytes:
    """A state's JSON sealed under the owner's key (the table key is `tenant/user`); as is without a cipher."""
    if cipher is None or body == b"null":
        return body
    return orjson.dumps({STATE_SEALED: cipher.seal_bytes(key.decode(), body, b"state|" + key)})


def open_state(cipher: FieldCipher | None, key: bytes, body: bytes) -> bytes:
    """The state's JSON; `null` (no state) once the owner's key is destroyed."""
    if not body.startswith(b'{"' + STATE_SEALED.encode()):
        return body
    sealed = orjson.loads(body)[STATE_SEALED]
    opened = cipher.open_bytes(sealed, b"state|" + key) if cipher is not None else None
    return b"null" if opened is None else opened


# -- the forget path ---------------------------------------------------------------------------
class DistributedEraser:
    """After a forget was applied: destroy the owner's keys (forget everything) and record the erasure."""

    def __init__(self, cipher: FieldCipher | None) -> None:
        self.cipher = cipher

    def complete(self, request: ForgetRequested, changes: Iterable[MemoryChanged]) -> ErasureRecorded:
        memory_ids = [c.memory_id for c in changes if c.change == "deleted" and request.event_id in c.causation_ids]
        keys = 0
        if request.everything and self.cipher is not None:
            keys = self.cipher.forget_owner(request.tenant_id, request.user_id)
        clear_text_caches()
        return erasure_record(request, memory_ids, keys)


def forgets(events: Sequence[Event]) -> list[ForgetRequested]:
    return [e for e in events if isinstance(e, ForgetRequested)]


# -- the analytics -------------------------------------------------------------------------------
class AnalyticsErasures:
    """Blanks the ClickHouse text an `ErasureRecorded` covers, when the projector inserts it."""

    def __init__(self) -> None:
        self._topics: dict[str, str] = {}

    def apply(self, projector: ClickHouseProjector, events: Sequence[Event]) -> int:
        """Call after the events' rows are inserted; returns the rows blanked."""
        touched = 0
        for event in events:
            if isinstance(event, ForgetRequested) and event.topic_text:
                self._topics[event.event_id] = event.topic_text
            elif isinstance(event, ErasureRecorded):
                touched += erase(projector, event, self._topics.get(event.request_id, ""))
        return touched


def erase(projector: ClickHouseProjector, record: ErasureRecorded, topic_text: str = "") -> int:
    """What `LogAnalytics.erase` does on the embedded runtime, on the projector's connection."""
    from engram.projections.clickhouse_erasure import erase_memories, erase_mentions, erase_user
    from engram.streams.forget import topic_of

    if record.scope == "everything":
        return erase_user(projector, record.tenant_id, record.user_id)
    touched = erase_memories(projector, record.tenant_id, record.user_id, record.memory_ids)
    if record.scope == "topic" and topic_text.strip():
        touched += erase_mentions(projector, record.tenant_id, record.user_id, topic_of(topic_text))
    return touched


def describe(cipher: FieldCipher | None) -> dict[str, Any]:
    """Size of the key store (for the README's cost figures and `engram` status output)."""
    if cipher is None:
        return {"encryption": "off"}
    return {"encryption": "on", "keys": cipher.keys.count()}
