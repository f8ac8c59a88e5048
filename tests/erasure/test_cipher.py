"""The field cipher and the key store, alone."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from engram.core.crypto import SEALED, FieldCipher
from engram.core.keystore import MemoryKeyStore, SqliteKeyStore
from engram.schemas.codec import decode, encode
from engram.schemas.events import CorrectionRequested, MemoryProposed, TurnRecorded
from engram.schemas.memory import Candidate, MemoryType

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _turn(user: str = "u", content: str = "我喜欢猫 canary-7731") -> TurnRecorded:
    return TurnRecorded(event_id=f"e-{user}", occurred_at=NOW, tenant_id="t", user_id=user, agent_id="a",
                        session_id="s", message_id="m", role="user", content=content, metadata={"k": "v"})


def test_sealed_text_is_not_in_the_bytes_and_round_trips() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    event = _turn()
    data = encode(event, cipher)
    assert b"canary-7731" not in data and "我喜欢猫".encode() not in data
    raw = orjson.loads(data)
    assert raw["content"] == "" and raw["session_id"] == "s" and SEALED in raw
    assert decode(data, cipher) == event
    assert decode(encode(event)) == event  # unsealed payloads still read as they are


def test_destroyed_key_decodes_as_shredded_and_other_owners_still_read() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    mine, theirs = encode(_turn("u"), cipher), encode(_turn("v"), cipher)
    assert cipher.forget_owner("t", "u") == 1
    gone = decode(mine, cipher)
    assert isinstance(gone, TurnRecorded) and gone.content == "" and gone.metadata == {"shredded": "true"}
    assert gone.event_id == "e-u" and gone.message_id == "m"  # ids stay: replay keeps everything else
    assert decode(theirs, cipher) == _turn("v")
    assert decode(mine).content == ""  # without the cipher: shredded too


def test_placeholders_satisfy_the_schemas_when_shredded() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    proposal = MemoryProposed(event_id="p", occurred_at=NOW, tenant_id="t", user_id="u", agent_id="a",
                              session_id="s", importance=0.5, candidate=Candidate(
                                  type=MemoryType.USER_FACT, content="likes canary", confidence=0.9,
                                  entities=("canary",), topic="canary"))
    correction = CorrectionRequested(event_id="c", occurred_at=NOW, tenant_id="t", user_id="u", memory_id="x",
                                     content="canary")
    sealed = [encode(e, cipher) for e in (proposal, correction)]
    cipher.forget_owner("t", "u")
    for data in sealed:
        assert b"canary" not in data
        assert "canary" not in decode(data, cipher).model_dump_json()


def test_ciphertext_is_bound_to_its_event() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    raw = orjson.loads(encode(_turn(), cipher))
    raw["event_id"] = "another"
    assert decode(orjson.dumps(raw), cipher).content == ""  # moved onto another event: it does not open


def test_sqlite_key_store_destroys_keys_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    store = SqliteKeyStore(path)
    key_id, key = store.current("t/u")
    assert store.current("t/u") == (key_id, key) and store.get(key_id) == key
    other = store.current("t/v")
    store.close()
    store = SqliteKeyStore(path)  # keys survive a restart
    assert store.get(key_id) == key
    assert store.destroy("t/u") == 1 and store.get(key_id) is None
    assert store.current("t/u")[0] != key_id  # a new key, never the old one back
    store.close()
    data = path.read_bytes()
    assert key not in data and other[1] in data
    for leftover in tmp_path.iterdir():
        assert key not in leftover.read_bytes()


@pytest.mark.parametrize("count", [5000])
def test_nonces_never_repeat(count: int) -> None:
    cipher = FieldCipher(MemoryKeyStore())
    nonces = {orjson.loads(encode(_turn(), cipher))[SEALED]["n"] for _ in range(count)}
    assert len(nonces) == count
