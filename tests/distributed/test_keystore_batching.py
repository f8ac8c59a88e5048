"""The key store makes many keys in one round trip and reads only what other processes wrote.

`prepare(owners)` (the SDK's key gate asks for every owner waiting at once)
makes the missing keys with one flush; a store skips its own key records when
it reads the topic, but never a record of another process between them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.services import import_client

import_client("confluent_kafka", "kafka")

from engram.distributed.admin import delete_namespace, ensure_topics  # noqa: E402
from engram.distributed.erasure import close_ciphers  # noqa: E402
from engram.distributed.keystore import KafkaKeyStore  # noqa: E402
from engram.distributed.producer import TurnProducer  # noqa: E402
from engram.distributed.readback import read_topic  # noqa: E402
from engram.distributed.topics import Namespace, all_specs  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.events import TurnRecorded  # noqa: E402

pytestmark = pytest.mark.kafka
KEK = bytes(range(32))


@pytest.fixture
def prefix(kafka_bootstrap: str) -> Iterator[str]:
    name = f"test-keybatch-{uuid.uuid4().hex[:10]}."
    yield name
    delete_namespace(kafka_bootstrap, name)


def _store(bootstrap: str, prefix: str) -> KafkaKeyStore:
    return KafkaKeyStore(bootstrap, prefix, kek=KEK, refresh=0.0)


def test_prepare_makes_one_live_key_per_owner_that_every_process_reads(kafka_bootstrap: str, prefix: str) -> None:
    writer, reader = _store(kafka_bootstrap, prefix), _store(kafka_bootstrap, prefix)
    owners = [f"acme/u{i}" for i in range(40)]
    writer.prepare(owners + owners[:5])  # repeats make no second key
    keys = {owner: writer.known(owner) for owner in owners}
    assert all(keys.values()) and len({k[0] for k in keys.values() if k}) == 40
    writer.prepare(owners)  # all known: nothing new
    assert writer.count() == 40
    for owner, live in keys.items():
        assert live is not None and reader.get(live[0]) == live[1]
        assert reader.current(owner) == live  # the reader finds the live key, does not make its own
    assert _store(kafka_bootstrap, prefix).count() == 40  # a fresh process reads the same 40
    for store in (writer, reader):
        store.close()


def test_a_store_skips_its_own_records_but_reads_those_of_others_between_them(kafka_bootstrap: str,
                                                                               prefix: str) -> None:
    a, b = _store(kafka_bootstrap, prefix), _store(kafka_bootstrap, prefix)
    first = a.current("acme/alice")
    other = b.current("acme/bob")  # written between two of a's records
    second = a.current("acme/carol")
    a.sync()
    assert a.get(other[0]) == other[1] and a.known("acme/bob") == other
    assert a.count() == 3 and a.known("acme/alice") == first and a.known("acme/carol") == second
    b.destroy("acme/alice")
    a.sync()
    assert a.get(first[0]) is None and a.known("acme/alice") is None  # a tombstone of another process
    for store in (a, b):
        store.close()



def test_the_sdk_sends_the_turns_of_many_new_owners_within_its_normal_close_timeout(kafka_bootstrap: str,
                                                                                    prefix: str) -> None:
    """Every record of 300 owners new to the deployment is sent; none fails for want of a data key.

    With one key-store round trip per new owner (about a second each, as measured before batching) most of them
    were still waiting for their key when `close` gave up, and failed as "no data key in time".
    """
    ns = Namespace(prefix)
    ensure_topics(kafka_bootstrap, all_specs(ns))
    users = [f"u{i:03d}" for i in range(300)]
    producer = TurnProducer(kafka_bootstrap, ns, summary_checks="off")
    try:
        for user in users:
            assert producer.record_turn(tenant="acme", user=user, agent="bot", session="s1", message_id=f"m-{user}",
                                        role="user", content=f"the secret of {user}")
        assert producer.close() == 0  # the SDK's own default timeout
        assert producer.counters["failed"] == 0 and producer.counters["sent"] == len(users), producer.counters
    finally:
        close_ciphers(kafka_bootstrap, prefix)  # the read-back below opens the records with a fresh key store
    opened = {r.event.user_id: r.event.content for r in read_topic(kafka_bootstrap, ns.topic(t.TURNS))
              if isinstance(r.event, TurnRecorded)}
    counter = KafkaKeyStore(kafka_bootstrap, prefix, refresh=0.0)  # the master key the SDK used (the env's)
    try:
        assert opened == {user: f"the secret of {user}" for user in users}
        assert counter.count() == len(users)  # one key per owner, no duplicates
    finally:
        counter.close()
        close_ciphers(kafka_bootstrap, prefix)
