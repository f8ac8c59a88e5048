"""Access-layer load test (bounded, loopback): concurrent chat clients, in other processes than the server.

The server runs `engram serve` in a process of its own (embedded runtime, a fresh data folder) — or,
for the distributed runtime, the HTTP app in this process over a fresh topic namespace, one real
`engram worker --role all` process, Weaviate and the worker's chDB. Each client's user is seeded with
a few facts; then `--clients` chat clients run in `--client-processes` processes (threads within
each), each round doing the usual chat work plus the reads a platform does beside it: recall
(POST /v1/recall, `--deadline-ms`), record the exchange (POST /v1/turns), search (POST /v1/search)
and list the memories (GET /v1/memories). Every third round starts a new session, so first-message
recalls of new sessions are part of the mix. `--seconds` runs for that long instead of `--rounds`.
Reports per operation p50/p95/p99/max and errors, the share of degraded recalls, recalls that
injected memory, and the machine load (1-minute load average before and after); one JSON line,
then a table.

    python -m bench.access_load --runtime embedded --clients 50 --seconds 20
    python -m bench.access_load --runtime distributed --clients 20 --rounds 6

Needs, for the distributed runtime, Kafka (ENGRAM_KAFKA_BOOTSTRAP, default 127.0.0.1:9092) and Weaviate
(ENGRAM_WEAVIATE_URL / ENGRAM_WEAVIATE_GRPC_PORT, default http://127.0.0.1:8080, 50051).
"""

from __future__ import annotations

import argparse
import http.client
import http.client as http_client
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import orjson

from .common import emit, machine_info, table
from .distributed_common import DEFAULT_BOOTSTRAP, BenchCluster, percentile

FACTS = ["I prefer green tea in the morning", "I live in Porto", "I work as a nurse in Lisbon",
         "I love hiking in the mountains on weekends", "I plan to learn Rust this year"]
QUESTIONS = ["What should I drink in the morning?", "Where do I live?", "What is my job?",
             "What do I like to do on weekends?", "What am I learning this year?"]
OPERATIONS = ("recall", "record", "search", "memories")


@dataclass
class Tally:
    ms: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})
    errors: dict[str, int] = field(default_factory=dict)
    degraded: int = 0
    server_ms: list[float] = field(default_factory=list)
    """The server's own retrieval + build time of each recall (what the deadline bounds, after queueing)."""
    missed: dict[str, int] = field(default_factory=dict)
    injected: int = 0
    new_sessions: int = 0
    new_session_injected: int = 0

    def merge(self, other: dict[str, Any]) -> None:
        for op, values in other["ms"].items():
            self.ms[op].extend(values)
        for name in ("errors", "missed"):
            for key, count in other[name].items():
                getattr(self, name)[key] = getattr(self, name).get(key, 0) + count
        self.server_ms.extend(other["server_ms"])
        for name in ("degraded", "injected", "new_sessions", "new_session_injected"):
            setattr(self, name, getattr(self, name) + other[name])


