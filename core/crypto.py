"""Sealing the user text inside events (crypto-shredding: destroying the owner's key makes it unreadable).

`FieldCipher.seal` takes an encoded event (a JSON dict), moves the fields that
carry user text (`SEALED_FIELDS`) into one AES-256-GCM ciphertext under the
owner's data key, and leaves placeholders in their place; `open` puts them
back. The envelope (ids, types, times, counts) stays readable, so the log can
still be routed, deduplicated and replayed.

Once the owner's key is destroyed, `open` cannot decrypt and leaves the
placeholders: the event decodes as *shredded* (text gone, `shredded` marked in
a turn's metadata), and every processor treats it as if nothing had been
said. Ciphertext is bound to its event id and key id (associated data), so it
cannot be moved onto another event.

Format, inside the payload: `"_sealed": {"k": key id, "n": nonce, "c": ciphertext}`
(nonce and ciphertext base64). Payloads without it are read as they are, so
logs written before encryption (or with it off) still decode.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import os
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .keystore import KeyStore, owner_of
from .text_caches import registered

SEALED = "_sealed"
SHREDDED_TEXT = "[forgotten]"
"""Placeholder of a shredded text where the schema needs one (non-empty fields)."""
SHREDDED_MARK = "shredded"

_RECORD = ("content", "topic", "entities", "keywords", "sensitive")
_CARD = ("name", "profile", "long_term_goal", "preferences", "preferred_language", "answer_style", "extra_notes",
         "tags", "folder")
SEALED_FIELDS: dict[str, tuple[str, ...]] = {
    "TurnRecorded": ("content", "metadata"),
    "MemoryProposed": tuple(f"candidate.{f}" for f in _RECORD),
    "MemoryChanged": (*(f"before.{f}" for f in _RECORD), *(f"after.{f}" for f in _RECORD), "reason"),
    "ProfileChanged": ("added", "updated"),
    "SummarySnapshotted": ("sections", "error"),
    "RecallServed": ("question",),
    "FeedbackGiven": ("reason", "remark"),
    "ForgetRequested": ("topic_text",),
    "CorrectionRequested": ("content",),
    "DeadLettered": ("raw", "reason"),
    "GuardFired": ("detail",),
    "LLMCallRecorded": ("error",),
    "GlobalCardSaved": tuple(f"card.{f}" for f in _CARD),
    "GlobalCardRequested": (*(f"card.{f}" for f in _CARD), *(f"base.{f}" for f in _CARD)),
}
"""Event type -> dotted paths of the fields that carry user text."""

_PLACEHOLDER_OVERRIDES: dict[tuple[str, str], Any] = {
    ("MemoryProposed", "candidate.content"): SHREDDED_TEXT,
    ("CorrectionRequested", "content"): SHREDDED_TEXT,
    ("TurnRecorded", "metadata"): {SHREDDED_MARK: "true"},
}


def _placeholder(event_type: str, path: str, value: Any) -> Any:
    override = _PLACEHOLDER_OVERRIDES.get((event_type, path))
    if override is not None:
        return override
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return value


_EMPTY: tuple[Any, ...] = (None, "", [], {})

_Plan = tuple[tuple[str, tuple[str, ...], str, Any], ...]
_PLANS: dict[str, tuple[tuple[str, ...], _Plan]] = {}
"""`SEALED_FIELDS` of a type split once: (path, parent names, leaf, placeholder override or None) per field."""


def _plan(event_type: str) -> _Plan:
    paths = SEALED_FIELDS.get(event_type)
    if not paths:
        return ()
    found = _PLANS.get(event_type)
    if found is None or found[0] is not paths:  # built on first use, rebuilt if the table was changed
        plan = tuple((path, tuple(path.split(".")[:-1]), path.rsplit(".", 1)[-1],
                      _PLACEHOLDER_OVERRIDES.get((event_type, path))) for path in paths)
        found = _PLANS[event_type] = (paths, plan)
    return found[1]


class _Nonces:
    """Random 96-bit nonces drawn from a buffer (one `urandom` call per 4,096 nonces)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._pos = 0
        self._lock = threading.Lock()  # a nonce handed out twice under one key would break GCM

    def next(self) -> bytes:
        with self._lock:
            if self._pos >= len(self._buffer):
                self._buffer, self._pos = os.urandom(12 * 4096), 0
            nonce = self._buffer[self._pos : self._pos + 12]
            self._pos += 12
        return nonce


@lru_cache(maxsize=256)
def _split(path: str) -> tuple[tuple[str, ...], str]:
    """A sealed path's parent names and leaf (the paths are those of `SEALED_FIELDS`: split once each)."""
    *parents, leaf = path.split(".")
    return tuple(parents), leaf


def _parent(raw: dict[str, Any], path: str) -> tuple[dict[str, Any] | None, str]:
    if "." not in path:
        return raw, path
    parents, leaf = _split(path)
    node: Any = raw
    for name in parents:
        node = node.get(name) if isinstance(node, dict) else None
        if node is None:
            return None, leaf
    return (node if isinstance(node, dict) else None), leaf


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


