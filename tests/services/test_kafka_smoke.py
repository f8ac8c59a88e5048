"""Smoke test: a real Kafka broker through confluent-kafka (admin, produce, consume)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.services import import_client

ck = import_client("confluent_kafka", "kafka")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType  # noqa: E402

pytestmark = pytest.mark.kafka

PARTITIONS = 3
TOPIC_CONFIG = {"cleanup.policy": "compact", "retention.ms": "3600000", "min.insync.replicas": "1"}


@pytest.fixture
def admin(kafka_bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


@pytest.fixture
def topic(admin: AdminClient) -> Iterator[str]:
    name = f"engram-smoke-{uuid.uuid4().hex[:10]}"
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=PARTITIONS, replication_factor=1, config=TOPIC_CONFIG)],
        operation_timeout=30,
    )
    futures[name].result(timeout=60)
    yield name
    admin.delete_topics([name], operation_timeout=30)[name].result(timeout=60)


def test_created_topic_has_requested_partitions_and_configs(admin: AdminClient, topic: str) -> None:
    metadata = admin.list_topics(topic, timeout=30)
    assert metadata.topics[topic].error is None
    assert sorted(metadata.topics[topic].partitions) == list(range(PARTITIONS))
    for partition in metadata.topics[topic].partitions.values():
        assert len(partition.replicas) == 1

    resource = ConfigResource(ResourceType.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    for key, value in TOPIC_CONFIG.items():
        assert configs[key].value == value, key


def test_keyed_messages_round_trip_in_per_key_order(kafka_bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "acks": "all", "enable.idempotence": True})
    delivered: list[tuple[str, int]] = []

    def on_delivery(err: object, msg: ck.Message) -> None:
        assert err is None, err
        delivered.append((msg.key().decode(), msg.partition()))

    sent = [(f"tenant-a/user-{i % 5}", f"{i}") for i in range(30)]
    for key, value in sent:
        producer.produce(topic, key=key.encode(), value=value.encode(), on_delivery=on_delivery)
    assert producer.flush(30) == 0
    assert len(delivered) == len(sent)
    partitions_by_key: dict[str, set[int]] = {}
    for key, partition in delivered:
        partitions_by_key.setdefault(key, set()).add(partition)
    assert all(len(parts) == 1 for parts in partitions_by_key.values()), "one key, one partition"

    group = f"engram-smoke-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({
        "bootstrap.servers": kafka_bootstrap, "group.id": group,
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })
    received: dict[str, list[int]] = {}
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        count = 0
        while count < len(sent) and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            received.setdefault(msg.key().decode(), []).append(int(msg.value()))
            count += 1
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
    finally:
        consumer.close()

    expected: dict[str, list[int]] = {}
    for key, value in sent:
        expected.setdefault(key, []).append(int(value))
    assert received == expected  # everything arrived, in order per key
    assert sum(tp.offset for tp in committed if tp.offset >= 0) == len(sent)
