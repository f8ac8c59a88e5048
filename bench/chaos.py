"""Chaos runs: several `engram worker --role all` on one prefix, SIGKILLed and joining, vs the embedded run.

    python -m bench.chaos --workers 3 --turns 20000 --runs 5

Per run: synthetic turns (`bench.synthetic`: preferences, contradictions,
repeats) go through the embedded runtime, and are produced at `--rate` turns/s
to a fresh prefix while `--workers` worker processes (processors and projectors
in one process each, as a new user starts them) consume it; every `--every`
seconds (random around it) one worker is SIGKILLed by pid or a new one joins
(alternately, so about `--workers` run at any time). When the workers have
applied everything, the run compares with the embedded run:

- the derived events (ids and contents) of every derived topic;
- the memory fold of the memory-changes topic (version-guarded, like a projection);
- the projected state in Weaviate: every user's memories in every status
  (ids, contents, source_count, versions ...), against the embedded store's.

One JSON line per run (`"equal"`, the differences, kills and joins), then a table.
Exit status 1 when any run differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, get_args

from bench.synthetic import generate_turns
from engram.distributed.admin import admin_client, delete_topics, ensure_topics
from engram.distributed.applied import AppliedWaiter
from engram.distributed.erasure import cipher_for
from engram.distributed.producer import TurnProducer
from engram.distributed.projector import weaviate_prefix
from engram.distributed.readback import fold_memories, high_watermarks, read_topic, unique_events
from engram.distributed.replay import worker_command
from engram.distributed.topics import SOURCE_TOPICS, Namespace, all_specs
from engram.projections.weaviate_store import WeaviateStore
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import to_dict
from engram.schemas.inputs import to_turn_event
from engram.schemas.memory import MemoryRecord, MemoryStatus

STATUSES: tuple[str, ...] = get_args(MemoryStatus)
EDGE_TYPES = ("TurnRecorded", "SummaryRequested")
DERIVED = [x for x in t.CATALOGUE if x not in SOURCE_TOPICS]
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Endpoints:
    bootstrap: str
    weaviate_url: str
    grpc_port: int


@dataclass
class Expected:
    """The embedded run: derived events by id and every user's memories (all statuses)."""

    events: dict[str, Event]
    memories: dict[tuple[str, str], list[dict[str, Any]]]


def turn_events(turns: int, seed: int) -> list[Event]:
    return [to_turn_event(turn, NOW) for turn in generate_turns(turns, seed=seed)]


def embedded(events: list[Event], folder: Path) -> Expected:
    with EmbeddedRuntime(folder) as runtime:
        runtime.append(events)
        derived = {e.event_id: e for _, e in runtime.log.scan() if e.type not in EDGE_TYPES}
        memories = {(tenant, user): _canonical(runtime.store.list_memories(tenant, user, STATUSES))
                    for tenant, user in runtime.known_users()}
    return Expected(derived, memories)


def _canonical(records: list[MemoryRecord]) -> list[dict[str, Any]]:
    return sorted((r.model_dump(mode="json") for r in records), key=lambda r: str(r["memory_id"]))


