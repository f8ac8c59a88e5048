"""Fixtures of the distributed-runtime tests: a fresh topic namespace per test, workers, produce/read."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.services import SERVICES_SCRIPT, free_port, import_client, pid_in, terminate, unavailable, wait_gone

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


class PrivateBroker:
    """A Kafka broker of this test alone (own ports, own data dir), for fault tests: kill it, start it again.

    Started with `deploy/local/services up kafka` and ENGRAM_KAFKA_PORT / ENGRAM_KAFKA_CONTROLLER_PORT /
    ENGRAM_SERVICES_DIR, so the shared broker is never touched; stopped by the pid its pid file holds.
    """

    def __init__(self, folder: Path) -> None:
        self.port, self.controller_port = free_port(), free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self.folder = folder
        self.env = {**os.environ, "ENGRAM_KAFKA_PORT": str(self.port),
                    "ENGRAM_KAFKA_CONTROLLER_PORT": str(self.controller_port), "ENGRAM_SERVICES_DIR": str(folder)}
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.starts = 0

    @property
    def pid_file(self) -> Path:
        return self.folder / "kafka" / "kafka.pid"

    def pid(self) -> int | None:
        return pid_in(self.pid_file)

    def start(self, timeout: float = 180.0) -> float:
        """`services up kafka` on the same data dir (a restart keeps every topic); returns the seconds taken."""
        began = time.monotonic()
        done = subprocess.run([str(SERVICES_SCRIPT), "up", "kafka"], env=self.env, capture_output=True,  # noqa: S603
                              text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"private broker did not start:\n{done.stderr[-3000:]}")
        self.starts += 1
        return time.monotonic() - began

    def kill(self) -> None:
        """SIGKILL the broker process by its pid (no controlled shutdown) and wait until it is gone."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid)

    def stop(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        terminate(pid, 30.0)



@pytest.fixture
def private_kafka(tmp_path: Path) -> Iterator[PrivateBroker]:
    """A Kafka broker this test may kill and restart (marked `kafka` at collection, like `kafka_bootstrap`)."""
    broker = PrivateBroker(tmp_path / "private-kafka")
    try:
        broker.start()
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        broker.stop()
        unavailable("kafka", f"a private broker for the fault test: {exc}")
    try:
        yield broker
    finally:
        broker.stop()
