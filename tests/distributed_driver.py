"""The golden-case driver on the distributed runtime: the same DistributedRuntime the CLI uses.

Each deployment gets its own topic prefix (Kafka data outlives runs), its own
Weaviate collections (prefix derived from it) and its own data folder (the
worker's chDB), and a real `engram worker --role all` process.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

from engram.distributed.admin import delete_namespace, ensure_topics
from engram.distributed.facade import DistributedRuntime, Endpoints
from engram.distributed.rebuild import merged_records, rebuild_weaviate
from engram.distributed.replay import worker_command
from engram.distributed.topics import Namespace, all_specs
from engram.projections.clickhouse_client import chdb_target
from engram.runtime.engine import IngestReport
from engram.schemas.base import Event
from engram.schemas.inputs import TurnInput
from tests.distributed.helpers import WorkerProcess
from tests.drivers import StoreReads


class Deployment:
    """A namespace, its topics, a worker process (role all) and the endpoints the CLI would use."""

    def __init__(self, bootstrap: str, weaviate_url: str, grpc_port: int, folder: Path,
                 worker_env: dict[str, str] | None = None) -> None:
        self.ns = Namespace(f"gold-{uuid.uuid4().hex[:10]}.")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.data = folder / "data"
        self.endpoints = Endpoints(bootstrap, self.ns, weaviate_url, grpc_port, chdb_target(self.data))
        ensure_topics(bootstrap, all_specs(self.ns))
        command = worker_command(self.ns, bootstrap, "--role", "all", "--batch-within", "0.02",
                                 "--weaviate-url", weaviate_url, "--weaviate-grpc-port", str(grpc_port),
                                 data=self.data)
        self.worker = WorkerProcess(command, folder / "worker.log", env=worker_env).start()

    def env(self) -> dict[str, str]:
        """The environment of a CLI command on this deployment."""
        e = self.endpoints
        return {"ENGRAM_RUNTIME": "distributed", "ENGRAM_DATA": str(self.data),
                "ENGRAM_KAFKA_BOOTSTRAP": e.bootstrap, "ENGRAM_KAFKA_PREFIX": self.ns.prefix,
                "ENGRAM_WEAVIATE_URL": e.weaviate_url, "ENGRAM_WEAVIATE_GRPC_PORT": str(e.weaviate_grpc_port),
                "ENGRAM_CLICKHOUSE_DSN": ""}

    def close(self) -> None:
        """Stop the worker, then delete the namespace's topics (the caller drops its collections)."""
        self.worker.stop()
        delete_namespace(self.endpoints.bootstrap, self.ns.prefix)


class DistributedDriver(StoreReads):
    name = "distributed"

    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment
        self.runtime = DistributedRuntime(deployment.endpoints, wait_timeout=180.0)

    def ingest(self, turns: Iterable[TurnInput]) -> IngestReport:
        return self._checked(lambda: self.runtime.ingest(turns))

    def append(self, events: Sequence[Event]) -> None:
        self._checked(lambda: self.runtime.append(events))

    def events(self, types: tuple[str, ...] = ()) -> list[Event]:
        self.runtime.producer.flush()
        seen: set[str] = set()
        out = []
        for record in merged_records(self.runtime.endpoints.bootstrap, self.deployment.ns):
            event = record.event
            if event is not None and event.event_id not in seen and (not types or event.type in types):
                seen.add(event.event_id)
                out.append(event)
        return out

    def replay(self) -> str:
        e = self.runtime.endpoints
        return rebuild_weaviate(e.bootstrap, e.namespace, self.runtime.store, self.runtime.ctx.embedder).after

    def close(self) -> None:
        self.deployment.worker.stop()
        try:
            self.runtime.store.drop()
        finally:
            self.runtime.close()
            self.deployment.close()

    def _checked(self, action):  # type: ignore[no-untyped-def]
        try:
            return action()
        except TimeoutError as exc:
            raise AssertionError(f"{exc}\n--- worker log\n{self.deployment.worker.tail()}") from exc
