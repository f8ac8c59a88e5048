"""Idempotent topic creation with the confluent-kafka AdminClient.

`ensure_topics` creates what is missing, sets the catalogue's configs on what
exists (an incremental alter: running it twice changes nothing), and refuses a
topic whose partition count differs from the catalogue: re-partitioning would
move users between partitions and break per-user order and state.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType,
)

from .topics import TopicSpec

log = logging.getLogger("engram.distributed.admin")


class TopicMismatch(RuntimeError):
    """An existing topic has a different partition count than the catalogue asks for."""


@dataclass
class TopicReport:
    """What `ensure_topics` did."""

    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)


def admin_client(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def ensure_topics(bootstrap: str, specs: Iterable[TopicSpec], timeout: float = 30.0) -> TopicReport:
    """Create missing topics and align configs of existing ones; safe to run any number of times."""
    admin = admin_client(bootstrap)
    wanted = list(specs)
    present = admin.list_topics(timeout=timeout).topics
    report = TopicReport()
    report.existing.extend(s.name for s in wanted if s.name in present)
    _create(admin, [s for s in wanted if s.name not in present], timeout, report)
    counts = _partition_counts(admin, [s.name for s in wanted], timeout)
    for spec in wanted:
        _check_partitions(spec, counts[spec.name])
    _align_configs(admin, [s for s in wanted if s.name in report.existing], timeout)
    return report


def _create(admin: AdminClient, specs: list[TopicSpec], timeout: float, report: TopicReport) -> None:
    new = [NewTopic(s.name, num_partitions=s.partitions, replication_factor=-1, config=dict(s.configs))
           for s in specs]
    futures = admin.create_topics(new, operation_timeout=timeout, request_timeout=timeout) if new else {}
    for name, future in futures.items():
        try:
            future.result(timeout=timeout)
            report.created.append(name)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
            report.existing.append(name)  # another worker (or a test) won the race
    if report.created:
        log.info("created topics: %s", ", ".join(report.created))


def _partition_counts(admin: AdminClient, names: list[str], timeout: float) -> dict[str, int]:
    """Partition counts as the broker's metadata shows them (waiting for just-created topics to appear)."""
    deadline = time.monotonic() + timeout
    while True:
        topics = admin.list_topics(timeout=timeout).topics
        counts = {n: len(topics[n].partitions) for n in names if n in topics and topics[n].partitions}
        if len(counts) == len(names) or time.monotonic() > deadline:
            missing = sorted(set(names) - set(counts))
            if missing:
                raise TimeoutError(f"topics not visible after creation: {', '.join(missing)}")
            return counts
        time.sleep(0.2)


def _check_partitions(spec: TopicSpec, actual: int) -> None:
    if actual != spec.partitions:
        raise TopicMismatch(
            f"topic {spec.name} has {actual} partitions, the catalogue says {spec.partitions}; "
            "re-partitioning would move users between partitions (create a new namespace instead)")


def _align_configs(admin: AdminClient, specs: list[TopicSpec], timeout: float) -> None:
    resources = [
        ConfigResource(ResourceType.TOPIC, s.name, incremental_configs=[
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in sorted(s.configs.items())
        ])
        for s in specs if s.configs
    ]
    if not resources:
        return
    for future in admin.incremental_alter_configs(resources, request_timeout=timeout).values():
        future.result(timeout=timeout)


def delete_topics(bootstrap: str, names: Iterable[str], timeout: float = 30.0) -> None:
    """Delete topics (tests and benchmarks clean up their namespaces); missing ones are ignored."""
    admin = admin_client(bootstrap)
    names = [n for n in names if n in admin.list_topics(timeout=timeout).topics]
    if not names:
        return
    for future in admin.delete_topics(names, operation_timeout=timeout, request_timeout=timeout).values():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
