"""Chat-path overhead: the latency of one `record_turn` call at a fixed rate, on real Kafka.

Calls `TurnProducer.record_turn` at `--rate` calls/s (absolute schedule) for
`--seconds`, timing each call with `perf_counter_ns`; in the same run, as a
peer, a bare confluent-kafka `produce()` of pre-encoded bytes at the same
rate (what any Kafka client pays). The SDK call validates the turn, stamps and
encodes the event, and queues it (plus a summary check when a session's
trigger may fire); it never waits for the broker. Reports p50/p99/p99.9/max
and the SDK's counters (sent, failed, dropped). One JSON line per result,
then a table.

    python -m bench.distributed_producer                 # 1,000 calls/s for 20 s, 3 repetitions
    python -m bench.distributed_producer --seconds 5 --repeat 1
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Producer  # noqa: E402

from bench.common import emit, machine_info, median, table  # noqa: E402
from bench.distributed_common import DEFAULT_BOOTSTRAP, paced, percentile, turn_kwargs  # noqa: E402
from bench.synthetic import generate_turns  # noqa: E402
from engram.distributed.admin import delete_namespace, ensure_topics  # noqa: E402
from engram.distributed.producer import TurnProducer  # noqa: E402
from engram.distributed.topics import Namespace, catalogue_specs  # noqa: E402
from engram.schemas.codec import encode  # noqa: E402
from engram.schemas.inputs import to_turn_event  # noqa: E402
from engram.schemas import topics as t  # noqa: E402

TARGET_P99_MS = 1.0


def _stats(name: str, nanos: list[int], seconds: float, extra: dict[str, Any]) -> dict[str, Any]:
    ms = [n / 1e6 for n in nanos]
    return {"kind": "producer_call", "client": name, "calls": len(ms), "achieved_rate": round(len(ms) / seconds, 1),
            "p50_ms": round(percentile(ms, 50), 4), "p99_ms": round(percentile(ms, 99), 4),
            "p999_ms": round(percentile(ms, 99.9), 4), "max_ms": round(max(ms), 3), **extra}


def sdk_run(bootstrap: str, ns: Namespace, turns: list[Any], rate: float) -> dict[str, Any]:
    producer = TurnProducer(bootstrap, ns)
    nanos: list[int] = []

    def call(i: int) -> None:
        started = time.perf_counter_ns()
        producer.record_turn(**turn_kwargs(turns[i]))
        nanos.append(time.perf_counter_ns() - started)

    seconds = paced(len(turns), rate, call)
    left = producer.close(60)
    counters = {k: producer.counters.get(k, 0) for k in ("queued", "sent", "failed", "dropped", "invalid")}
    return _stats("engram TurnProducer.record_turn", nanos, seconds, {"undelivered_at_close": left, **counters})


def raw_run(bootstrap: str, ns: Namespace, turns: list[Any], rate: float) -> dict[str, Any]:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "partitioner": "murmur2_random"})
    events = [to_turn_event(turn, turn.ts) for turn in turns]
    payloads = [(e.partition_key.encode(), encode(e)) for e in events]
    topic = ns.topic(t.TURNS)
    nanos: list[int] = []

    def call(i: int) -> None:
        key, value = payloads[i]
        started = time.perf_counter_ns()
        producer.produce(topic, value, key)
        producer.poll(0)
        nanos.append(time.perf_counter_ns() - started)

    seconds = paced(len(payloads), rate, call)
    left = producer.flush(60)
    return _stats("confluent-kafka produce() of pre-encoded bytes (peer)", nanos, seconds,
                  {"undelivered_at_close": left})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--rate", type=float, default=1000.0, help="calls per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are reported")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)

    count = int(args.rate * args.seconds)
    turns = generate_turns(count * args.repeat, seed=args.seed)
    ns = Namespace(f"bench-{uuid.uuid4().hex[:8]}.")
    ensure_topics(args.bootstrap, catalogue_specs(ns))
    results: list[dict[str, Any]] = []
    try:
        for n in range(args.repeat):
            chunk = turns[n * count:(n + 1) * count]
            for run in (sdk_run, raw_run):
                results.append({**run(args.bootstrap, ns, chunk, args.rate), "repetition": n + 1})
                emit(results[-1])
    finally:
        delete_namespace(args.bootstrap, ns.prefix)
    sdk = [r for r in results if r["client"].startswith("engram")]
    peer = [r for r in results if not r["client"].startswith("engram")]
    summary = {"kind": "producer_summary", "rate": args.rate, "calls_per_run": count, "repetitions": args.repeat,
               "sdk_median_p50_ms": median([r["p50_ms"] for r in sdk]),
               "sdk_median_p99_ms": median([r["p99_ms"] for r in sdk]),
               "peer_median_p99_ms": median([r["p99_ms"] for r in peer]),
               "sdk_failed": sum(r["failed"] for r in sdk), "sdk_dropped": sum(r["dropped"] for r in sdk),
               "target_p99_ms": TARGET_P99_MS, "machine": machine_info()}
    emit(summary)
    rows = [[r["repetition"], r["client"], r["calls"], r["achieved_rate"], r["p50_ms"], r["p99_ms"], r["p999_ms"],
             r["max_ms"]] for r in results]
    print()
    print(table(["run", "client", "calls", "calls/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms"], rows))
    m = summary["machine"]
    print(f"\nmachine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu_model']}")
    print(f"record_turn p99 {summary['sdk_median_p99_ms']} ms (median of {args.repeat}; target <= {TARGET_P99_MS} ms); "
          f"peer produce() p99 {summary['peer_median_p99_ms']} ms; failed {summary['sdk_failed']}, "
          f"dropped {summary['sdk_dropped']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