@dataclass
class Workers:
    """The worker processes of one run; kills by pid, joins with a new process."""

    endpoints: Endpoints
    ns: Namespace
    folder: Path
    extra: tuple[str, ...] = ()
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    kills: int = 0
    joins: int = 0

    def start(self) -> None:
        e, n = self.endpoints, len(self.procs)
        command = worker_command(self.ns, e.bootstrap, "--role", "all", "--weaviate-url", e.weaviate_url,
                                 "--weaviate-grpc-port", str(e.grpc_port), "--no-analytics",
                                 "--governance-interval", "0", "--batch-within", "0.02", *self.extra,
                                 data=self.folder / f"data-{n}")
        with open(self.folder / f"worker-{n}.log", "ab") as log:
            self.procs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))  # noqa: S603

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]

    def kill_one(self, rng: random.Random) -> None:
        victim = rng.choice(self.alive())
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        self.kills += 1

    def chaos(self, rng: random.Random, every: float, until: threading.Thread, target: int) -> None:
        """While `until` runs: alternately kill one worker (never the last) and start one, every ~`every` s.

        Runs in the thread that started the first workers: `--die-with-parent` ends a worker when the
        thread that started it ends. At the end, `target` workers run again.
        """
        until.join(rng.uniform(every * 0.5, every * 1.5))
        while until.is_alive():
            if len(self.alive()) >= target and len(self.alive()) > 1:
                self.kill_one(rng)
            else:
                self.start()
                self.joins += 1
            until.join(rng.uniform(every * 0.5, every * 1.5))
        while len(self.alive()) < target:
            self.start()
            self.joins += 1

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def produce(bootstrap: str, ns: Namespace, events: list[Event], rate: float) -> None:
    producer = TurnProducer(bootstrap, ns)
    chunk, started = max(1, int(rate / 10)), time.monotonic()
    for start in range(0, len(events), chunk):
        for event in events[start:start + chunk]:
            if not producer.record(event):
                raise RuntimeError(f"not produced: {event.event_id}")
        delay = started + (start + chunk) / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    if producer.close(120) != 0:
        raise RuntimeError("turns left undelivered")


