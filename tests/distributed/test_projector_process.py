"""`engram worker --role all`: its projectors run in a child process that lives and dies with the worker."""

from __future__ import annotations

import os
import re
import signal
import time

from bench.distributed_common import child_pids
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import WorkerProcess, edge_events
from tests.services import WeaviateEndpoint, import_client, process_running, wait_gone

import_client("weaviate", "weaviate")

RUNNING = re.compile(r"projectors: running in process (\d+)")


def _projector_child(cluster: Cluster, weaviate: WeaviateEndpoint) -> tuple[int, int, WorkerProcess]:
    worker = cluster.worker("--role", "all", "--weaviate-url", weaviate.url, "--weaviate-grpc-port",
                            str(weaviate.grpc_port), "--no-analytics", name="all").start()
    assert worker.proc is not None
    deadline = time.monotonic() + 120
    while (found := RUNNING.search(worker.tail(400))) is None:
        assert worker.alive() and time.monotonic() < deadline, worker.tail()
        time.sleep(0.2)
    return worker.proc.pid, int(found.group(1)), worker


def test_a_killed_worker_takes_its_projector_process_with_it(cluster: Cluster,
                                                            weaviate_endpoint: WeaviateEndpoint) -> None:
    parent, child, worker = _projector_child(cluster, weaviate_endpoint)
    assert child in child_pids(parent)
    worker.kill()  # SIGKILL: no shutdown hook runs in the worker
    assert wait_gone(child, 30), f"projector process {child} outlived its worker"


def test_a_projector_process_that_dies_stops_the_worker(cluster: Cluster,
                                                        weaviate_endpoint: WeaviateEndpoint) -> None:
    _parent, child, worker = _projector_child(cluster, weaviate_endpoint)
    os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while worker.alive():
        assert time.monotonic() < deadline, worker.tail()
        time.sleep(0.1)
    assert worker.proc is not None and worker.proc.returncode == 70, worker.tail()
    assert "projector process" in worker.tail() and not process_running(child)


def test_a_stop_signal_to_the_whole_group_is_a_clean_stop(cluster: Cluster,
                                                          weaviate_endpoint: WeaviateEndpoint) -> None:
    """A service manager's SIGTERM reaches the child too: the child leaves stopping to the worker."""
    parent, child, worker = _projector_child(cluster, weaviate_endpoint)
    cluster.produce(edge_events(seed=41, turns=6, users=1))
    cluster.wait_idle()  # faust runs (and handles SIGTERM) once its stages have done the turns
    os.kill(child, signal.SIGTERM)
    os.kill(parent, signal.SIGTERM)
    assert worker.proc is not None
    worker.proc.wait(timeout=60)
    assert worker.proc.returncode == 0, worker.tail()
    assert wait_gone(child, 30) and "projector process" not in worker.tail()
