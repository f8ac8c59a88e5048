"""Idempotent topic creation with the confluent-kafka AdminClient.

`ensure_topics` creates what is missing, sets the catalogue's configs on what
exists (an incremental alter: running it twice changes nothing), and refuses a
topic whose partition count differs from the catalogue: re-partitioning would
move users between partitions and break per-user order and state. It returns
only once every partition of every topic has a leader, and the leaders of the
topics it created answer an offset request: a caller can read watermarks or
produce at once. Every request retries transient broker errors (`kafka_retry`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, OffsetSpec, ResourceType,
)

from .kafka_retry import is_transient, kafka_error, retrying
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


def topic_partitions(admin: AdminClient, timeout: float = 30.0) -> dict[str, list[int]]:
    """Every topic the broker knows -> its partition ids (retried)."""
    topics = retrying(lambda: admin.list_topics(timeout=timeout).topics, "listing topics")
    return {name: sorted(meta.partitions) for name, meta in topics.items()}


def namespace_topics(bootstrap: str, prefix: str, timeout: float = 30.0) -> list[str]:
    """Names of the topics starting with `prefix` (a test's or benchmark's namespace)."""
    return sorted(n for n in topic_partitions(admin_client(bootstrap), timeout) if n.startswith(prefix))


def ensure_topics(bootstrap: str, specs: Iterable[TopicSpec], timeout: float = 30.0) -> TopicReport:
    """Create missing topics and align configs of existing ones; safe to run any number of times."""
    admin = admin_client(bootstrap)
    wanted = list(specs)
    present = topic_partitions(admin, timeout)
    report = TopicReport()
    report.existing.extend(s.name for s in wanted if s.name in present)
    _create(admin, [s for s in wanted if s.name not in present], timeout, report)
    counts = wait_for_leaders(admin, [s.name for s in wanted], timeout)
    for spec in wanted:
        _check_partitions(spec, counts[spec.name])
    _align_configs(admin, [s for s in wanted if s.name in report.existing], timeout)
    if report.created:
        _wait_serving(admin, {n: counts[n] for n in report.created}, timeout)
    return report


def _create(admin: AdminClient, specs: list[TopicSpec], timeout: float, report: TopicReport) -> None:
    pending = {s.name: s for s in specs}

    def attempt() -> None:
        new = [NewTopic(s.name, num_partitions=s.partitions, replication_factor=-1, config=dict(s.configs))
               for s in pending.values()]
        transient: KafkaException | None = None
        for name, future in admin.create_topics(new, operation_timeout=timeout, request_timeout=timeout).items():
            try:
                future.result(timeout=timeout + 5)
                report.created.append(name)
            except KafkaException as exc:
                error = kafka_error(exc)
                if error is not None and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    report.existing.append(name)  # another worker (or an earlier attempt) won the race
                elif is_transient(exc):
                    transient = exc
                    continue
                else:
                    raise
            del pending[name]
        if transient is not None:
            raise transient

    if pending:
        retrying(attempt, f"creating {len(pending)} topic(s)")
    if report.created:
        log.info("created topics: %s", ", ".join(report.created))


def wait_for_leaders(admin: AdminClient, names: list[str], timeout: float = 30.0) -> dict[str, int]:
    """Partition counts once every partition of `names` has a leader in the broker's metadata.

    Raises TimeoutError naming the topics still without (all) leaders after `timeout` s.
    """
    deadline = time.monotonic() + timeout
    while True:
        topics = retrying(lambda: admin.list_topics(timeout=timeout).topics, "listing topics")
        ready = {n: len(topics[n].partitions) for n in names if n in topics and _led(topics[n])}
        if len(ready) == len(names):
            return ready
        if time.monotonic() > deadline:
            missing = sorted(set(names) - set(ready))
            raise TimeoutError(f"topics without a leader for every partition after {timeout}s: {', '.join(missing)}")
        time.sleep(0.1)


def _led(meta: object) -> bool:
    partitions = getattr(meta, "partitions", {})
    return bool(partitions) and getattr(meta, "error", None) is None and all(
        p.leader >= 0 and p.error is None for p in partitions.values())


def _wait_serving(admin: AdminClient, counts: dict[str, int], timeout: float) -> None:
    """Ask every new partition's leader for its end offset: the first request right after creation may
    meet NOT_LEADER_FOR_PARTITION while the leader loads the partition (retried until it answers)."""
    request = {TopicPartition(name, p): OffsetSpec.latest() for name, count in counts.items() for p in range(count)}

    def attempt() -> None:
        for future in admin.list_offsets(request, request_timeout=timeout).values():
            future.result(timeout=timeout + 5)

    retrying(attempt, f"reading the end offsets of {len(counts)} new topic(s)")


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

    def attempt() -> None:
        for future in admin.incremental_alter_configs(resources, request_timeout=timeout).values():
            future.result(timeout=timeout + 5)

    retrying(attempt, f"aligning the configs of {len(resources)} topic(s)")


def delete_topics(bootstrap: str, names: Iterable[str], timeout: float = 30.0) -> None:
    """Delete topics (tests and benchmarks clean up their namespaces); missing ones are ignored."""
    admin = admin_client(bootstrap)
    present = topic_partitions(admin, timeout)
    pending = [n for n in names if n in present]

    def attempt() -> None:
        transient: KafkaException | None = None
        for name, future in admin.delete_topics(list(pending), operation_timeout=timeout,
                                                request_timeout=timeout).items():
            try:
                future.result(timeout=timeout + 5)
            except KafkaException as exc:
                error = kafka_error(exc)
                if not (error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
                    if not is_transient(exc):
                        raise
                    transient = exc
                    continue
            pending.remove(name)
        if transient is not None:
            raise transient

    if pending:
        retrying(attempt, f"deleting {len(pending)} topic(s)")


def delete_namespace(bootstrap: str, prefix: str, timeout: float = 30.0) -> None:
    """Delete every topic whose name starts with `prefix` (must not be empty)."""
    if not prefix:
        raise ValueError("refusing to delete every topic of the cluster (empty prefix)")
    from .erasure import close_ciphers

    close_ciphers(bootstrap, prefix)  # this process's key store of the namespace stops reading its topic
    delete_topics(bootstrap, namespace_topics(bootstrap, prefix, timeout), timeout)