class FieldCipher:
    """Seals and opens the user-text fields of encoded events with the owners' data keys."""

    def __init__(self, keys: KeyStore) -> None:
        self.keys = keys
        self._aead: dict[str, AESGCM] = {}
        self._nonces = _Nonces()

    def _cipher(self, key_id: str, key: bytes) -> AESGCM:
        aead = self._aead.get(key_id)
        if aead is None:
            aead = self._aead[key_id] = AESGCM(key)
        return aead

    def needs_key(self, event_type: str) -> bool:
        """True if events of this type carry user text (sealing them needs the owner's key)."""
        return event_type in SEALED_FIELDS

    def prepare(self, owners: Iterable[tuple[str, str]]) -> None:
        """Have the keys of these (tenant, user) owners ready: new ones made in one key-store transaction."""
        prepare = getattr(self.keys, "prepare", None)
        names = [owner_of(t, u) for t, u in owners]
        if prepare is not None:
            prepare(names)
        else:
            for name in names:
                self.keys.current(name)

    def seal(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Move the text fields of `raw` (changed in place) into one ciphertext; return `raw`."""
        event_type = str(raw.get("type", ""))
        plan = _plan(event_type)
        if not plan or SEALED in raw:
            return raw
        secret: dict[str, Any] = {}
        for path, parents, leaf, override in plan:
            node: Any = raw
            for name in parents:
                node = node.get(name) if isinstance(node, dict) else None
                if node is None:
                    break
            if not isinstance(node, dict) or leaf not in node:
                continue
            value = node[leaf]
            if value in _EMPTY:
                continue
            secret[path] = value
            if override is not None:
                node[leaf] = override
            else:  # _placeholder without the override: "" / [] / {} for text, lists and maps
                kind = type(value)
                node[leaf] = kind() if kind is str or kind is list or kind is dict else value
        if not secret:
            return raw
        key_id, key = self.keys.current(owner_of(str(raw["tenant_id"]), str(raw["user_id"])))
        nonce = self._nonces.next()
        ciphertext = self._cipher(key_id, key).encrypt(nonce, orjson.dumps(secret), _aad(raw, key_id))
        raw[SEALED] = {"k": key_id, "n": _b64(nonce), "c": _b64(ciphertext)}
        return raw

    def open(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Put the sealed fields of `raw` back (in place); a destroyed key leaves the placeholders."""
        return open_sealed(raw, self)

    def plaintext(self, sealed: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        key_id = str(sealed.get("k", ""))
        data = self._decrypt(sealed, _aad(raw, key_id))
        if data is None:
            return None
        found = orjson.loads(data)
        return found if isinstance(found, dict) else None

    def _decrypt(self, sealed: dict[str, Any], aad: bytes) -> bytes | None:
        """The plaintext of a {"k", "n", "c"} seal, or None once its key is destroyed (or `aad` differs)."""
        key_id = str(sealed.get("k", ""))
        key = self.keys.get(key_id)
        if key is None:
            self._aead.pop(key_id, None)
            return None
        try:
            # a2b_base64 is what base64.b64decode runs (same bytes, same errors), without its wrapper
            return self._cipher(key_id, key).decrypt(binascii.a2b_base64(sealed["n"]), binascii.a2b_base64(sealed["c"]),
                                                     aad)
        except (InvalidTag, KeyError, ValueError):
            return None

    def seal_bytes(self, owner: str, data: bytes, context: bytes) -> dict[str, str]:
        """`data` sealed under the owner's live key, bound to `context` (e.g. a state key): {"k", "n", "c"}."""
        key_id, key = self.keys.current(owner)
        nonce = self._nonces.next()
        ciphertext = self._cipher(key_id, key).encrypt(nonce, data, context + b"|" + key_id.encode())
        return {"k": key_id, "n": _b64(nonce), "c": _b64(ciphertext)}

    def open_bytes(self, sealed: dict[str, Any], context: bytes) -> bytes | None:
        """What `seal_bytes` sealed, or None once its key is destroyed (or the context differs)."""
        return self._decrypt(sealed, context + b"|" + str(sealed.get("k", "")).encode())

    def forget_owner(self, tenant_id: str, user_id: str) -> int:
        """Destroy the owner's keys: every sealed text of theirs is gone for good."""
        self._aead.clear()
        return self.keys.destroy(owner_of(tenant_id, user_id))


def open_sealed(raw: dict[str, Any], cipher: FieldCipher | None) -> dict[str, Any]:
    """`raw` with its sealed fields restored, or, without a cipher or key, marked shredded."""
    sealed = raw.pop(SEALED, None)
    if not isinstance(sealed, dict):
        return raw
    secret = cipher.plaintext(sealed, raw) if cipher is not None else None
    if secret is None:
        if raw.get("type") == "TurnRecorded":
            raw["metadata"] = {SHREDDED_MARK: "true"}
        return raw
    for path, value in secret.items():
        parent, leaf = _parent(raw, path)
        if parent is not None:
            parent[leaf] = value
    return raw


def _aad(raw: dict[str, Any], key_id: str) -> bytes:
    return f"{raw.get('event_id', '')}|{raw.get('type', '')}|{key_id}".encode()


def is_shredded_turn(metadata: dict[str, str]) -> bool:
    return metadata.get(SHREDDED_MARK) == "true"


def index_key(master: bytes, scope: str) -> bytes:
    """A key for blind search terms of one scope (e.g. a Weaviate collection prefix and tenant)."""
    return hmac.new(master, b"engram-index|" + scope.encode("utf-8"), hashlib.sha256).digest()


def blind_terms(key: bytes, terms: Iterable[str]) -> list[str]:
    """Each search term as a keyed hash (80 bits, hex): one term, one token, so BM25 scores are unchanged,
    but the index holds no word of the user (and cannot be tested against a guess without the key)."""
    return [_blind_term(key, term) for term in terms]


BLIND_CACHE = 1 << 17
"""(key, term) pairs whose blind token is kept: words repeat across memories, an HMAC costs ~2 µs."""


@registered
@lru_cache(maxsize=BLIND_CACHE)
def _blind_term(key: bytes, term: str) -> str:
    return hmac.digest(key, term.encode("utf-8"), "sha256").hex()[:20]


def forget_blind_cache() -> None:
    """Drop the cached (term, token) pairs (a forget: the words of the user leave this process too)."""
    _blind_term.cache_clear()
