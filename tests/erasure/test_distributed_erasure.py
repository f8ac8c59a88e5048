"""Forget is erasure on the distributed runtime: every byte Kafka, Weaviate and chDB keep is scanned.

Real services of this test alone, so their folders are known and hold nothing
else: a private Kafka broker (its log segments), a private Weaviate (its data
folder), and the worker's chDB folder. One `engram worker --role all` process
(processors and projectors) runs throughout; the test drives the server's
adapter (`DistributedBackend`), as `engram serve` does.

User A says unique canary strings and every kind of personal data; user B
talks beside them. Before the forget no file holds the PII in plain text
(Kafka records and processor states are sealed, projections hold the redacted
text) and no Kafka segment holds A's canary. After A forgets everything: the
erasure record is on the audit topic, A's keys are tombstoned, A's state in the
changelogs no longer opens, and no file of the three services (stopped, so
Weaviate has flushed its memtables) holds any of A's canaries or PII, while B's
memories and recall are unchanged and B's canary is still found in chDB and B's
sealed objects in Weaviate (the scan sees). No Weaviate file holds either canary
even before the forget (its text is sealed), so segments flushed before a forget
keep only ciphertext under destroyed keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import import_client, unavailable

import_client("confluent_kafka", "kafka")
import_client("weaviate", "weaviate")

from engram.distributed.backend import DistributedBackend  # noqa: E402
from engram.distributed.erasure import cipher_for, close_ciphers  # noqa: E402
from engram.distributed.facade import DistributedRuntime  # noqa: E402
from engram.distributed.readback import iter_topic, read_topic  # noqa: E402
from engram.distributed.tracking import decode_entry  # noqa: E402
from engram.projections.weaviate_sealing import MARK  # noqa: E402
from engram.recall.service import RecallRequest  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.events import ErasureRecorded, ForgetRequested, TurnRecorded  # noqa: E402
from engram.streams.consolidate import UserMemories  # noqa: E402
from tests.distributed.conftest import PrivateBroker, private_kafka  # noqa: E402,F401  (the fixture)
from tests.distributed_driver import Deployment  # noqa: E402
from tests.drivers import T0, turn  # noqa: E402

from .private_services import PrivateWeaviate  # noqa: E402
from .scan import find  # noqa: E402
from .test_embedded_erasure import PII, _a_turns  # noqa: E402

pytestmark = [pytest.mark.kafka, pytest.mark.weaviate, pytest.mark.slow]
EVERY = ("active", "replaced", "retired", "archived")


@pytest.fixture
def private_weaviate(tmp_path: Path) -> Iterator[PrivateWeaviate]:
    weaviate = PrivateWeaviate(tmp_path / "private-weaviate")
    try:
        weaviate.start()
    except (OSError, RuntimeError) as exc:
        weaviate.stop()
        unavailable("weaviate", f"a private Weaviate for the scan test: {exc}")
    try:
        yield weaviate
    finally:
        weaviate.stop()


def _recall(backend: DistributedBackend, user: str, question: str) -> tuple[str, list[str]]:
    request = RecallRequest(tenant="t1", user=user, agent="a1", session="s1", question=question,
                            now=T0.replace(hour=21))
    result = backend.recall(request, 30_000)
    assert result is not None
    return result.memory_section, result.retrieved_ids


def _states(bootstrap: str, topic: str, key: bytes, cipher: object) -> list[UserMemories | None]:
    return [decode_entry(r.value(), UserMemories, cipher, key).state  # type: ignore[attr-defined]
            for r in iter_topic_keyed(bootstrap, topic, key)]


def iter_topic_keyed(bootstrap: str, topic: str, key: bytes) -> list[object]:
    from confluent_kafka import Consumer, TopicPartition

    from engram.distributed.readback import high_watermarks

    out = []
    ends = {p: end for (_, p), end in high_watermarks(bootstrap, [topic]).items() if end > 0}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"scan-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in ends])
    try:
        while ends:
            for msg in consumer.consume(500, timeout=1.0):
                if msg.error() is None and msg.key() == key and msg.value():
                    out.append(msg)
                if msg.error() is None and msg.offset() + 1 >= ends.get(msg.partition(), 0):  # type: ignore[operator]
                    ends.pop(msg.partition(), None)  # type: ignore[arg-type]
    finally:
        consumer.close()
    return out


def test_forget_everything_on_the_distributed_runtime_leaves_no_byte_of_the_user(
        private_kafka: PrivateBroker, private_weaviate: PrivateWeaviate, tmp_path: Path) -> None:
    canary_a = "zorblax" + uuid.uuid4().hex[:10]
    canary_b = "quintrel" + uuid.uuid4().hex[:10]
    endpoint = private_weaviate.endpoint
    deployment = Deployment(private_kafka.bootstrap, endpoint.url, endpoint.grpc_port, tmp_path / "dist")
    bootstrap, ns = private_kafka.bootstrap, deployment.ns
    kafka_dir, weaviate_dir, worker_dir = private_kafka.folder, private_weaviate.data_dir, deployment.folder
    backend = DistributedBackend(DistributedRuntime(deployment.endpoints, wait_timeout=240.0))
    try:
        backend.ingest([turn(text, user="a") for text in _a_turns(canary_a)]
                       + [turn(f"I really love {canary_b} and always will", user="b"),
                          turn(f"我喜欢{canary_b}", user="b")])
        store = backend.runtime.store
        assert any(canary_a in m.content for m in store.list_memories("t1", "a"))
        b_before = store.list_memories("t1", "b", EVERY)
        assert any(canary_b in m.content for m in b_before)
        b_recall = _recall(backend, "b", canary_b)
        assert canary_b in b_recall[0]

        # Before: PII nowhere in plain text; no Kafka segment holds either canary (records are sealed).
        assert find(PII.values(), kafka_dir, weaviate_dir, worker_dir) == {}
        assert find([canary_a, canary_b], kafka_dir) == {}
        # Nor does any Weaviate file (the user text is sealed there too): what Weaviate writes to disk before
        # the forget (WAL, flushed segments) is only ciphertext under the keys the forget destroys.
        assert find([canary_a, canary_b], weaviate_dir) == {}
        cipher = cipher_for(bootstrap, ns.prefix)
        changelog = ns.changelog("processors", "consolidate")
        assert any(s is not None and s.memories for s in _states(bootstrap, changelog, b"t1/a", cipher))

        forget = ForgetRequested(event_id=uuid.uuid4().hex, occurred_at=T0.replace(hour=20), tenant_id="t1",
                                 user_id="a", correlation_id="forget-a", everything=True)
        backend.submit([forget])

        audit = [r.event for r in read_topic(bootstrap, ns.topic(t.AUDIT))]
        records = [e for e in audit if isinstance(e, ErasureRecorded)]
        assert len(records) == 1 and records[0].request_id == forget.event_id
        assert records[0].scope == "everything" and records[0].keys_destroyed >= 1
        assert records[0].memories_erased >= 1 and canary_a not in records[0].model_dump_json()
        assert store.list_memories("t1", "a", EVERY) == []
        turns = [r.event for r in iter_topic(bootstrap, ns.topic(t.TURNS)) if isinstance(r.event, TurnRecorded)]
        assert turns and all(x.content == "" for x in turns if x.user_id == "a")  # shredded
        assert all(canary_b in x.content for x in turns if x.user_id == "b")
        # Every state of A the changelog still keeps (compaction has not run) no longer opens.
        assert all(s is None for s in _states(bootstrap, changelog, b"t1/a", cipher))
        assert any(s is not None and s.memories for s in _states(bootstrap, changelog, b"t1/b", cipher))
        # B is untouched.
        assert store.list_memories("t1", "b", EVERY) == b_before
        assert _recall(backend, "b", canary_b) == b_recall
        analytics = backend.runtime.lineage("t1", "a", records[0].memory_ids[0])
        assert canary_a not in repr(analytics)
    finally:
        backend.close()
        deployment.worker.stop()  # chDB closed; the topics stay, for the scan
    try:
        private_weaviate.stop()  # memtables flushed into segments: what Weaviate keeps at rest
        leftovers = find([canary_a, *PII.values()], kafka_dir, weaviate_dir, worker_dir)
        assert leftovers == {}, leftovers
        # B's objects are on Weaviate's disk, sealed (the scan sees them, so it proves something)
        assert find([MARK], weaviate_dir), "the scan must see B's sealed memories in Weaviate"
        assert find([canary_b], worker_dir), "the scan must see B's turns in chDB"
    finally:
        deployment.close()
        close_ciphers(bootstrap)  # this process's key-store clients of the private broker