@dataclass(frozen=True)
class Plan:
    url: str
    tenant: str
    rounds: int
    seconds: float | None
    deadline_ms: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(folder: Path) -> Iterator[tuple[str, int]]:
    """`engram serve` over a fresh data folder, in a process of its own: (url, pid)."""
    port = _free_port()
    env = {**os.environ, "ENGRAM_LOG_LEVEL": "warning", "ENGRAM_RUNTIME": "embedded"}
    server = subprocess.Popen([sys.executable, "-m", "engram.cli.main", "--data", str(folder / "data"), "serve",
                               "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"engram serve exited: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("engram serve did not start")
            time.sleep(0.1)
        yield url, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


@contextmanager
def serve_distributed(folder: Path, args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    """The HTTP app in this process (uvicorn thread) over the distributed runtime: (url, this pid)."""
    import uvicorn

    from engram.access.app import server_app
    from engram.access.auth import KeyRing
    from engram.distributed.backend import DistributedBackend
    from engram.distributed.facade import DistributedRuntime, Endpoints
    from engram.projections.clickhouse_client import chdb_target

    cluster = BenchCluster(args.bootstrap, 1, folder, ["--role", "all", "--batch-within", "0.02",
                                                       "--weaviate-url", args.weaviate_url,
                                                       "--weaviate-grpc-port", str(args.grpc_port)])
    cluster.start()
    endpoints = Endpoints(args.bootstrap, cluster.ns, args.weaviate_url, args.grpc_port, chdb_target(folder / "data"))
    backend = DistributedBackend(DistributedRuntime(endpoints, wait_timeout=300.0))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(server_app(backend, KeyRing(), "127.0.0.1"), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}", os.getpid()
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        try:
            backend.runtime.store.drop()
        finally:
            backend.close()
            cluster.close()


def _turn(tenant: str, user: str, session: str, content: str, role: str = "user") -> dict[str, str]:
    return {"tenant": tenant, "user": user, "agent": "coach", "session": session, "role": role,
            "message_id": uuid.uuid4().hex, "content": content}


class Http:
    """A small keep-alive HTTP/1.1 JSON client (http.client): a tenth of httpx's CPU per request, so on a
    small machine the clients' own overhead does not dominate what is measured."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, json: Any = None, params: dict[str, str] | None = None) -> Reply:
        body = orjson.dumps(json) if json is not None else None
        target = f"{path}?{urlencode(params)}" if params else path
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in (0, 1):
            conn = self._conn or http.client.HTTPConnection(self._host, self._port, timeout=600)
            self._conn = conn
            try:
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                return Reply(response.status, response.read())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                self._conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@dataclass(frozen=True)
class Reply:
    status_code: int
    content: bytes

    def json(self) -> Any:
        return orjson.loads(self.content)


class Client:
    """One chat client (one user): recall, record, search, memories, round after round."""

    def __init__(self, plan: Plan, index: int, tally: Tally, lock: threading.Lock) -> None:
        self.plan, self.user, self.tally, self.lock = plan, f"user-{index}", tally, lock
        self.index = index

    def run(self) -> None:
        stop = time.perf_counter() + self.plan.seconds if self.plan.seconds else None
        client = Http(self.plan.url)
        try:
            r = 0
            while (r < self.plan.rounds) if stop is None else (time.perf_counter() < stop):
                self.round(client, r)
                r += 1
        finally:
            client.close()

    def round(self, http: Http, r: int) -> None:
        tenant, session = self.plan.tenant, f"s{r // 3}"
        question = QUESTIONS[(self.index + r) % len(QUESTIONS)]
        recalled = self.call(http, "recall", "POST", "/v1/recall", json={
            "tenant": tenant, "user": self.user, "agent": "coach", "session": session, "question": question,
            "deadline_ms": self.plan.deadline_ms})
        if recalled is not None:
            self.count_recall(recalled.json())
        exchange = [_turn(tenant, self.user, session, question), _turn(tenant, self.user, session, "Noted.", "assistant")]
        self.call(http, "record", "POST", "/v1/turns", json={"turns": exchange})
        self.call(http, "search", "POST", "/v1/search", json={"tenant": tenant, "user": self.user,
                                                             "query": question, "limit": 5})
        self.call(http, "memories", "GET", "/v1/memories", params={"tenant": tenant, "user": self.user})

    def call(self, http: Http, op: str, method: str, path: str, **kwargs: Any) -> Reply | None:
        start = time.perf_counter()
        try:
            response = http.request(method, path, **kwargs)
        except (OSError, http_client.HTTPException) as exc:
            self.error(f"{op}:{type(exc).__name__}")
            return None
        elapsed = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            self.error(f"{op}:{response.status_code}")
            return None
        with self.lock:
            self.tally.ms[op].append(elapsed)
        return response

    def count_recall(self, body: dict[str, Any]) -> None:
        with self.lock:
            tally = self.tally
            tally.degraded += body["degraded"]
            tally.server_ms.append(body.get("retrieval_ms", 0.0) + body.get("build_ms", 0.0))
            for part in body.get("missed", []):
                tally.missed[part] = tally.missed.get(part, 0) + 1
            tally.injected += body["injected"]
            if not body["session_known"]:
                tally.new_sessions += 1
                tally.new_session_injected += body["injected"]

    def error(self, what: str) -> None:
        with self.lock:
            self.tally.errors[what] = self.tally.errors.get(what, 0) + 1


def client_process(plan: Plan, indexes: list[int]) -> dict[str, Any]:
    """Run these clients on threads of this process; their tally as a dict."""
    tally, lock = Tally(), threading.Lock()
    threads = [threading.Thread(target=Client(plan, i, tally, lock).run) for i in indexes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return asdict(tally)


def run_clients(plan: Plan, clients: int, processes: int) -> tuple[Tally, float]:
    """`clients` clients spread over `processes` processes (spawned: none shares the server's); (tally, s)."""
    groups = [list(range(clients))[p::processes] for p in range(processes)]
    tally = Tally()
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        list(pool.map(_noop, range(processes)))  # interpreters up before the clock starts
        start = time.perf_counter()
        for part in pool.map(client_process, [plan] * processes, groups):
            tally.merge(part)
        seconds = time.perf_counter() - start
    return tally, seconds


def _noop(_: int) -> None:
    return None


def _cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run(args: argparse.Namespace) -> dict[str, Any]:
    tenant = f"load-{uuid.uuid4().hex[:6]}"
    processes = max(1, min(args.clients, args.client_processes))
    with tempfile.TemporaryDirectory(prefix="engram-load-") as tmp:
        serving = serve_process(Path(tmp)) if args.runtime == "embedded" else serve_distributed(Path(tmp), args)
        with serving as (url, server_pid):
            with httpx.Client(base_url=url, timeout=600) as http:
                seed = [_turn(tenant, f"user-{i}", "seed", fact) for i in range(args.clients) for fact in FACTS]
                http.post("/v1/turns", json={"turns": seed}).raise_for_status()
            load_before, cpu_before = os.getloadavg()[0], _cpu_seconds(server_pid)
            plan = Plan(url, tenant, args.rounds, args.seconds, args.deadline_ms)
            tally, seconds = run_clients(plan, args.clients, processes)
            load_after, cpu_after = os.getloadavg()[0], _cpu_seconds(server_pid)
    recalls = len(tally.ms["recall"])
    server_cpu = None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 1)
    return {
        "bench": "access_load", "runtime": args.runtime, "clients": args.clients, "client_processes": processes,
        "rounds": args.rounds, "seconds_asked": args.seconds, "mix": "recall, record (2 turns), search, memories "
        "per round", "deadline_ms": args.deadline_ms, "seconds": round(seconds, 2),
        "recalls": recalls, "records": len(tally.ms["record"]), "searches": len(tally.ms["search"]),
        "listings": len(tally.ms["memories"]),
        **{f"recall_p{q}_ms": round(percentile(tally.ms["recall"], q), 1) for q in (50, 95, 99)},
        "recall_max_ms": round(max(tally.ms["recall"], default=float("nan")), 1),
        **{f"{op}_p{q}_ms": round(percentile(tally.ms[op], q), 1) for op in ("record", "search", "memories")
           for q in (50, 95, 99)},
        "errors": tally.errors, "degraded": tally.degraded,
        "degraded_share": round(tally.degraded / recalls, 4) if recalls else None, "injected": tally.injected,
        **{f"server_p{q}_ms": round(percentile(tally.server_ms, q), 1) for q in (50, 95, 99)},
        "missed": tally.missed,
        "new_session_recalls": tally.new_sessions, "new_session_injected": tally.new_session_injected,
        "load_1min_before": round(load_before, 2), "load_1min_after": round(load_after, 2),
        "server_cpu_s": server_cpu, "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", choices=["embedded", "distributed"], default="embedded")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--client-processes", type=int, default=5,
                        help="processes the clients are spread over (threads within each)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per client (recall, record, search, memories)")
    parser.add_argument("--seconds", type=float, default=None, help="run this long instead of --rounds")
    parser.add_argument("--deadline-ms", type=float, default=300.0)
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--weaviate-url", default=os.environ.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--grpc-port", type=int, default=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")))
    args = parser.parse_args(argv)
    result = run(args)
    emit(result)
    print(table(["op", "count", "p50 ms", "p95 ms", "p99 ms", "errors"],
                [[op, len_of(result, op), result[f"{op}_p50_ms"], result[f"{op}_p95_ms"], result[f"{op}_p99_ms"],
                  sum(v for k, v in result["errors"].items() if k.startswith(f"{op}:"))] for op in OPERATIONS]))
    print(f"clients {result['clients']} in {result['client_processes']} processes, {result['seconds']} s; "
          f"degraded recalls {result['degraded']} of {result['recalls']} ({100 * (result['degraded_share'] or 0):.2f} %); "
          f"load {result['load_1min_before']} -> {result['load_1min_after']}; server CPU {result['server_cpu_s']} s")
    return 0


def len_of(result: dict[str, Any], op: str) -> int:
    return int(result[{"recall": "recalls", "record": "records", "search": "searches", "memories": "listings"}[op]])


if __name__ == "__main__":
    raise SystemExit(main())
