"""End-to-end freshness: a turn's `record_turn` call until recall on Weaviate returns its memory.

One command: starts one `engram worker --role all` (processors and projectors:
Weaviate plus the worker's chDB) on a fresh topic namespace and Weaviate
collection prefix, warms it up, then produces synthetic turns with the SDK
(`TurnProducer.record_turn`) at `--rate` turns/s for `--seconds`. Every
`--probe-every` seconds it also records one *probe* turn for a user of its
own, carrying a unique, extractable fact ("I love <word>." / "我喜欢<词>"), and
`--pollers` threads run the real `RecallService.recall` on the same Weaviate
collections the CLI reads (`weaviate_prefix(ns)`) for each pending probe, at
most every `--poll-interval` seconds (or 5 % of the probe's age, if longer;
a one-query `list_memories` look until the memory is stored, see `Pollers`),
until the recalled memory section
contains the word. The latency is from the `record_turn` call to the return of
the first recall that contains it; a probe not seen within `--timeout` is a
failure. Reports p50/p95/p99/max, probes seen and not seen, the achieved
background rate and the machine; one JSON line, then a table.

Needs Kafka (ENGRAM_KAFKA_BOOTSTRAP, default 127.0.0.1:9092) and Weaviate
(ENGRAM_WEAVIATE_URL / ENGRAM_WEAVIATE_GRPC_PORT, default http://127.0.0.1:8080, 50051).

    python -m bench.recall_freshness
    python -m bench.recall_freshness --rate 50 --seconds 3
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, machine_info, table  # noqa: E402
from bench.distributed_common import (  # noqa: E402
    DEFAULT_BOOTSTRAP, BenchCluster, Sampler, WorkerCpu, cpu_seconds, paced, percentile, tree_cpu_seconds,
    turn_kwargs,
)
from bench.freshness_probes import (  # noqa: E402
    PROBE_TENANT, Pollers, ProbeTurn, Readers, introduce, make_probe, send_probe,
)
from bench.freshness_trace import breakdown, enable, judge_checks  # noqa: E402
from bench.synthetic import generate_turns  # noqa: E402
from engram.distributed.erasure import cipher_for  # noqa: E402
from engram.distributed.freshness import FreshnessCheck  # noqa: E402
from engram.distributed.producer import TurnProducer  # noqa: E402
from engram.distributed.projector import PROJECTOR_ROLE, weaviate_prefix  # noqa: E402
from engram.distributed.readback import Probe  # noqa: E402
from engram.runtime.context import default_context  # noqa: E402
from engram.schemas import topics as t  # noqa: E402

TARGET_P95_MS = 1000
WARMUP_TIMEOUT = 180.0
DEFAULT_WEAVIATE_URL = os.environ.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080")
WALL_OFFSET = time.time() - time.perf_counter()
"""perf_counter -> wall clock (the runtime's trace lines are wall-clock times)."""
DEFAULT_WEAVIATE_GRPC = int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051") or 50051)


def warm_up(cluster: BenchCluster, producer: TurnProducer, pollers: Pollers, turns: list[Any],
            probes: list[ProbeTurn], known: list[ProbeTurn]) -> None:
    """Background turns through every stage, then probes until recall sees them (code paths, tenants, schema hot).

    The users of `known` get a first turn here, so their probes later are a known user's turn."""
    start = time.monotonic()
    for turn in turns:
        producer.record_turn(**turn_kwargs(turn))
    for probe in known:
        introduce(producer, probe)
    producer.flush(60)
    cluster.wait_caught_up(WARMUP_TIMEOUT, poll=0.1)
    note(f"warm-up: {len(turns)} turns processed after {time.monotonic() - start:.1f} s")
    for probe in probes:
        probe.timeout = WARMUP_TIMEOUT
        send_probe(producer, probe)
        pollers.add(probe)
    pollers.drain(WARMUP_TIMEOUT + 5)
    if not all(p.seen for p in probes):
        raise RuntimeError(f"warm-up probes not recalled within {WARMUP_TIMEOUT}s; see the worker log")
    note(f"warm-up: {len(probes)} probes recalled after {time.monotonic() - start:.1f} s "
         f"(slowest {max(p.latency_ms for p in probes):.0f} ms)")


def measure(cluster: BenchCluster, producer: TurnProducer, pollers: Pollers, background: list[Any],
            probes: list[ProbeTurn], args: argparse.Namespace) -> dict[str, Any]:
    """Background turns at `--rate`, probes at 1/`--probe-every` in a thread beside them."""
    sent: list[ProbeTurn] = []

    def probe(i: int) -> None:
        probes[i].timeout = args.timeout
        if send_probe(producer, probes[i]):
            sent.append(probes[i])
            pollers.add(probes[i])

    prober = threading.Thread(target=paced, args=(len(probes), 1 / args.probe_every, probe), daemon=True)
    queued = 0

    def turn(i: int) -> None:
        nonlocal queued
        queued += producer.record_turn(**turn_kwargs(background[i]))

    lag = ProjectorLag(cluster)
    cpu = CpuShare({"bench": os.getpid(), "worker": cluster.procs[0].pid})
    spent = WorkerCpu(cluster)  # traffic and drain: every turn of the window processed and projected
    with Sampler(cluster.behind) as behind, Sampler(lag.uncommitted) as uncommitted:
        prober.start()
        took = paced(len(background), args.rate, turn)
        prober.join()
    shares = cpu.shares()
    stopped = time.monotonic()
    producer.flush(60)
    pollers.drain(args.timeout + 5)
    drain = wait_applied(cluster, lag, stopped, max(60.0, 2 * args.seconds))
    worker_cpu = spent.report(len(background) + len(sent))
    lag.close()
    return {"background_turns": len(background), "background_queued": queued,
            "achieved_rate": round(len(background) / max(took, 1e-9), 1), **stats(sent, pollers, args),
            "late_seen": late_sweep(sent, pollers), "max_behind_records": _peak(behind),
            "max_projector_uncommitted": _peak(uncommitted), "applied_seconds_after_traffic": drain,
            **{f"cpu_{k}_percent": v for k, v in shares.items()}, **worker_cpu,
            **{f"sdk_{k}": v for k, v in sorted(producer.counters.items())}}


def wait_applied(cluster: BenchCluster, lag: ProjectorLag, since: float, limit: float) -> float | None:
    """Seconds from `since` until the processors are done and the projectors committed everything (None: not in time)."""
    while time.monotonic() - since < limit:
        if cluster.behind() == 0 and lag.uncommitted() == 0:
            return round(time.monotonic() - since, 2)
        time.sleep(0.2)
    return None


class CpuShare:
    """CPU time of some processes over a window, as a percentage of one core (Linux /proc). A process of
    `trees` counts with its descendants (the worker's projector child); the others alone (the bench, whose
    children are the workers)."""

    def __init__(self, pids: dict[str, int], trees: frozenset[str] = frozenset({"worker"})) -> None:
        self.pids = pids
        self.trees = trees
        self.start = time.monotonic()
        self.before = {name: self._cpu(name, pid) for name, pid in pids.items()}

    def _cpu(self, name: str, pid: int) -> float | None:
        return tree_cpu_seconds(pid) if name in self.trees else cpu_seconds(pid)

    def shares(self) -> dict[str, float | None]:
        wall = time.monotonic() - self.start
        out: dict[str, float | None] = {}
        for name, pid in self.pids.items():
            now, before = self._cpu(name, pid), self.before[name]
            out[name] = round(100 * (now - before) / wall, 1) if now is not None and before is not None else None
        return out


class ProjectorLag:
    """Records of the namespace the projectors have not committed yet (they commit when idle or every second)."""

    def __init__(self, cluster: BenchCluster) -> None:
        self.probe = Probe(cluster.bootstrap)
        self.group = cluster.ns.app_id(PROJECTOR_ROLE)
        self.topics = [cluster.ns.topic(x) for x in t.CATALOGUE]

    def uncommitted(self) -> int:
        return self.probe.lag(self.group, self.topics)

    def close(self) -> None:
        self.probe.close()


def stats(sent: list[ProbeTurn], pollers: Pollers, args: argparse.Namespace) -> dict[str, Any]:
    """Percentiles over every probe, a probe not seen in time ranking last (null when one lands there)."""
    seen = [p.latency_ms for p in sent if p.seen is not None]
    stored = [(p.stored - p.sent) * 1000 for p in sent if p.stored is not None]
    missed = len(sent) - len(seen)
    every = sorted(seen) + [float("inf")] * missed
    p95 = percentile(every, 95)
    return {
        "probes": len(sent), "probes_seen": len(seen), "probes_not_seen": missed, "timeout_s": args.timeout,
        **{f"p{q}_ms": _ms(percentile(every, q)) for q in (50, 95, 99)}, "max_ms": _ms(max(every, default=0.0)),
        **{f"seen_p{q}_ms": _ms(percentile(seen, q)) for q in (50, 95, 99)},
        "in_weaviate_p50_ms": _ms(percentile(stored, 50)), "in_weaviate_p95_ms": _ms(percentile(stored, 95)),
        "meets_target": bool(seen) and missed == 0 and p95 < TARGET_P95_MS,
        "polls_per_probe": round(sum(p.polls for p in sent) / max(1, len(sent)), 1), "recalls": pollers.recalls,
        "recall_ms_p50": _ms(percentile(pollers.recall_ms, 50)), "recall_ms_p95": _ms(percentile(pollers.recall_ms, 95)),
        "poll_errors": pollers.errors, "recall_deadline_exceeded": pollers.deadline_exceeded,
    }


def _ms(value: float) -> float | None:
    """Rounded milliseconds; None for a probe never seen (JSON null) or no value at all."""
    return round(value, 1) if value == value and value != float("inf") else None


def late_sweep(sent: list[ProbeTurn], pollers: Pollers) -> int:
    """Probes not seen in time that one more recall, after the drain, does return (late, not lost)."""
    late = 0
    for probe in (p for p in sent if p.seen is None):
        try:
            late += pollers.recall_once(probe)
        except Exception:  # noqa: BLE001 - counted as not recalled
            continue
    return late


def _peak(sampler: Sampler) -> int:
    return max((v for _, v in sampler.samples), default=0)


def run(args: argparse.Namespace) -> dict[str, Any]:
    ctx = default_context()
    rng = random.Random(args.seed)
    run_id = uuid.uuid4().hex[:6]
    turns = generate_turns(args.warmup + int(args.rate * args.seconds), seed=args.seed)
    probes = [make_probe(rng, run_id, i) for i in range(args.warmup_probes + int(args.seconds / args.probe_every))]
    warm, main_probes = probes[:args.warmup_probes], probes[args.warmup_probes:]
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        roles = ["processors", "projectors"] if args.split else ["all"]
        worker_args = ["--batch-within", str(args.batch_within), "--weaviate-url", args.weaviate_url,
                       "--weaviate-grpc-port", str(args.weaviate_grpc_port)]
        trace_file = Path(tmp) / "trace.jsonl" if args.trace else None
        if trace_file is not None:  # before the worker starts: it inherits the environment
            enable(str(trace_file), f"{PROBE_TENANT}/probe-{run_id}-")
        cluster = BenchCluster(args.bootstrap, 1, Path(tmp), worker_args, roles=roles)
        readers: Readers | None = None
        pollers: Pollers | None = None
        checker: FreshnessCheck | None = None
        try:
            readers = Readers(args, ctx, weaviate_prefix(cluster.ns),  # collections exist before the projector starts
                              cipher_for(cluster.bootstrap, cluster.ns.prefix))
            cluster.start()
            if args.freshness:
                checker = FreshnessCheck(cluster.bootstrap, cluster.ns)
                if not checker.ready(WARMUP_TIMEOUT):
                    raise RuntimeError("the freshness check did not read the stages' progress")
            pollers = Pollers(readers.services, args.poll_interval, gate=not args.no_gate,
                              check=checker.check if checker is not None else None)
            producer = cluster.producer()
            try:
                warm_up(cluster, producer, pollers, turns[:args.warmup], warm,
                        main_probes if args.known_users else [])
                measured = measure(cluster, producer, pollers, turns[args.warmup:], main_probes, args)
            finally:
                producer.close()
            _print_log(Path(tmp) / "worker-0.log", lines=3, containing="projector: {")
            if trace_file is not None:
                kept = Path(tempfile.gettempdir()) / f"engram-trace-{run_id}.jsonl"
                kept.write_bytes(trace_file.read_bytes())
                note(f"trace lines kept in {kept}")
                measured["hops"] = breakdown(str(trace_file), [
                    (f"{PROBE_TENANT}/{p.user}", p.sent + WALL_OFFSET, _wall(p.stored), _wall(p.seen))
                    for p in main_probes if p.sent])
                if checker is not None:
                    measured["freshness"] = judge_checks(str(trace_file), pollers.checks,
                                                         [(p.user, p.sent + WALL_OFFSET) for p in main_probes if p.sent])
            return {"users": "known" if args.known_users else "new", "kind": "recall_freshness",
                    "target_rate": args.rate, "seconds": args.seconds, **measured,
                    "target_p95_ms": TARGET_P95_MS, "pollers": args.pollers, "poll_interval_s": args.poll_interval,
                    "gate": not args.no_gate, "probe_every_s": args.probe_every,
                    "workers": "processors + projectors" if args.split else "all", "machine": machine_info()}
        except Exception:
            _print_log(Path(tmp) / "worker-0.log")
            raise
        finally:
            if pollers is not None:
                pollers.close()
            if checker is not None:
                checker.close()
            cluster.close()  # stops the worker (its pid), deletes the namespace's topics
            if readers is not None:
                readers.close(drop=True)  # the namespace's Weaviate collections


def _wall(perf: float | None) -> float | None:
    return None if perf is None else perf + WALL_OFFSET


def _cell(value: float | None, timeout: float) -> float | str:
    return value if value is not None else f"> {timeout * 1000:.0f}"


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _print_log(path: Path, lines: int = 40, containing: str = "") -> None:
    if path.exists():
        tail = [line for line in path.read_text(errors="replace").splitlines() if containing in line][-lines:]
        print("--- worker log (tail)\n" + "\n".join(tail), file=sys.stderr)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--weaviate-url", default=DEFAULT_WEAVIATE_URL)
    parser.add_argument("--weaviate-grpc-port", type=int, default=DEFAULT_WEAVIATE_GRPC)
    parser.add_argument("--rate", type=float, default=500.0, help="background turns/s")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the background traffic runs")
    parser.add_argument("--probe-every", type=float, default=0.2, help="seconds between probe turns")
    parser.add_argument("--pollers", type=int, default=4, help="recall threads polling the pending probes")
    parser.add_argument("--poll-interval", type=float, default=0.02, help="seconds between two recalls of a probe")
    parser.add_argument("--no-gate", action="store_true",
                        help="poll with the full recall from the first poll (no one-query look at the memories first)")
    parser.add_argument("--timeout", type=float, default=10.0, help="a probe not recalled by then is a failure")
    parser.add_argument("--warmup", type=int, default=500, help="background turns of the warm-up")
    parser.add_argument("--warmup-probes", type=int, default=5)
    parser.add_argument("--batch-within", type=float, default=0.02, help="worker --batch-within")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--known-users", action="store_true",
                        help="each probe user says a first, fact-free turn in the warm-up (a known user's probe)")
    parser.add_argument("--trace", action="store_true",
                        help="per-hop timestamps of the probes (engram.distributed.trace) and a p50/p95 table per hop")
    parser.add_argument("--freshness", action="store_true",
                        help="with --trace: check the recall's freshness before every poll and judge what it said "
                             "against the probe's acknowledgement (engram.distributed.freshness)")
    parser.add_argument("--split", action="store_true",
                        help="two worker processes (--role processors, --role projectors) instead of one --role all")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    r = run(args)
    emit(r)
    print()
    print(table(["background", "users", "achieved turns/s", "probes", "not seen (recalled later)", "p50 ms", "p95 ms",
                 "p99 ms",
                 "max ms", "in Weaviate p50 ms", "recall p50 ms"],
                [[f"{r['target_rate']:.0f}/s x {r['seconds']:.0f} s", r["users"], r["achieved_rate"], r["probes"],
                  f"{r['probes_not_seen']} ({r['late_seen']})",
                  *[_cell(r[k], r["timeout_s"]) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")],
                  _cell(r["in_weaviate_p50_ms"], r["timeout_s"]), _cell(r["recall_ms_p50"], r["timeout_s"])]]))
    if r.get("freshness"):
        print(f"\nfreshness checks: {r['freshness']}")
    if r.get("hops"):
        print()
        print(table(["hop", "what", "probes", "p50 ms", "p95 ms", "since record_turn p50 ms", "p95 ms"],
                    [[h["hop"], h["what"], h["n"], h["p50_ms"], h["p95_ms"], h["since_record_p50_ms"],
                      h["since_record_p95_ms"]] for h in r["hops"]]))
    m = r["machine"]
    workers = "2 workers (--role processors, --role projectors)" if r["workers"] != "all" else "1 worker (--role all)"
    print(f"\nworker CPU {r['worker_cpu_s_per_1000_turns']} s per 1,000 turns (processed and projected; "
          f"{r['worker_main_cpu_seconds']} s in the worker, {r['worker_children_cpu_seconds']} s in its projector "
          f"process); "
          f"load average {r['load_before']} before, {r['load_after']} after")
    print(f"machine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu_model']}; {workers} + "
          f"Kafka + Weaviate on the same machine")
    verdict = "meets" if r["meets_target"] else "misses"
    print(f"end-to-end freshness p95 {_cell(r['p95_ms'], r['timeout_s'])} ms at {r['achieved_rate']:.0f} turns/s: {verdict} the target "
          f"(p95 < {TARGET_P95_MS} ms, every probe seen)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
