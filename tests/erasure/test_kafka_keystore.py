"""The distributed key store on a real broker: shared by processes, wrapped by the master key, destroyable."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from tests.services import import_client

import_client("confluent_kafka", "kafka")

from confluent_kafka.admin import ConfigResource  # noqa: E402

from engram.core.crypto import FieldCipher  # noqa: E402
from engram.distributed.admin import admin_client, delete_namespace  # noqa: E402
from engram.distributed.keystore import (  # noqa: E402
    KEYS_TOPIC_CONFIGS, KafkaKeyStore, KeyStoreUnavailable, MasterKeyMissing, keys_topic, master_key, unwrap,
)
from engram.distributed.readback import read_topic  # noqa: E402
from engram.schemas.codec import decode, encode  # noqa: E402
from engram.schemas.events import TurnRecorded  # noqa: E402

KEK = bytes(range(32))
AT = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def prefix(kafka_bootstrap: str) -> Iterator[str]:
    name = f"test-keys-{uuid.uuid4().hex[:10]}."
    yield name
    delete_namespace(kafka_bootstrap, name)


def _store(bootstrap: str, prefix: str, kek: bytes = KEK) -> KafkaKeyStore:
    return KafkaKeyStore(bootstrap, prefix, kek=kek, refresh=0.0)


def _turn(user: str, text: str) -> TurnRecorded:
    return TurnRecorded(event_id=uuid.uuid4().hex, occurred_at=AT, tenant_id="acme", user_id=user, agent_id="bot",
                        session_id="s1", message_id=uuid.uuid4().hex[:8], role="user", content=text)


def test_two_processes_share_keys_and_a_destroy_by_one_reaches_the_other(kafka_bootstrap: str, prefix: str) -> None:
    writer, reader = _store(kafka_bootstrap, prefix), _store(kafka_bootstrap, prefix)
    key_id, key = writer.current("acme/alice")
    assert reader.get(key_id) == key
    assert reader.current("acme/alice") == (key_id, key)  # the reader finds the live key, does not make its own
    bob = writer.current("acme/bob")
    assert reader.destroy("acme/alice") == 1
    writer.sync()  # what its refresh thread does every `refresh` seconds
    assert writer.get(key_id) is None  # tombstone read by the other process
    assert writer.get(bob[0]) == bob[1] and reader.count() == 1
    again = writer.current("acme/alice")
    assert again[0] != key_id and reader.get(again[0]) == again[1]  # speaking again: a new key
    assert _store(kafka_bootstrap, prefix).get(key_id) is None  # a fresh process never sees the old key
    for store in (writer, reader):
        store.close()


def test_a_following_process_has_a_new_owners_key_before_it_asks(kafka_bootstrap: str, prefix: str) -> None:
    """The follower applies key records as they arrive: `known` (which never goes to the broker) finds a
    key another process made, and `get` of an id nobody made answers None instead of waiting."""
    import time

    follower = KafkaKeyStore(kafka_bootstrap, prefix, kek=KEK, refresh=0.2)
    writer = _store(kafka_bootstrap, prefix)
    try:
        assert follower.count() == 0  # first use: the follower starts
        key_id, key = writer.current("acme/carol")
        deadline = time.monotonic() + 30
        while follower.known("acme/carol") is None:  # bounded wait on the condition, not a timing assertion
            assert time.monotonic() < deadline, "the new key never reached the following process"
            time.sleep(0.01)
        assert follower.known("acme/carol") == (key_id, key)
        assert follower.get("0" * 24) is None  # read to the end with the follower: unknown, remembered as gone
    finally:
        for store in (follower, writer):
            store.close()


def test_a_destroy_reaches_a_running_process_through_its_refresh(kafka_bootstrap: str, prefix: str) -> None:
    import time

    reader = KafkaKeyStore(kafka_bootstrap, prefix, kek=KEK, refresh=0.2)
    writer = _store(kafka_bootstrap, prefix)
    key_id, key = writer.current("acme/alice")
    assert reader.get(key_id) == key
    writer.destroy("acme/alice")
    deadline = time.monotonic() + 30
    while reader.get(key_id) is not None:  # bounded wait on the condition (the refresh thread's next round)
        assert time.monotonic() < deadline, "the tombstone never reached the other process"
        time.sleep(0.05)
    assert reader.known("acme/alice") is None
    for store in (reader, writer):
        store.close()


def test_records_hold_only_wrapped_keys_that_need_the_master_key(kafka_bootstrap: str, prefix: str) -> None:
    store = _store(kafka_bootstrap, prefix)
    key_id, key = store.current("acme/alice")
    store.close()
    records = read_topic(kafka_bootstrap, keys_topic(prefix))
    assert len(records) == 1 and key not in records[0].value and key.hex().encode() not in records[0].value
    assert unwrap(KEK, key_id, records[0].value) == ("acme/alice", key)
    with pytest.raises(ValueError):
        unwrap(os.urandom(32), key_id, records[0].value)
    with pytest.raises(ValueError):  # the wrap is bound to its key id
        unwrap(KEK, "0" * 24, records[0].value)


def test_the_keys_topic_is_compacted_soon(kafka_bootstrap: str, prefix: str) -> None:
    store = _store(kafka_bootstrap, prefix)
    store.sync()  # the topic is made at the first use
    store.close()
    resource = ConfigResource("topic", keys_topic(prefix))
    admin = admin_client(kafka_bootstrap)  # held: the futures fail once the client is collected
    found = admin.describe_configs([resource])[resource].result(timeout=30)
    for name, value in KEYS_TOPIC_CONFIGS.items():
        assert found[name].value == value, name


def test_without_a_master_key_the_distributed_store_refuses_to_start() -> None:
    with pytest.raises(MasterKeyMissing, match="ENGRAM_MASTER_KEY"):
        master_key({})
    with pytest.raises(MasterKeyMissing, match="32-byte"):
        master_key({"ENGRAM_MASTER_KEY": "abc"})
    assert master_key({"ENGRAM_MASTER_KEY": KEK.hex()}) == KEK


def test_master_key_from_a_file(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "master.key"  # type: ignore[operator]
    path.write_text(KEK.hex() + "\n")
    assert master_key({"ENGRAM_MASTER_KEY_FILE": str(path)}) == KEK
    with pytest.raises(MasterKeyMissing, match="cannot be read"):
        master_key({"ENGRAM_MASTER_KEY_FILE": str(path) + ".missing"})


def test_sealed_events_open_in_another_process_until_the_owner_is_forgotten(kafka_bootstrap: str,
                                                                             prefix: str) -> None:
    producer, worker = FieldCipher(_store(kafka_bootstrap, prefix)), FieldCipher(_store(kafka_bootstrap, prefix))
    turn = _turn("alice", "my locker code is canary-5d1e")
    data = encode(turn, producer)
    assert b"canary-5d1e" not in data
    assert decode(data, worker) == turn
    other = encode(_turn("bob", "bob's note canary-77aa"), producer)
    assert producer.forget_owner("acme", "alice") == 1
    worker.keys.sync()  # type: ignore[attr-defined]  # its refresh thread's next round
    gone = decode(data, worker)
    assert isinstance(gone, TurnRecorded) and gone.content == "" and gone.metadata == {"shredded": "true"}
    assert "canary-77aa" in decode(other, worker).content  # type: ignore[attr-defined]


def _fail_next_flush(store: KafkaKeyStore) -> None:
    """An error left from an earlier flush: the next flush raises although its records all land."""
    from confluent_kafka import KafkaError

    store._errors.append(KafkaError(KafkaError._MSG_TIMED_OUT))


def test_tombstones_of_a_destroy_whose_flush_raised_are_applied_by_the_next_sync(kafka_bootstrap: str,
                                                                                  prefix: str) -> None:
    store = _store(kafka_bootstrap, prefix)
    key_id, _ = store.current("acme/alice")
    _fail_next_flush(store)
    with pytest.raises(KeyStoreUnavailable):
        store.destroy("acme/alice")  # the tombstone landed; the local state was not updated
    assert _store(kafka_bootstrap, prefix).get(key_id) is None  # the others hold it destroyed
    store.sync()
    assert store.known("acme/alice") is None and store.get(key_id) is None
    assert store.current("acme/alice")[0] != key_id  # new turns are sealed under a new, live key
    store.close()


def test_a_key_made_by_a_prepare_whose_flush_raised_is_learnt_by_the_next_sync(kafka_bootstrap: str,
                                                                               prefix: str) -> None:
    store = _store(kafka_bootstrap, prefix)
    _fail_next_flush(store)
    with pytest.raises(KeyStoreUnavailable):
        store.prepare(["acme/bob"])  # the key landed; this process did not take it
    assert store.known("acme/bob") is None
    other = _store(kafka_bootstrap, prefix).current("acme/bob")  # what every other process adopts
    store.sync()
    assert store.known("acme/bob") == other
    assert store.destroy("acme/bob") == 1  # so a forget tombstones it
    assert _store(kafka_bootstrap, prefix).get(other[0]) is None
    store.close()


def test_own_records_applied_here_are_not_applied_twice(kafka_bootstrap: str, prefix: str) -> None:
    store = _store(kafka_bootstrap, prefix)
    first = store.current("acme/carol")
    assert store.destroy("acme/carol") == 1
    again = store.current("acme/carol")
    store._position = 0  # read the whole topic again, own records included
    store.sync()
    assert store.get(first[0]) is None and store.known("acme/carol") == again
    store.close()
