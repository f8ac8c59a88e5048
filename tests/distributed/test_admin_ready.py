"""`ensure_topics` returns only when every new partition has a leader that answers (the CI flake's cause).

Right after a topic is created, its partitions may still be electing a leader;
a watermark request then fails with NOT_LEADER_FOR_PARTITION. After
`ensure_topics`, a plain consumer's first, unretried request must succeed.
"""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, TopicPartition

from engram.distributed.admin import delete_namespace, ensure_topics
from engram.distributed.topics import TopicSpec


def test_new_topics_answer_watermark_requests_at_once(kafka_bootstrap: str) -> None:
    prefix = f"ready-{uuid.uuid4().hex[:8]}."
    specs = [TopicSpec(f"{prefix}t{n}", 6) for n in range(5)]
    try:
        report = ensure_topics(kafka_bootstrap, specs)
        assert sorted(report.created) == sorted(s.name for s in specs)
        consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": prefix + "probe"})
        try:
            consumer.list_topics(timeout=10)
            for spec in specs:
                for partition in range(spec.partitions):
                    assert consumer.get_watermark_offsets(TopicPartition(spec.name, partition), timeout=10) == (0, 0)
        finally:
            consumer.close()
        assert ensure_topics(kafka_bootstrap, specs).existing == [s.name for s in specs]  # idempotent
    finally:
        delete_namespace(kafka_bootstrap, prefix)
