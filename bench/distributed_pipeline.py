"""The distributed pipeline on real Kafka: sustained turns/s and freshness.

One command: starts N `engram worker` processes on a fresh topic namespace,
warms them up, then

1. **backlog**: produces `--backlog` turns as fast as the SDK can and times
   until every stage has done every record (the stages' own progress, not the
   consumer group's offsets): the peak processing rate;
2. **sustained**: produces at each of `--rates` turns/s for `--step-seconds`,
   sampling how far the stages are behind; a rate is sustained when the
   backlog stays bounded and clears within `--drain-limit` seconds after
   producing stops; reports the largest sustained rate;
3. **freshness**: at `--freshness-rate` turns/s, the time from a turn's
   `record_turn` call to the arrival of its first MemoryChanged on the changes
   topic (correlation id), p50/p95/p99 over the turns that changed memory.

Prints one JSON line per result, then a table. Needs a broker
(`deploy/local/services up kafka`; ENGRAM_KAFKA_BOOTSTRAP, default 127.0.0.1:9092).

    python -m bench.distributed_pipeline
    python -m bench.distributed_pipeline --workers 1 --rates 500,1000 --step-seconds 5 --backlog 2000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from bench.common import emit, machine_info, table  # noqa: E402
from bench.distributed_common import (  # noqa: E402
    DEFAULT_BOOTSTRAP, BenchCluster, Sampler, WorkerCpu, paced, percentile, turn_kwargs,
)
from bench.synthetic import generate_turns  # noqa: E402
from engram.schemas import topics as t  # noqa: E402

TARGET_TURNS_PER_S = 2000
TARGET_P95_MS = 500


class Turns:
    """Synthetic turns handed out in event-time order, slice by slice."""

    def __init__(self, total: int, seed: int) -> None:
        self.items = generate_turns(total, seed=seed)
        self.next = 0

    def take(self, count: int) -> list[Any]:
        chunk = self.items[self.next:self.next + count]
        self.next += len(chunk)
        if len(chunk) < count:
            raise RuntimeError("not enough generated turns; raise --pool")
        return chunk


def backlog(cluster: BenchCluster, turns: Turns, count: int, timeout: float) -> dict[str, Any]:
    batch = turns.take(count)
    producer = cluster.producer()
    cpu = WorkerCpu(cluster)
    start = time.monotonic()
    for turn in batch:
        producer.record_turn(**turn_kwargs(turn))
    producer.flush(60)
    produced = time.monotonic() - start
    cluster.wait_caught_up(timeout, poll=0.05)
    seconds = time.monotonic() - start
    producer.close()
    return {"kind": "distributed_backlog", "turns": count, "produce_seconds": round(produced, 3),
            "seconds": round(seconds, 3), "turns_per_s": round(count / seconds, 1), **cpu.report(count),
            **_counters(producer)}


def sustained(cluster: BenchCluster, turns: Turns, rate: float, seconds: float, drain_limit: float) -> dict[str, Any]:
    batch = turns.take(int(rate * seconds))
    producer = cluster.producer()
    cpu = WorkerCpu(cluster)
    with Sampler(cluster.behind) as sampler:
        took = paced(len(batch), rate, lambda i: producer.record_turn(**turn_kwargs(batch[i])))
        producer.flush(60)
    try:
        drain = cluster.wait_caught_up(max(30.0, seconds * 3), poll=0.05)
    except TimeoutError:
        drain = float("inf")
    producer.close()
    late = [v for at, v in sampler.samples if at >= took / 2]
    lost = sum(producer.counters.get(k, 0) for k in ("failed", "dropped", "invalid"))
    ok = drain <= drain_limit and not lost  # a rate is not sustained by turns that never reached the broker
    return {"kind": "distributed_sustained", "target_rate": rate, "produced": len(batch),
            "achieved_rate": round(len(batch) / took, 1), "max_behind_records": max((v for _, v in sampler.samples),
                                                                                     default=0),
            "behind_second_half": max(late, default=0), "drain_seconds": round(drain, 3), "sustained": ok,
            "sdk_not_sent": lost,
            **cpu.report(len(batch)), **_counters(producer)}


def freshness(cluster: BenchCluster, turns: Turns, rate: float, seconds: float) -> dict[str, Any]:
    batch = turns.take(int(rate * seconds))
    arrivals: dict[str, float] = {}
    stop = threading.Event()
    reader = threading.Thread(target=_follow_changes, args=(cluster, arrivals, stop), daemon=True)
    reader.start()
    time.sleep(1.0)  # the reader is positioned at the end before the first turn
    sent: dict[str, float] = {}
    run = uuid.uuid4().hex[:6]
    producer = cluster.producer()

    def send(i: int) -> None:
        trace = f"fresh-{run}-{i}"
        sent[trace] = time.time()
        producer.record_turn(**turn_kwargs(batch[i], trace))

    paced(len(batch), rate, send)
    producer.flush(60)
    cluster.wait_caught_up(60, poll=0.05)
    time.sleep(1.0)
    stop.set()
    reader.join(timeout=10)
    producer.close()
    lags = [(arrivals[trace] - at) * 1000 for trace, at in sent.items() if trace in arrivals]
    return {"kind": "distributed_freshness", "rate": rate, "turns": len(batch), "turns_with_changes": len(lags),
            "p50_ms": round(percentile(lags, 50), 1), "p95_ms": round(percentile(lags, 95), 1),
            "p99_ms": round(percentile(lags, 99), 1), "max_ms": round(max(lags, default=float("nan")), 1),
            "target_p95_ms": TARGET_P95_MS}


def _follow_changes(cluster: BenchCluster, arrivals: dict[str, float], stop: threading.Event) -> None:
    """Record when each correlation id's first MemoryChanged arrives on the changes topic."""
    topic = cluster.ns.topic(t.MEMORY_CHANGES)
    ends = cluster.probe.high_watermarks([topic])
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 5})
    consumer.assign([TopicPartition(tp, p, end) for (tp, p), end in ends.items()])
    try:
        while not stop.is_set():
            for msg in consumer.consume(500, timeout=0.05):
                value = msg.value()
                if msg.error() is None and value:
                    arrivals.setdefault(orjson.loads(value)["correlation_id"], time.time())
    finally:
        consumer.close()


