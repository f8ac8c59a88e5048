"""The projector's fast paths give the same bytes as the plain code they replaced (stored data unchanged)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import uuid

from engram.core.crypto import FieldCipher, _blind_term, blind_terms, forget_blind_cache
from engram.core.keystore import MemoryKeyStore
from engram.projections.weaviate_schema import object_id
from engram.schemas.base import ENGRAM_NAMESPACE, stable_id

_ALPHABET = "abcdefghijklmnopqrstuvwxyzéü記憶我的狗 -_/0123456789"


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def _old_blind(key: bytes, terms: list[str]) -> list[str]:
    return [hmac.new(key, term.encode("utf-8"), hashlib.sha256).hexdigest()[:20] for term in terms]


def test_blind_terms_equal_the_hmac_new_tokens_cold_and_cached() -> None:
    rng = random.Random(3)
    forget_blind_cache()
    for _ in range(50):
        key = rng.randbytes(32)
        words = _words(rng, 40)
        expected = _old_blind(key, words)
        assert blind_terms(key, words) == expected  # cold: computed
        assert blind_terms(key, words) == expected  # warm: from the cache
    assert _blind_term.cache_info().hits >= 50 * 40


def test_blind_tokens_depend_on_the_key_and_forget_empties_the_cache() -> None:
    one, two = bytes(32), bytes([1]) + bytes(31)
    assert blind_terms(one, ["tea"]) != blind_terms(two, ["tea"])
    assert blind_terms(one, ["tea"]) == _old_blind(one, ["tea"])
    forget_blind_cache()
    assert _blind_term.cache_info().currsize == 0


def test_cached_object_ids_equal_uuid5_of_the_joined_key() -> None:
    rng = random.Random(5)
    object_id.cache_clear()
    for _ in range(200):
        kind, tenant, user, *key = _words(rng, rng.randint(3, 5))
        name = "/".join(["weaviate", kind, tenant, user, *key])
        expected = str(uuid.uuid5(ENGRAM_NAMESPACE, name))
        assert object_id(kind, tenant, user, *key) == expected == stable_id("weaviate", kind, tenant, user, *key)
        assert object_id(kind, tenant, user, *key) == expected
    assert object_id.cache_info().hits >= 200


def test_open_bytes_reads_what_base64_wrote_and_rejects_a_broken_nonce() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    box = cipher.seal_bytes("t/u", "我的狗 Rex".encode(), b"ctx")
    assert base64.b64decode(box["n"]) and cipher.open_bytes(box, b"ctx") == "我的狗 Rex".encode()
    assert cipher.open_bytes(box, b"other") is None
    assert cipher.open_bytes({**box, "n": "é" + box["n"]}, b"ctx") is None  # not ASCII: ValueError, as before
    assert cipher.open_bytes({**box, "c": box["c"][:-3]}, b"ctx") is None  # bad padding: binascii.Error


def test_an_erasure_empties_the_blind_term_and_object_id_caches() -> None:
    """Both caches are keyed by a user's words or ids: `clear_text_caches` (every erasure) empties them."""
    from engram.core import crypto
    from engram.core.text_caches import clear_text_caches
    from engram.projections.weaviate_schema import object_id

    crypto.blind_terms(b"k" * 32, ["peanut", "allergy"])
    object_id("turn", "tenant-a", "alice@example.com", "m1")
    assert crypto._blind_term.cache_info().currsize > 0 and object_id.cache_info().currsize > 0
    clear_text_caches()
    assert crypto._blind_term.cache_info().currsize == 0
    assert object_id.cache_info().currsize == 0


def test_every_text_keyed_cache_is_emptied_by_an_erasure() -> None:
    """A memoised function of a string (the user's words) in any package module registers its cache, so
    `clear_text_caches` reaches it: a forgotten user's text must not outlive the forget in a process."""
    import importlib
    import inspect
    import pkgutil

    from engram.core import text_caches

    keyed_by_names = {"engram.core.crypto._split", "engram.schemas.codec.current_version"}  # a field path, an event type
    unregistered = []
    names = []
    for package in ("core", "recall", "streams", "projections", "schemas", "runtime"):
        root = importlib.import_module(f"engram.{package}")
        names += [info.name for info in pkgutil.walk_packages(root.__path__, f"engram.{package}.")]
    assert "engram.core.domains" in names
    for module_name in names:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            wrapped = getattr(value, "__wrapped__", None)
            if wrapped is None or not hasattr(value, "cache_clear") or getattr(value, "__module__", "") != module_name:
                continue
            params = list(inspect.signature(wrapped).parameters.values())
            if f"{module_name}.{name}" in keyed_by_names:
                continue
            if params and params[0].annotation in ("str", str) and value.cache_clear not in text_caches._FUNCTIONS:
                unregistered.append(f"{module_name}.{name}")
    assert unregistered == []
