"""Committed offsets of a consumer group, read without the AdminClient and without joining the group.

librdkafka 2.x can abort the whole process (assertion in `rd_kafka_enq_once_del_source_return`)
when an AdminClient request times out while the broker is down, which a broker
restart makes likely; an OffsetFetch from a consumer carrying the group's id, that
never subscribes or commits, answers the same question on the consumer's code path.
"""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import Consumer, KafkaException, TopicPartition

from .kafka_retry import retrying


def group_reader(bootstrap: str, group: str) -> Consumer:
    """A consumer with `group`'s id that only reads its committed offsets (never subscribes, never commits)."""
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "enable.auto.offset.store": False})


def committed_offsets(reader: Consumer, group: str, tps: Iterable[tuple[str, int]],
                      timeout: float = 10.0) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the group's committed offset, -1 where none (transient errors retried)."""
    wanted = [TopicPartition(topic, partition) for topic, partition in tps]
    if not wanted:
        return {}

    def ask() -> dict[tuple[str, int], int]:
        out = {}
        for tp in reader.committed(wanted, timeout=timeout):
            if tp.error is not None:
                raise KafkaException(tp.error)
            out[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else -1
        return out

    return retrying(ask, f"reading the committed offsets of {group}")