def _counters(producer: Any) -> dict[str, int]:
    return {f"sdk_{k}": v for k, v in sorted(producer.counters.items())}


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    rates = [float(r) for r in args.rates.split(",") if r]
    need = 300 + args.backlog + int(sum(rates) * args.step_seconds) + int(args.freshness_rate * args.freshness_seconds)
    turns = Turns(need, args.seed)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        cluster = BenchCluster(args.bootstrap, args.workers, Path(tmp),
                               ["--batch-size", str(args.batch_size), "--batch-within", str(args.batch_within)])
        try:
            cluster.start()
            backlog(cluster, turns, 300, timeout=120)  # warm-up: workers joined, tables restored, code paths hot
            results.append(backlog(cluster, turns, args.backlog, timeout=600))
            emit(results[-1])
            for rate in rates:
                results.append(sustained(cluster, turns, rate, args.step_seconds, args.drain_limit))
                emit(results[-1])
                if not results[-1]["sustained"] and not args.all_rates:
                    break
            results.append(freshness(cluster, turns, args.freshness_rate, args.freshness_seconds))
            emit(results[-1])
        finally:
            cluster.close()
    return results


def summary(results: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    steps = [r for r in results if r["kind"] == "distributed_sustained"]
    best = max((r["target_rate"] for r in steps if r["sustained"]), default=0.0)
    fresh = next(r for r in results if r["kind"] == "distributed_freshness")
    peak = next(r for r in results if r["kind"] == "distributed_backlog")
    return {"kind": "distributed_summary", "workers": args.workers, "batch_within_s": args.batch_within,
            "max_sustained_turns_per_s": best,
            "backlog_turns_per_s": peak["turns_per_s"], "target_turns_per_s": TARGET_TURNS_PER_S,
            "ratio_to_target": round(best / TARGET_TURNS_PER_S, 3), "freshness_p95_ms": fresh["p95_ms"],
            "backlog_worker_cpu_s_per_1000_turns": peak["worker_cpu_s_per_1000_turns"],
            "backlog_turns_per_worker_cpu_s": round(1000 / peak["worker_cpu_s_per_1000_turns"], 1)
            if peak["worker_cpu_s_per_1000_turns"] else None,
            "freshness_target_p95_ms": TARGET_P95_MS, "machine": machine_info()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2: one per core)")
    parser.add_argument("--backlog", type=int, default=20_000, help="turns of the backlog run")
    parser.add_argument("--rates", default="1000,1500,2000,2500", help="sustained-rate steps, turns/s")
    parser.add_argument("--step-seconds", type=float, default=15.0)
    parser.add_argument("--drain-limit", type=float, default=2.0,
                        help="a rate is sustained if the stages catch up within this many seconds after it")
    parser.add_argument("--all-rates", action="store_true", help="keep stepping after an unsustained rate")
    parser.add_argument("--freshness-rate", type=float, default=500.0)
    parser.add_argument("--freshness-seconds", type=float, default=20.0)
    parser.add_argument("--batch-size", type=int, default=1000, help="worker --batch-size")
    parser.add_argument("--batch-within", type=float, default=0.05, help="worker --batch-within (seconds)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)

    results = run(args)
    total = summary(results, args)
    emit(total)
    rows = []
    for r in results:
        if r["kind"] == "distributed_backlog":
            rows.append(["backlog", r["turns"], r["turns_per_s"], "", "", f"{r['seconds']} s",
                         r["worker_cpu_s_per_1000_turns"], f"{r['load_before']}-{r['load_after']}"])
        elif r["kind"] == "distributed_sustained":
            rows.append([f"{r['target_rate']:.0f}/s", r["produced"], r["achieved_rate"], r["behind_second_half"],
                         r["drain_seconds"], "yes" if r["sustained"] else "NO", r["worker_cpu_s_per_1000_turns"],
                         f"{r['load_before']}-{r['load_after']}"])
        else:
            rows.append([f"freshness @{r['rate']:.0f}/s", r["turns"], "", "", "",
                         f"p50 {r['p50_ms']} / p95 {r['p95_ms']} / p99 {r['p99_ms']} ms", "", ""])
    print()
    print(table(["run", "turns", "turns/s", "behind (2nd half)", "drain s", "result", "worker CPU s/1k turns",
                 "load"], rows))
    m = total["machine"]
    print(f"\nmachine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu_model']}; {args.workers} worker(s) + broker")
    print(f"max sustained {total['max_sustained_turns_per_s']:.0f} turns/s (target {TARGET_TURNS_PER_S:,}); "
          f"freshness p95 {total['freshness_p95_ms']} ms at {args.freshness_rate:.0f}/s (target < {TARGET_P95_MS} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
