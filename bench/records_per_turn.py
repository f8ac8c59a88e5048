"""Kafka records per turn in the real pipeline: what `bench.kafka_ceiling`'s per-record floor multiplies by.

Starts one `engram worker` (role processors) on a fresh namespace, produces
`--warmup` turns, then `--turns` synthetic turns through the SDK (a backlog,
or paced at `--rate`), waits until every stage has done
every record, then reads the end offset of every topic of the namespace
(catalogue topics, the stages' changelogs, the data keys). From the topology
(`engram.streams.topology`) it derives, per turn, the records the processor
agents consume (a topic read by two stages counts twice), the records they
produce (derived events and changelog writes), and the records a projector
consumes (every catalogue topic). Recovery reads of the changelogs are not
counted: they happen on a start or a rebalance, not per turn.

    ENGRAM_KAFKA_BOOTSTRAP=127.0.0.1:19092 python -m bench.records_per_turn --turns 3000
    ENGRAM_KAFKA_BOOTSTRAP=127.0.0.1:19092 python -m bench.records_per_turn --turns 2500 --rate 500

Prints one JSON line per topic, a summary line, then a table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, machine_info, table  # noqa: E402
from bench.distributed_common import (  # noqa: E402
    DEFAULT_BOOTSTRAP, BenchCluster, WorkerCpu, load_average, paced, turn_kwargs,
)
from bench.synthetic import generate_turns  # noqa: E402
from engram.distributed.admin import namespace_topics  # noqa: E402
from engram.distributed.readback import high_watermarks  # noqa: E402
from engram.distributed.topics import ROLES, Namespace  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.inputs import TurnInput  # noqa: E402
from engram.streams.topology import build_topology  # noqa: E402


def topic_records(bootstrap: str, ns: Namespace) -> dict[str, int]:
    """Kafka topic name -> records in it (sum of its partitions' end offsets; the topics start at 0)."""
    totals: Counter[str] = Counter()
    for (topic, _), end in high_watermarks(bootstrap, namespace_topics(bootstrap, ns.prefix)).items():
        totals[topic] += end
    return dict(totals)


def per_turn(records: dict[str, int], ns: Namespace, turns: int) -> dict[str, float]:
    """Records per turn consumed and produced by the processors, and consumed by a projector."""
    stages = [s for s in build_topology() if s.processor.name in ROLES["processors"]]
    consumed = sum(records.get(ns.topic(topic), 0) for stage in stages for topic in stage.inputs)
    derived = {ns.topic(topic) for stage in stages for topic in stage.outputs}
    changelogs = {ns.changelog("processors", stage.processor.name) for stage in stages}
    catalogue = {ns.topic(topic) for topic in t.CATALOGUE}
    return {
        "processors_consume": round(consumed / turns, 3),
        "processors_produce_events": round(sum(records.get(n, 0) for n in derived) / turns, 3),
        "processors_produce_changelog": round(sum(records.get(n, 0) for n in changelogs) / turns, 3),
        "projector_consume": round(sum(records.get(n, 0) for n in catalogue) / turns, 3),
        "edge_produce": round(sum(records.get(ns.topic(x), 0) for x in (t.TURNS, t.COMMANDS)) / turns, 3),
    }


def send(cluster: BenchCluster, turns: list[TurnInput], rate: float, timeout: float) -> None:
    """Produce `turns` (at `rate` turns/s, 0: as fast as the SDK can) and wait until every stage is done."""
    with cluster.producer() as producer:
        if rate > 0:
            paced(len(turns), rate, lambda i: producer.record_turn(**turn_kwargs(turns[i])))
        else:
            for turn in turns:
                producer.record_turn(**turn_kwargs(turn))
        producer.flush(60)
    cluster.wait_caught_up(timeout, poll=0.1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    turns = generate_turns(args.warmup + args.turns, seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="engram-rpt-") as tmp:
        cluster = BenchCluster(args.bootstrap, 1, Path(tmp))
        try:
            cluster.start()
            send(cluster, turns[:args.warmup], 0, args.timeout)  # joined, tables restored, code paths hot
            before = topic_records(args.bootstrap, cluster.ns)
            cpu = WorkerCpu(cluster)
            started = time.monotonic()
            send(cluster, turns[args.warmup:], args.rate, args.timeout)
            seconds = time.monotonic() - started
            after = topic_records(args.bootstrap, cluster.ns)
            records = {name: count - before.get(name, 0) for name, count in after.items()}
            for name, count in sorted(records.items()):
                emit({"kind": "records_per_turn_topic", "topic": name.removeprefix(cluster.ns.prefix),
                      "records": count, "per_turn": round(count / args.turns, 3)})
            return {"kind": "records_per_turn", "turns": args.turns, "rate": args.rate or "backlog", "turns_topic_records": records.get(cluster.ns.topic(t.TURNS), 0),
                    "seconds": round(seconds, 2), **per_turn(records, cluster.ns, args.turns),
                    **cpu.report(args.turns), "machine": machine_info(), "load": load_average()}
        finally:
            cluster.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300, help="turns before the counted ones (not counted)")
    parser.add_argument("--rate", type=float, default=0.0, help="turns/s (0: a backlog, as fast as the SDK can)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    summary = run(args)
    emit(summary)
    keys = ["processors_consume", "processors_produce_events", "processors_produce_changelog",
            "projector_consume", "edge_produce"]
    print(table(["records per turn", "value"], [[k, summary[k]] for k in keys]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
