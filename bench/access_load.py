"""Access-layer load test (bounded, loopback): concurrent chat clients recalling and recording over HTTP.

Starts `engram serve`'s app (the HTTP API over the runtime port) on 127.0.0.1 in
this process — on the embedded runtime (a fresh data folder) or the distributed
one (a fresh topic namespace, one real `engram worker --role all` process,
Weaviate, the worker's chDB) — seeds each client's user with a few facts, then
runs `--clients` threads, each doing `--rounds` chat turns the usual way: recall
(POST /v1/recall, `--deadline-ms`), then record the exchange (POST /v1/turns).
Every third round starts a new session, so first-message recalls of new
sessions are part of the mix. Reports recall and record p50/p95/p99/max,
errors (non-200), degraded recalls, recalls that injected memory; one JSON
line, then a table.

    python -m bench.access_load --runtime embedded --clients 20
    python -m bench.access_load --runtime distributed --clients 20 --rounds 6

Needs, for the distributed runtime, Kafka (ENGRAM_KAFKA_BOOTSTRAP, default 127.0.0.1:9092) and Weaviate
(ENGRAM_WEAVIATE_URL / ENGRAM_WEAVIATE_GRPC_PORT, default http://127.0.0.1:8080, 50051).
"""

from __future__ import annotations

import argparse
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from engram.access.app import server_app
from engram.access.auth import KeyRing
from engram.runtime_port import MemoryRuntime

from .common import emit, machine_info, table
from .distributed_common import DEFAULT_BOOTSTRAP, BenchCluster, percentile

FACTS = ["I prefer green tea in the morning", "I live in Porto", "I work as a nurse in Lisbon",
         "I love hiking in the mountains on weekends", "I plan to learn Rust this year"]
QUESTIONS = ["What should I drink in the morning?", "Where do I live?", "What is my job?",
             "What do I like to do on weekends?", "What am I learning this year?"]


