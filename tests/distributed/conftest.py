"""Fixtures of the distributed-runtime tests: a fresh topic namespace per test, workers, produce/read."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.services import import_client

import_client("confluent_kafka", "kafka")
import_client("faust", "kafka")

from engram.distributed.admin import delete_namespace, ensure_topics  # noqa: E402
from engram.distributed.producer import TurnProducer  # noqa: E402
from engram.distributed.readback import read_topic, unique_events, wait_idle  # noqa: E402
from engram.distributed.replay import worker_command  # noqa: E402
from engram.distributed.topics import Namespace, all_specs  # noqa: E402
from engram.schemas.base import Event  # noqa: E402
from tests.distributed.helpers import DERIVED, WorkerProcess  # noqa: E402


class Cluster:
    """One test's view of Kafka: its namespace, its workers, and produce / wait / read helpers."""

    def __init__(self, bootstrap: str, ns: Namespace, folder: Path) -> None:
        self.bootstrap = bootstrap
        self.ns = ns
        self.folder = folder
        self.workers: list[WorkerProcess] = []

    def worker(self, *extra: str, ns: Namespace | None = None, name: str = "worker") -> WorkerProcess:
        space = ns or self.ns
        command = worker_command(space, self.bootstrap, "--batch-within", "0.02", *extra, data=self.folder / "data")
        process = WorkerProcess(command, self.folder / f"{name}-{len(self.workers)}.log")
        self.workers.append(process)
        return process

    def produce(self, events: Sequence[Event], ns: Namespace | None = None) -> TurnProducer:
        producer = TurnProducer(self.bootstrap, ns or self.ns)
        for event in events:
            assert producer.record(event)
        assert producer.close(60) == 0
        assert producer.counters["sent"] == len(events), producer.counters
        return producer

    def wait_idle(self, ns: Namespace | None = None, timeout: float = 120.0) -> float:
        return wait_idle(self.bootstrap, ns or self.ns, timeout=timeout)

    def derived(self, ns: Namespace | None = None) -> dict[str, Event]:
        space = ns or self.ns
        found: dict[str, Event] = {}
        for topic in DERIVED:
            found.update(unique_events(read_topic(self.bootstrap, space.topic(topic))))
        return found

    def logs(self) -> str:
        return "\n".join(f"--- {w.log_path.name}\n{w.tail()}" for w in self.workers)


@pytest.fixture
def cluster(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Cluster]:
    """A unique topic prefix (Kafka data outlives runs), created from the catalogue, deleted afterwards."""
    ns = Namespace(f"test-{uuid.uuid4().hex[:10]}.")
    ensure_topics(kafka_bootstrap, all_specs(ns))
    c = Cluster(kafka_bootstrap, ns, tmp_path)
    yield c
    for worker in c.workers:
        worker.stop()
    delete_namespace(kafka_bootstrap, ns.prefix)
