"""Data keys of the owners of user text (crypto-shredding: forget destroys them).

Every piece of user text the log keeps is encrypted under a data key of its
owner (a tenant/user pair). Destroying that key is what makes the text
unrecoverable everywhere the ciphertext went: the log file, its WAL, Kafka
segments, backups. So keys never live in the log: the port below is backed by
a store of its own.

- `SqliteKeyStore` (embedded runtime): `keys.db` beside `engram.db`, rollback
  journal (no WAL that would keep old pages) and `secure_delete`, so a
  destroyed key is overwritten with zeros in the file, not just unlinked from
  a b-tree.
- `MemoryKeyStore`: the same contract in memory (tests, one-off tools).

A destroyed owner gets a fresh key (a new id) if it speaks again; the old id
never comes back, so old ciphertext stays unreadable.
"""

from __future__ import annotations

import base64
import binascii
import os
import sqlite3
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Iterable
from typing import Protocol

KEY_BYTES = 32
MASTER_KEY_ENV = "ENGRAM_MASTER_KEY"
MASTER_KEY_FILE_ENV = "ENGRAM_MASTER_KEY_FILE"


class MasterKeyMissing(RuntimeError):
    """The distributed runtime needs a master key (key-encryption key) that is not in Kafka."""




class KeyStore(Protocol):
    """Port: per-owner data keys, addressable by id, destroyable by owner."""

    def current(self, owner: str) -> tuple[str, bytes]:
        """The owner's live key as (key id, key), created on first use."""
        ...

    def get(self, key_id: str) -> bytes | None:
        """The key with this id, or None once destroyed (or never made)."""
        ...

    def destroy(self, owner: str) -> int:
        """Destroy every key of an owner; return how many were destroyed."""
        ...

    def count(self) -> int:
        """Live keys (for the size of the store)."""
        ...


def _parse_master(text: str, where: str) -> bytes:
    text = text.strip()
    for parse in (bytes.fromhex, base64.urlsafe_b64decode):
        try:
            raw = parse(text)
        except (ValueError, binascii.Error):
            continue
        if len(raw) == KEY_BYTES:
            return raw
    raise MasterKeyMissing(f"{where} is not a 32-byte key (64 hex digits or urlsafe base64)")


def master_key(env: Mapping[str, str] | None = None) -> bytes:
    """The key-encryption key, from ENGRAM_MASTER_KEY or the file ENGRAM_MASTER_KEY_FILE names."""
    env = os.environ if env is None else env
    if env.get(MASTER_KEY_ENV, "").strip():
        return _parse_master(env[MASTER_KEY_ENV], MASTER_KEY_ENV)
    path = env.get(MASTER_KEY_FILE_ENV, "").strip()
    if path:
        try:
            return _parse_master(Path(path).read_text(), f"{MASTER_KEY_FILE_ENV} ({path})")
        except OSError as exc:
            raise MasterKeyMissing(f"{MASTER_KEY_FILE_ENV}={path} cannot be read: {exc}") from exc
    raise MasterKeyMissing(
        f"the distributed runtime encrypts user text with data keys kept in Kafka, wrapped by a master key "
        f"that must not be in Kafka: set {MASTER_KEY_ENV} (64 hex digits, e.g. `python -c \"import os; "
        f"print(os.urandom(32).hex())\"`) or {MASTER_KEY_FILE_ENV}, the same on every process of the "
        f"deployment; or run with ENGRAM_ENCRYPTION=off (no crypto-shredding)")


def master_key_configured(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get(MASTER_KEY_ENV, "").strip() or env.get(MASTER_KEY_FILE_ENV, "").strip())


def owner_of(tenant_id: str, user_id: str) -> str:
    return f"{tenant_id}/{user_id}"


def _new_key_id() -> str:
    return os.urandom(12).hex()


class MemoryKeyStore:
    """KeyStore in a dict."""

    def __init__(self) -> None:
        self._current: dict[str, tuple[str, bytes]] = {}
        self._keys: dict[str, tuple[str, bytes]] = {}

    def current(self, owner: str) -> tuple[str, bytes]:
        live = self._current.get(owner)
        if live is None:
            key_id, key = _new_key_id(), os.urandom(KEY_BYTES)
            live = self._current[owner] = (key_id, key)
            self._keys[key_id] = (owner, key)
        return live

    def get(self, key_id: str) -> bytes | None:
        found = self._keys.get(key_id)
        return found[1] if found else None

    def destroy(self, owner: str) -> int:
        gone = [k for k, (o, _) in self._keys.items() if o == owner]
        for key_id in gone:
            del self._keys[key_id]
        self._current.pop(owner, None)
        return len(gone)

    def count(self) -> int:
        return len(self._keys)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS data_keys (
  key_id TEXT PRIMARY KEY, owner TEXT NOT NULL, key BLOB NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS data_keys_owner ON data_keys (owner);
"""


class SqliteKeyStore:
    """KeyStore in its own SQLite file; keys are cached in memory once read."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=DELETE")
        self._db.execute("PRAGMA secure_delete=ON")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._current: dict[str, tuple[str, bytes]] = {}
        self._keys: dict[str, bytes | None] = {}

    def current(self, owner: str) -> tuple[str, bytes]:
        live = self._current.get(owner)
        if live is not None:
            return live
        with self._lock:
            return self._load_or_create(owner)

    def _load_or_create(self, owner: str) -> tuple[str, bytes]:
        """The owner's newest key from the file, else a new one inserted (the caller holds the lock)."""
        row = self._db.execute(
            "SELECT key_id, key FROM data_keys WHERE owner=? ORDER BY created_at DESC LIMIT 1", (owner,)
        ).fetchone()
        if row is None:
            row = (_new_key_id(), os.urandom(KEY_BYTES))
            self._db.execute("INSERT INTO data_keys VALUES (?,?,?,?)",
                             (row[0], owner, row[1], datetime.now(timezone.utc).isoformat()))
        live = self._current[owner] = (str(row[0]), bytes(row[1]))
        self._keys[live[0]] = live[1]
        return live

    def prepare(self, owners: Iterable[str]) -> None:
        """Make sure every owner has a live key, creating the missing ones in ONE transaction.

        Same keys as `current` one by one, but one commit (one fsync of the
        rollback journal) for a batch of new owners instead of one per owner.
        """
        missing = sorted({o for o in owners if o not in self._current})
        if not missing:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for owner in missing:
                    if owner not in self._current:
                        self._load_or_create(owner)
            except BaseException:
                self._db.execute("ROLLBACK")
                for owner in missing:
                    gone = self._current.pop(owner, None)
                    if gone is not None:
                        self._keys.pop(gone[0], None)
                raise
            self._db.execute("COMMIT")

    def get(self, key_id: str) -> bytes | None:
        if key_id in self._keys:
            return self._keys[key_id]
        with self._lock:
            row = self._db.execute("SELECT key FROM data_keys WHERE key_id=?", (key_id,)).fetchone()
        key = bytes(row[0]) if row else None
        if key is not None:
            self._keys[key_id] = key
        return key

    def destroy(self, owner: str) -> int:
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT key_id FROM data_keys WHERE owner=?", (owner,))]
            self._db.execute("DELETE FROM data_keys WHERE owner=?", (owner,))
            self._current.pop(owner, None)
            for key_id in ids:
                self._keys.pop(key_id, None)
        return len(ids)

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM data_keys").fetchone()[0])

    def size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        self._db.close()
