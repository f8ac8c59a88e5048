"""The distributed key store: owners' data keys in a compacted Kafka topic, wrapped by a master key.

The `KeyStore` port (`engram.core.keystore`) on Kafka, for the distributed
runtime (the producer SDK, the workers, the projectors and the servers all
read one store). Design, and why:

- **One compacted topic per deployment**, `<prefix>engram.keys` (1 partition,
  so every reader applies the records in one order). A record is keyed by the
  key id; its value holds the owner (`tenant/user`) and the data key *wrapped*
  (AES-256-GCM) under the master key. Destroying an owner's keys produces a
  tombstone per key id. Keys never go into the data topics, and the topic is
  not in the catalogue, so the projectors never read it.
- **A master key outside Kafka** (`ENGRAM_MASTER_KEY`: 64 hex digits or
  urlsafe base64 of 32 bytes; or `ENGRAM_MASTER_KEY_FILE`, a file holding one).
  A compacted topic keeps a destroyed key's old record in its log segments
  until the log cleaner has compacted them; wrapped, that record is useless to
  whoever reads the segments (or a backup of them) without the master key.
  Without a master key the distributed runtime refuses to start
  (`MasterKeyMissing`): there is no silent fallback to plain keys.
- **Fast compaction** narrows the window in which someone who holds *both* the
  master key and a copy of the keys topic could still unwrap a destroyed key:
  `segment.ms` 60 s (the active segment is never cleaned; it rolls at the
  first key record after that), `min.cleanable.dirty.ratio` 0.01,
  `max.compaction.lag.ms` 60 s, `delete.retention.ms` 60 s (how long the
  tombstones themselves stay, for readers that were behind), and
  `file.delete.delay.ms` 1 s (the cleaned segment's files go at once). So the
  old record is gone from disk about a minute (plus the broker's
  `log.cleaner.backoff.ms`, 15 s by default) after the next key record;
  the README states this window.

Readers: every process keeps the keys it has read in memory. Nothing touches the broker
until the first use (the topic is created then). From then on a daemon thread follows the
topic (a long-polling consumer: a record is applied as soon as the broker delivers it), so a
new owner's key usually arrives before the first record sealed under it (the creator waits
for the broker's acknowledgement of a new key before any ciphertext under it is produced), and
a key destroyed by another process stops decrypting here as soon as its tombstone arrives. A
key id a process has not seen makes it wait until the follower has read the topic up to its
current end (with `refresh` 0 there is no follower and it reads the topic itself). A key id
still unknown after that is destroyed (or never existed) and is remembered as such. The
producer SDK never waits for a key on the chat path (`engram.distributed.erasure.KeyGate`).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer, TopicPartition
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engram.core.keystore import (  # noqa: F401 - re-exported: the distributed runtime's master key
    KEY_BYTES, MASTER_KEY_ENV, MASTER_KEY_FILE_ENV, MasterKeyMissing, master_key,
)

from .kafka_retry import RetryPolicy, retrying
from .topics import TopicSpec

log = logging.getLogger("engram.distributed.keystore")
FETCH_WAIT_MS = 20
"""Short fetch long-polls: the end-offset query does not wait behind a long fetch (it took ~170 ms)."""
FOLLOW_FETCH_WAIT_MS = 500
"""The follower's fetch long-poll: a key record is returned as soon as it is appended; an idle
process sends two fetches a second instead of fifty."""
FOLLOW_POLL = 0.2
"""Seconds one poll of the follower thread waits for a record (it stops within this)."""
KEYS_TOPIC = "engram.keys"
KEYS_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "compact", "retention.ms": "-1", "segment.ms": "60000",
    "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0", "max.compaction.lag.ms": "60000",
    "delete.retention.ms": "60000", "file.delete.delay.ms": "1000",
}
"""Configs of the keys topic: compacted, and compacted soon (see the module docstring)."""


class KeyStoreUnavailable(RuntimeError):
    """The keys topic could not be read or written in time."""


def keys_topic(prefix: str) -> str:
    return prefix + KEYS_TOPIC


def keys_topic_spec(prefix: str) -> TopicSpec:
    return TopicSpec(keys_topic(prefix), 1, dict(KEYS_TOPIC_CONFIGS))


def _aad(key_id: str, owner: str) -> bytes:
    return f"engram-key|{key_id}|{owner}".encode()


def wrap(kek: bytes, key_id: str, owner: str, key: bytes) -> bytes:
    """The record value of one data key: owner, wrapped key, master-key fingerprint, creation time."""
    nonce = os.urandom(12)
    wrapped = AESGCM(kek).encrypt(nonce, key, _aad(key_id, owner))
    return orjson.dumps({"owner": owner, "kek": fingerprint(kek), "n": base64.b64encode(nonce).decode(),
                         "w": base64.b64encode(wrapped).decode(), "at": datetime.now(timezone.utc).isoformat()})


def unwrap(kek: bytes, key_id: str, value: bytes) -> tuple[str, bytes]:
    """(owner, data key) of a key record; ValueError if it is not one, or not under this master key."""
    data = orjson.loads(value)
    owner = str(data["owner"])
    if data.get("kek") != fingerprint(kek):
        raise ValueError(f"key {key_id} is wrapped under another master key ({data.get('kek')})")
    try:
        key = AESGCM(kek).decrypt(base64.b64decode(data["n"]), base64.b64decode(data["w"]), _aad(key_id, owner))
    except InvalidTag as exc:
        raise ValueError(f"key {key_id} does not open under the master key") from exc
    return owner, key


def fingerprint(kek: bytes) -> str:
    """A short id of the master key (to say which one wrapped a record); reveals nothing of it."""
    return hashlib.sha256(b"engram-kek|" + kek).hexdigest()[:16]


class KafkaKeyStore:
    """KeyStore on a compacted Kafka topic (see the module docstring). Thread-safe.

    Nothing touches the broker until the first use (the topic is created then, if `create`);
    then, if `refresh` > 0, a daemon thread follows the topic (new keys, tombstones of keys
    destroyed elsewhere); `current` and `get` only go to the broker for what they have not seen.
    """

    def __init__(self, bootstrap: str, prefix: str = "", *, kek: bytes | None = None, create: bool = True,
                 refresh: float = 1.0, timeout: float = 120.0,
                 topic_configs: Mapping[str, str] | None = None) -> None:
        self.bootstrap, self.topic, self.prefix = bootstrap, keys_topic(prefix), prefix
        self.kek = kek if kek is not None else master_key()
        self.refresh, self.timeout = refresh, timeout
        self._create, self._topic_configs = create, dict(topic_configs or {})
        self._lock = threading.RLock()
        self._keys: dict[str, tuple[str, bytes]] = {}
        self._current: dict[str, tuple[str, bytes]] = {}
        self._gone: set[str] = set()
        self._position = 0
        self._own: set[int] = set()
        """Offsets of this process's records whose effect its local state already shows: a sync need not
        read them back. Only records applied here after a successful flush go in (see `_mark_own`); one
        delivered by a flush that raised is read back like any other (applying a record is idempotent)."""
        self._acked: dict[int, str] = {}
        """Offset -> key id of the records acknowledged during the current flush (see `_mark_own`)."""
        self._ready = False
        self._errors: list[KafkaError] = []
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"engram-keys-{uuid.uuid4().hex[:8]}",
                                   "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                   "fetch.wait.max.ms": FETCH_WAIT_MS if refresh <= 0 else FOLLOW_FETCH_WAIT_MS})
        self._ends = self._consumer
        """Asks for the topic's end offset: the consumer itself, or with a follower a client of its own (a
        consumer's end-offset query waits while the same consumer is fetching)."""
        self._producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                   "linger.ms": 0})
        self._applied = threading.Condition(self._lock)
        """Notified by the follower each time it has applied records."""
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        self._closed = False

    # -- the port ------------------------------------------------------------------------
    def current(self, owner: str) -> tuple[str, bytes]:
        live = self._current.get(owner)
        if live is not None:
            return live
        with self._lock:
            self.sync()
            return self._current.get(owner) or self._create_key(owner)

    def prepare(self, owners: Iterable[str]) -> None:
        """Make sure every owner has a live key: one read of the topic, the missing keys made together
        (one flush for all of them, not one broker round trip per owner)."""
        missing = [o for o in dict.fromkeys(owners) if o not in self._current]
        if not missing:
            return
        with self._lock:
            self.sync()
            made: list[tuple[str, str, bytes]] = []
            for owner in missing:  # de-duplicated above
                if owner not in self._current:
                    key_id, key = os.urandom(12).hex(), os.urandom(KEY_BYTES)
                    self._send(key_id, wrap(self.kek, key_id, owner, key))
                    made.append((owner, key_id, key))
            if not made:
                return
            self._flush("creating keys")  # acknowledged before any ciphertext under them exists
            for owner, key_id, key in made:
                self._keys[key_id] = (owner, key)
                self._current[owner] = (key_id, key)
            self._mark_own({key_id for _, key_id, _ in made})

    def known(self, owner: str) -> tuple[str, bytes] | None:
        """The owner's live key if this process has it, without going to the broker."""
        return self._current.get(owner)

    def get(self, key_id: str) -> bytes | None:
        found = self._keys.get(key_id)
        if found is not None:
            return found[1]
        if key_id in self._gone:
            return None
        with self._lock:
            self.sync()
            found = self._keys.get(key_id)
            if found is None:
                self._gone.add(key_id)
            return found[1] if found else None

    def destroy(self, owner: str) -> int:
        """Tombstone every key of the owner (acknowledged by the broker before this returns)."""
        with self._lock:
            self.sync()
            ids = sorted(k for k, (o, _) in self._keys.items() if o == owner)
            for key_id in ids:
                self._send(key_id, None)
            self._flush("destroying keys")
            for key_id in ids:
                self._forget(key_id)
            self._current.pop(owner, None)
            self._mark_own(set(ids))
            return len(ids)

    def count(self) -> int:
        with self._lock:
            self.sync()
            return len(self._keys)

    def owners(self) -> set[str]:
        with self._lock:
            self.sync()
            return {owner for owner, _ in self._keys.values()}

    # -- reading the topic -----------------------------------------------------------------
    def sync(self, patience: float | None = None) -> None:
        """Apply every record up to the topic's end as of now (retrying for `patience` s, default `timeout`).

        With the follower running, this waits for it to get there (usually it is there already);
        without one (`refresh` 0), it reads the records itself."""
        wait = self.timeout if patience is None else patience
        with self._lock:
            self._ensure()
            policy = RetryPolicy(deadline=wait)
            _, high = retrying(lambda: self._ends.get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=min(10.0, wait)), f"end of {self.topic}", policy)
            self._skip_own()
            if self._position >= high:
                return  # nothing new, or only this process's own records: no fetch at all
            if self._follower is not None:
                self._await(high, wait)
            else:
                self._read_to(high, wait)

    def _await(self, high: int, wait: float) -> None:
        """Wait (the lock given up meanwhile) until the follower has applied the records before `high`."""
        deadline = time.monotonic() + wait
        while self._position < high:
            left = deadline - time.monotonic()
            if left <= 0 or not self._follower_alive():
                raise KeyStoreUnavailable(f"could not read {self.topic} to offset {high} within {wait}s")
            self._applied.wait(min(left, 1.0))
            self._skip_own()

    def _follower_alive(self) -> bool:
        return self._follower is not None and self._follower.is_alive()

    def _read_to(self, high: int, wait: float) -> None:
        tp = TopicPartition(self.topic, 0, self._position or OFFSET_BEGINNING)
        self._consumer.resume([tp])
        try:
            deadline = time.monotonic() + wait
            while self._position < high:
                if time.monotonic() > deadline:
                    raise KeyStoreUnavailable(f"could not read {self.topic} to offset {high} within {wait}s")
                # as many as are missing: `consume` returns once it has them, not at its timeout
                for msg in self._consumer.consume(max(1, min(1000, high - self._position)), timeout=0.2):
                    self._apply(msg)
                self._skip_own()
        finally:
            self._consumer.pause([tp])  # assigned (metadata kept across broker restarts), not fetching

    def _skip_own(self) -> None:
        """Move past this process's own key records at the read position (it holds those keys already).

        Only records at the position are skipped, so every record of another process is still read.
        The consumer keeps fetching them, and `_apply` drops them (their offsets are behind the position).
        """
        while self._position in self._own:
            self._own.discard(self._position)
            self._position += 1

    def _ensure(self) -> None:
        if self._ready:
            return
        if self._create:
            from .admin import ensure_topics

            spec = keys_topic_spec(self.prefix)
            ensure_topics(self.bootstrap, [TopicSpec(spec.name, 1, {**spec.configs, **self._topic_configs})],
                          timeout=self.timeout)
        tp = TopicPartition(self.topic, 0, OFFSET_BEGINNING)
        self._consumer.assign([tp])
        self._ready = True
        if self.refresh > 0:
            self._ends = Consumer({"bootstrap.servers": self.bootstrap, "enable.auto.commit": False,
                                   "group.id": f"engram-keys-{uuid.uuid4().hex[:8]}"})
            self._follower = threading.Thread(target=self._follow, name="engram-keys-follow", daemon=True)
            self._follower.start()
        else:
            self._consumer.pause([tp])  # read on demand by `sync`

    def _follow(self) -> None:
        """Apply key records as the broker delivers them, in the background (the consumer long-polls).

        A new owner's key is produced and acknowledged before any record sealed under it, so it
        usually reaches this process before the first record that needs it: a worker, projector or
        reader that meets a new owner finds the key here instead of reading the topic (a broker
        round trip) in its own path. A key destroyed elsewhere stops decrypting here as soon as its
        tombstone arrives. The lock is held only while records are applied, never across a fetch.
        """
        while not self._stop.is_set():
            try:
                first = self._consumer.poll(FOLLOW_POLL)  # returns with the first record, not at the timeout
                messages = [] if first is None else [first, *self._consumer.consume(1000, timeout=0)]
            except Exception:  # noqa: BLE001 - a broker outage: librdkafka reconnects, the loop goes on
                log.debug("key store %s: fetch failed", self.topic, exc_info=True)
                self._stop.wait(0.5)
                continue
            if not messages:
                continue
            with self._lock:
                for msg in messages:
                    try:
                        self._apply(msg)
                    except ValueError as exc:  # a record this master key cannot open: the key stays unknown
                        log.error("key store %s: %s", self.topic, exc)
                self._skip_own()
                self._applied.notify_all()

    def _apply(self, msg: Message) -> None:
        if msg.error() is not None:
            return
        offset = msg.offset()
        if offset is not None:
            if offset < self._position:
                return  # one of this process's own records, skipped by `_skip_own`: already applied
            self._position = offset + 1
            if offset in self._own:
                self._own.discard(offset)
                return  # applied here when it was made
        key_id = (msg.key() or b"").decode()
        value = msg.value()
        if not value:
            self._forget(key_id)
            return
        owner, key = unwrap(self.kek, key_id, value)
        self._keys[key_id] = (owner, key)
        self._gone.discard(key_id)
        self._current.setdefault(owner, (key_id, key))

    def _forget(self, key_id: str) -> None:
        found = self._keys.pop(key_id, None)
        self._gone.add(key_id)
        if found is not None and self._current.get(found[0], ("",))[0] == key_id:
            self._current.pop(found[0], None)
            others = [(k, v) for k, (o, v) in self._keys.items() if o == found[0]]
            if others:
                self._current[found[0]] = others[-1]

    # -- writing ----------------------------------------------------------------------------
    def _create_key(self, owner: str) -> tuple[str, bytes]:
        key_id, key = os.urandom(12).hex(), os.urandom(KEY_BYTES)
        self._send(key_id, wrap(self.kek, key_id, owner, key))
        self._flush("creating a key")  # acknowledged before any ciphertext under it exists
        self._keys[key_id] = (owner, key)
        live = self._current[owner] = (key_id, key)
        self._mark_own({key_id})
        return live

    def _send(self, key_id: str, value: bytes | None) -> None:
        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                self._errors.append(err)
            elif (offset := msg.offset()) is not None and offset >= self._position:
                self._acked[offset] = key_id

        self._producer.produce(self.topic, key=key_id.encode(), value=value, on_delivery=delivered)

    def _flush(self, what: str) -> None:
        """Wait for the broker's acknowledgements; raise if any record is left or failed.

        After a failure nothing produced so far counts as own: the caller did not apply its records,
        so a sync reads every one of them that did land (a tombstone, a key delivered late)."""
        left = self._producer.flush(self.timeout)
        errors, self._errors = self._errors, []
        if left or errors:
            self._acked.clear()
            raise KeyStoreUnavailable(f"{what} in {self.topic}: {left} record(s) unacknowledged, errors {errors}")

    def _mark_own(self, applied: set[str]) -> None:
        """The records of `applied` key ids acknowledged in the last flush are in the local state now:
        a sync may skip them. Others acknowledged then (a record of an earlier, failed flush delivered
        late) are not applied here, so a sync reads them."""
        for offset, key_id in self._acked.items():
            if key_id in applied and offset >= self._position:
                self._own.add(offset)
        self._acked.clear()

    def close(self) -> None:
        self._stop.set()
        if self._follower is not None:
            self._follower.join(timeout=min(5.0, self.timeout))
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._producer.flush(min(5.0, self.timeout))
            close = getattr(self._producer, "close", None)  # confluent-kafka >= 2.5: the client stops now, not at GC
            if close is not None:
                close()
            self._consumer.close()
            if self._ends is not self._consumer:
                self._ends.close()