def _guard(failed: list[BaseException], fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - re-raised by the main thread
        failed.append(exc)


def distributed_state(e: Endpoints, ns: Namespace, users: list[tuple[str, str]]) -> Expected:
    found: dict[str, Event] = {}
    for topic in DERIVED:
        found.update(unique_events(read_topic(e.bootstrap, ns.topic(topic))))
    store = WeaviateStore.connect(e.weaviate_url, e.grpc_port, default_context().embedder.model_id,
                                  weaviate_prefix(ns), cipher_for(e.bootstrap, ns.prefix))  # the projector seals text
    try:
        memories = {(tenant, user): _canonical(store.list_memories(tenant, user, STATUSES)) for tenant, user in users}
    finally:
        store.close()
    return Expected(found, memories)


def compare(expected: Expected, actual: Expected) -> dict[str, Any]:
    """The differences ({} when equal): events, memory fold, projected memories, counts."""
    exp, act = expected.events, actual.events
    missing, extra = sorted(set(exp) - set(act)), sorted(set(act) - set(exp))
    changed = sorted(k for k in set(exp) & set(act) if to_dict(exp[k]) != to_dict(act[k]))
    diffs: dict[str, Any] = {}
    if missing or extra or changed:
        diffs["events"] = {"missing": len(missing), "extra": len(extra), "changed": len(changed),
                           "missing_types": dict(Counter(exp[k].type for k in missing)),
                           "sample": (missing + extra + changed)[:3]}
    fold_e, fold_a = fold_memories(exp.values()), fold_memories(act.values())
    if fold_e != fold_a:
        keys = set(fold_e) | set(fold_a)
        diffs["fold"] = sum(1 for k in keys if fold_e.get(k) != fold_a.get(k))
    users = [u for u in expected.memories if expected.memories[u] != actual.memories.get(u)]
    if users:
        diffs["projected_users"] = len(users)
        diffs["projected_memories"] = sum(
            len({str(m["memory_id"]) for m in expected.memories[u]} ^ {str(m["memory_id"]) for m in
                                                                    actual.memories.get(u, [])})
            for u in users)
    return diffs


def counts(state: Expected) -> dict[str, int]:
    memories = [m for ms in state.memories.values() for m in ms]
    return {"memory_changes": sum(1 for e in state.events.values() if e.type == "MemoryChanged"),
            "memories": len(memories), "active": sum(1 for m in memories if m["status"] == "active"),
            "reinforcements": sum(int(m["source_count"]) - 1 for m in memories)}


def run_once(e: Endpoints, turns: int, workers: int, seed: int, rate: float, every: float,
             folder: Path, expected: Expected | None = None, events: list[Event] | None = None,
             timeout: float = 900.0, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One chaos run; returns its JSON-able result (`equal`, `diffs`, kills, joins, seconds)."""
    events = events if events is not None else turn_events(turns, seed)
    expected = expected or embedded(events, folder / "embedded")
    ns = Namespace(f"chaos-{uuid.uuid4().hex[:8]}.")
    ensure_topics(e.bootstrap, all_specs(ns))
    crew, rng = Workers(e, ns, folder, extra), random.Random(seed)
    started = time.monotonic()
    try:
        for _ in range(workers):
            crew.start()
        failed: list[BaseException] = []
        producing = threading.Thread(target=_guard, args=(failed, produce, e.bootstrap, ns, events, rate),
                                     daemon=True)
        producing.start()
        crew.chaos(rng, every, producing, workers)
        if failed:
            raise failed[0]
        marks = high_watermarks(e.bootstrap, [ns.topic(t.TURNS), ns.topic(t.COMMANDS)])
        with AppliedWaiter(e.bootstrap, ns) as waiter:
            waiter.wait(marks, timeout=timeout)
        seconds = time.monotonic() - started
        actual = distributed_state(e, ns, sorted(expected.memories))
    finally:
        crew.stop()
        _clean(e, ns)
    diffs = compare(expected, actual)
    return {"kind": "chaos_run", "turns": len(events), "workers": workers, "seed": seed, "rate": rate,
            "kills": crew.kills, "joins": crew.joins, "seconds": round(seconds, 1), "equal": not diffs,
            "diffs": diffs, "expected": counts(expected), "actual": counts(actual)}


def _clean(e: Endpoints, ns: Namespace) -> None:
    try:
        names = [n for n in admin_client(e.bootstrap).list_topics(timeout=30).topics if n.startswith(ns.prefix)]
        delete_topics(e.bootstrap, names)
        store = WeaviateStore.connect(e.weaviate_url, e.grpc_port, default_context().embedder.model_id,
                                      weaviate_prefix(ns))
        store.drop()
        store.close()
    except Exception as exc:  # noqa: BLE001 - cleaning up must not hide the result
        print(f"# cleanup of {ns.prefix} failed: {exc!r}")


def _table(results: list[dict[str, Any]]) -> str:
    lines = ["run  turns  workers kills joins seconds equal  diffs",
             "---  -----  ------- ----- ----- ------- -----  -----"]
    for n, r in enumerate(results, 1):
        lines.append(f"{n:<4} {r['turns']:<6} {r['workers']:<7} {r['kills']:<5} {r['joins']:<5} "
                     f"{r['seconds']:<7} {'yes' if r['equal'] else 'no':<6} {json.dumps(r['diffs']) or '-'}")
    return "\n".join(lines)


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rate", type=float, default=400.0, help="turns produced per second")
    parser.add_argument("--every", type=float, default=6.0, help="seconds between kills / joins (on average)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--bootstrap", default=os.environ.get("ENGRAM_KAFKA_BOOTSTRAP", "127.0.0.1:9092"))
    parser.add_argument("--weaviate-url", default=os.environ.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--weaviate-grpc-port", type=int,
                        default=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupted)  # stop the workers and delete the topics on SIGTERM too
    e = Endpoints(args.bootstrap, args.weaviate_url, args.weaviate_grpc_port)
    results = []
    with tempfile.TemporaryDirectory(prefix="engram-chaos-") as tmp:
        events = turn_events(args.turns, args.seed)
        expected = embedded(events, Path(tmp) / "embedded")
        for run in range(args.runs):
            folder = Path(tmp) / f"run-{run}"
            folder.mkdir()
            result = run_once(e, args.turns, args.workers, args.seed + run, args.rate, args.every, folder,
                              expected=expected, events=events)
            results.append(result)
            print(json.dumps({**result, "run": run + 1}), flush=True)
    print(_table(results))
    return 0 if all(r["equal"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
