"""A broker restart mid-run: workers, projectors and `engram ingest --wait` ride it out, nothing is lost.

The test has its own broker (`private_kafka`: own ports and data dir, never the
shared one). One `engram worker --role all` runs throughout (never restarted).
The broker is SIGKILLed by pid twice and started again on the same data dir:

1. while `engram ingest FILE` waits for the workers to apply what it produced
   (the workers are mid-batch, the projector mid-write, the waiter mid-read);
2. before the next `engram ingest FILE` starts, so it produces into a dead
   broker and the broker comes back while the records sit in its queue.

A first small ingest makes sure the worker is up before the broker goes down
(a worker that cannot reach the broker while it starts exits, for its supervisor
to restart). Both ingests must succeed, the worker must still be its first process, the
derived topics must equal what the pure processors derive from the log, and
every memory and summary read from Weaviate must equal an embedded run of the
same two files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

from engram.distributed.erasure import close_ciphers  # noqa: E402
from engram.distributed.facade import DistributedRuntime  # noqa: E402
from engram.distributed.readback import high_watermarks, read_topic, unique_events, wait_idle  # noqa: E402
from engram.runtime.engine import EmbeddedRuntime  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.inputs import TurnInput  # noqa: E402
from tests.distributed.conftest import PrivateBroker  # noqa: E402
from tests.distributed.helpers import DERIVED, mismatch, reference  # noqa: E402
from tests.distributed_driver import Deployment  # noqa: E402
from tests.generators import conversations  # noqa: E402

STATUSES = ("active", "replaced", "retired", "archived")
TURNS = 1200
WARM = 40


def _write(path: Path, turns: list[TurnInput]) -> Path:
    path.write_text("".join(json.dumps(turn.model_dump(mode="json", exclude_none=True)) + "\n" for turn in turns))
    return path


def _ingest(env: dict[str, str], path: Path) -> subprocess.Popen[str]:
    script = Path(sys.executable).with_name("engram")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "engram.cli.main"]
    return subprocess.Popen([*command, "ingest", str(path)], env={**os.environ, **env},  # noqa: S603
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finished(proc: subprocess.Popen[str], deployment: Deployment, timeout: float = 300.0) -> str:
    """The ingest's output once it exited 0; else fail with it and the worker's log tail (what was stuck)."""
    out, _ = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        noise = ("Connect to ipv4", "Disconnected", "Unable connect", "Unable to update metadata", "NodeNotReady")
        worker = "\n".join([line for line in deployment.worker.tail(2000).splitlines()
                             if not any(n in line for n in noise)][-60:])
        raise AssertionError(f"ingest exited {proc.returncode}:\n{out[-4000:]}\n--- worker log tail\n{worker[-6000:]}")
    return out


def _produced(bootstrap: str, topic: str, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while sum(high_watermarks(bootstrap, [topic]).values()) < count:
        assert time.monotonic() < deadline, f"{topic} never reached {count} records"
        time.sleep(0.05)


def _state(runtime: object, turns: list[TurnInput]) -> dict[str, object]:
    store = runtime.store  # type: ignore[attr-defined]
    users = sorted({(turn.tenant, turn.user) for turn in turns})
    sessions = sorted({(turn.tenant, turn.user, turn.session) for turn in turns})
    memories = {f"{t_}/{u}": [r.model_dump(mode="json") for r in store.list_memories(t_, u, STATUSES)]
                for t_, u in users}
    summaries = {}
    for t_, u, s in sessions:
        found = store.latest_summary(t_, u, s)
        summaries[f"{t_}/{u}/{s}"] = None if found is None else (found.version, found.sections.model_dump(mode="json"))
    return {"memories": memories, "summaries": summaries}


@pytest.mark.slow
def test_a_broker_restart_mid_run_loses_nothing(private_kafka: PrivateBroker, weaviate_endpoint: WeaviateEndpoint,
                                                tmp_path: Path) -> None:
    turns = conversations(seed=1606, turns=TURNS, users=4)
    parts = [turns[:WARM], turns[WARM:TURNS // 2], turns[TURNS // 2:]]
    warm, first, second = (_write(tmp_path / f"part{n}.jsonl", part) for n, part in enumerate(parts))
    deployment = Deployment(private_kafka.bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port,
                            tmp_path / "dist")
    bootstrap, ns = private_kafka.bootstrap, deployment.ns
    try:
        env = deployment.env()
        assert "applied by the workers" in _finished(_ingest(env, warm), deployment)  # the worker is up and running
        # 1. killed while the ingest waits for the workers and projectors
        ingesting = _ingest(env, first)
        _produced(bootstrap, ns.topic(t.TURNS), TURNS // 2)  # produced; the workers are at work
        private_kafka.kill()
        time.sleep(2.0)
        restart = private_kafka.start()
        out = _finished(ingesting, deployment)
        assert "applied by the workers" in out, out

        # 2. down when the next ingest produces; back while its records wait in the producer's queue
        private_kafka.kill()
        ingesting = _ingest(env, second)
        threading.Event().wait(3.0)
        restart = max(restart, private_kafka.start())
        out = _finished(ingesting, deployment)
        assert "applied by the workers" in out, out

        assert deployment.worker.alive() and deployment.worker.starts == 1, deployment.worker.tail()
        wait_idle(bootstrap, ns, role="any", timeout=120)
        edge = [r.event for topic in (t.TURNS, t.COMMANDS) for r in read_topic(bootstrap, ns.topic(topic))
                if r.event is not None]
        assert len({e.event_id for e in edge if e.type == "TurnRecorded"}) == TURNS
        derived: dict[str, object] = {}
        for topic in DERIVED:
            derived.update(unique_events(read_topic(bootstrap, ns.topic(topic))))
        assert mismatch(reference(edge), derived) == "", deployment.worker.tail()  # type: ignore[arg-type]

        with EmbeddedRuntime(tmp_path / "embedded") as embedded:
            for part in parts:
                embedded.ingest(part)
            expected = _state(embedded, turns)
        with DistributedRuntime(deployment.endpoints) as runtime:
            actual = _state(runtime, turns)
            try:
                assert actual == expected
                assert sum(len(v) for v in actual["memories"].values()) > 0  # type: ignore[union-attr]
            finally:
                runtime.store.drop()
        print(f"broker starts: {private_kafka.starts}; slowest restart {restart:.1f}s")
    finally:
        deployment.close()
        close_ciphers(bootstrap)  # this process's key store of the private broker: no client outlives it