@dataclass
class Tally:
    recall_ms: list[float] = field(default_factory=list)
    record_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    degraded: int = 0
    server_ms: list[float] = field(default_factory=list)
    """The server's own retrieval + build time of each recall (what the deadline bounds, after queueing)."""
    missed: dict[str, int] = field(default_factory=dict)
    injected: int = 0
    new_sessions: int = 0
    new_session_injected: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(backend: MemoryRuntime) -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(server_app(backend, KeyRing(), "127.0.0.1"), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def runtime(kind: str, folder: Path, args: argparse.Namespace) -> Iterator[MemoryRuntime]:
    if kind == "embedded":
        from engram.runtime.backend import EmbeddedBackend

        backend = EmbeddedBackend.open(folder / "data")
        try:
            yield backend
        finally:
            backend.close()
        return
    from engram.distributed.backend import DistributedBackend
    from engram.distributed.facade import DistributedRuntime, Endpoints
    from engram.projections.clickhouse_client import chdb_target

    cluster = BenchCluster(args.bootstrap, 1, folder, ["--role", "all", "--batch-within", "0.02",
                                                       "--weaviate-url", args.weaviate_url,
                                                       "--weaviate-grpc-port", str(args.grpc_port)])
    cluster.start()
    endpoints = Endpoints(args.bootstrap, cluster.ns, args.weaviate_url, args.grpc_port, chdb_target(folder / "data"))
    backend = DistributedBackend(DistributedRuntime(endpoints, wait_timeout=300.0))
    try:
        yield backend
    finally:
        try:
            backend.runtime.store.drop()
        finally:
            backend.close()
            cluster.close()


def _turn(tenant: str, user: str, session: str, content: str, role: str = "user") -> dict[str, str]:
    return {"tenant": tenant, "user": user, "agent": "coach", "session": session, "role": role,
            "message_id": uuid.uuid4().hex, "content": content}


def client(url: str, tenant: str, index: int, rounds: int, deadline_ms: float, tally: Tally) -> None:
    user = f"user-{index}"
    with httpx.Client(base_url=url, timeout=600) as http:
        for r in range(rounds):
            session = f"s{r // 3}"
            question = QUESTIONS[(index + r) % len(QUESTIONS)]
            start = time.perf_counter()
            try:
                response = http.post("/v1/recall", json={"tenant": tenant, "user": user, "agent": "coach",
                                                         "session": session, "question": question,
                                                         "deadline_ms": deadline_ms})
            except httpx.HTTPError as exc:
                tally.error(f"recall:{type(exc).__name__}")
                continue
            elapsed = (time.perf_counter() - start) * 1000
            if response.status_code != 200:
                tally.error(f"recall:{response.status_code}")
            else:
                body = response.json()
                with tally.lock:
                    tally.recall_ms.append(elapsed)
                    tally.degraded += body["degraded"]
                    tally.server_ms.append(body.get("retrieval_ms", 0.0) + body.get("build_ms", 0.0))
                    for part in body.get("missed", []):
                        tally.missed[part] = tally.missed.get(part, 0) + 1
                    tally.injected += body["injected"]
                    if not body["session_known"]:
                        tally.new_sessions += 1
                        tally.new_session_injected += body["injected"]
            exchange = [_turn(tenant, user, session, question), _turn(tenant, user, session, "Noted.", "assistant")]
            start = time.perf_counter()
            try:
                recorded = http.post("/v1/turns", json={"turns": exchange})
            except httpx.HTTPError as exc:
                tally.error(f"record:{type(exc).__name__}")
                continue
            if recorded.status_code != 200:
                tally.error(f"record:{recorded.status_code}")
            else:
                with tally.lock:
                    tally.record_ms.append((time.perf_counter() - start) * 1000)


def run(args: argparse.Namespace) -> dict[str, Any]:
    tenant = f"load-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory(prefix="engram-load-") as tmp, runtime(args.runtime, Path(tmp), args) as backend, \
            serving(backend) as url:
        with httpx.Client(base_url=url, timeout=600) as http:
            seed = [_turn(tenant, f"user-{i}", "seed", fact) for i in range(args.clients) for fact in FACTS]
            http.post("/v1/turns", json={"turns": seed}).raise_for_status()
        tally = Tally()
        threads = [threading.Thread(target=client, args=(url, tenant, i, args.rounds, args.deadline_ms, tally))
                   for i in range(args.clients)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - start
    return {
        "bench": "access_load", "runtime": args.runtime, "clients": args.clients, "rounds": args.rounds,
        "deadline_ms": args.deadline_ms, "seconds": round(seconds, 2),
        "recalls": len(tally.recall_ms), "records": len(tally.record_ms),
        **{f"recall_p{q}_ms": round(percentile(tally.recall_ms, q), 1) for q in (50, 95, 99)},
        "recall_max_ms": round(max(tally.recall_ms, default=float("nan")), 1),
        **{f"record_p{q}_ms": round(percentile(tally.record_ms, q), 1) for q in (50, 95, 99)},
        "errors": tally.errors, "degraded": tally.degraded, "injected": tally.injected,
        **{f"server_p{q}_ms": round(percentile(tally.server_ms, q), 1) for q in (50, 95, 99)},
        "missed": tally.missed,
        "new_session_recalls": tally.new_sessions, "new_session_injected": tally.new_session_injected,
        "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", choices=["embedded", "distributed"], default="embedded")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6, help="chat turns per client (recall + record)")
    parser.add_argument("--deadline-ms", type=float, default=300.0)
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--weaviate-url", default=os.environ.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--grpc-port", type=int, default=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")))
    args = parser.parse_args(argv)
    result = run(args)
    emit(result)
    print(table(["runtime", "clients", "recalls", "p50 ms", "p95 ms", "p99 ms", "max ms", "record p50", "record p95",
                 "errors", "degraded"],
                [[result["runtime"], result["clients"], result["recalls"], result["recall_p50_ms"],
                  result["recall_p95_ms"], result["recall_p99_ms"], result["recall_max_ms"], result["record_p50_ms"],
                  result["record_p95_ms"], sum(result["errors"].values()), result["degraded"]]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
