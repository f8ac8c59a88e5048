"""The Kafka + faust floor: what moving records the way Engram does costs, with no Engram processing.

Every distributed figure (turns/s, CPU per turn) includes the cost of the
transport itself: librdkafka producing with Engram's settings, the projector's
confluent-kafka consume loop, and faust-streaming's aiokafka consumer feeding
an agent in `take_events` batches. This measures those alone, on real sealed
TurnRecorded records (their encoded size and JSON), so the report can say how
many turns/s the machine could carry even if the processors and the projector
cost nothing. Per repeat, on a fresh topic prefix (Engram's partition count):

1. **produce**: N records with the SDK's producer settings (idempotent,
   acks=all, linger 5 ms, murmur2, a poll thread serving delivery callbacks);
2. **consume** / **consume_json**: the projector's loop (`consume(batch,
   timeout)`, a fresh group, no auto commit) reading the N records, without
   and with `orjson.loads` of each value;
3. **aiokafka**: a bare aiokafka consumer (`getmany`), faust's Kafka client
   without faust: what of faust's cost is the client's;
4. **faust**: a subprocess running a faust app built as the workers' is
   (`app_with_fetch_wait`, the worker's app config, raw schema) whose one agent
   only counts the records of `take_events(batch, within)` batches;
5. **faust_produce**: the same agent producing one record per record to an
   output topic through Engram's `Sink` (idempotent confluent-kafka), waiting
   for the acknowledgements of each batch (at most `MAX_LANDING` batches in
   flight, as the workers do);
6. **faust_two_agents**: two counting agents on the topic (Extract and
   Summarize both read the turns): is the cost per record fetched or per
   record delivered to an agent?

CPU is the measured process's own (utime + stime, every thread, librdkafka's
included) from the assignment of its partitions to the last record, so load
changes it much less than records/s; the broker's CPU over the same window is
reported too when it runs here (it is shared: others' traffic counts in it).
Needs a broker (ENGRAM_KAFKA_BOOTSTRAP).

    python -m bench.kafka_ceiling
    python -m bench.kafka_ceiling --records 50000 --repeat 3
    python -m bench.kafka_ceiling --records 200 --repeat 1 --modes produce,faust   # smoke size

Prints one JSON line per run and mode, a summary line per mode (medians), then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
from confluent_kafka import Consumer, Producer  # noqa: E402

from bench.common import emit, machine_info, median, table  # noqa: E402
from bench.distributed_common import DEFAULT_BOOTSTRAP, cpu_seconds, load_average  # noqa: E402
from bench.synthetic import generate_turns  # noqa: E402
from engram.core.crypto import FieldCipher  # noqa: E402
from engram.core.keystore import MemoryKeyStore  # noqa: E402
from engram.distributed.admin import admin_client, delete_namespace, ensure_topics  # noqa: E402
from engram.distributed.sink import serve_callbacks  # noqa: E402
from engram.distributed.topics import TopicSpec  # noqa: E402
from engram.distributed.tracking import TYPE_HEADER  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.codec import encode  # noqa: E402
from engram.schemas.inputs import to_turn_event  # noqa: E402

MODES = ("produce", "consume", "consume_json", "aiokafka", "faust", "faust_produce", "faust_two_agents")
Record = tuple[bytes, bytes]


def sample_records(count: int, seed: int) -> list[Record]:
    """(key, value) of `count` synthetic turns encoded as the SDK writes them (user text sealed)."""
    cipher = FieldCipher(MemoryKeyStore())
    now = datetime.now(timezone.utc)
    events = [to_turn_event(turn, now) for turn in generate_turns(count, seed=seed)]
    return [(e.partition_key.encode(), encode(e, cipher)) for e in events]


def producer_config(bootstrap: str) -> dict[str, Any]:
    """`TurnProducer`'s confluent-kafka settings (its defaults)."""
    return {"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5.0,
            "queue.buffering.max.messages": 100_000, "queue.buffering.max.kbytes": 256 * 1024,
            "partitioner": "murmur2_random", "message.timeout.ms": 120_000}


class Window:
    """CPU and wall clock from a start to `close` (the last record), and the broker's CPU over it.

    Every consumer starts it when its partitions are assigned: the clients fetch (and aiokafka parses)
    ahead of what the loop sees, so the first record is already too late to start counting.
    """

    def __init__(self, broker_pid: int | None) -> None:
        self.broker_pid = broker_pid
        self.cpu, self.wall, self.broker = time.process_time(), time.perf_counter(), self._broker()

    def _broker(self) -> float | None:
        return cpu_seconds(self.broker_pid) if self.broker_pid else None

    def close(self, records: int) -> dict[str, Any]:
        cpu, wall = time.process_time() - self.cpu, time.perf_counter() - self.wall
        broker_now = self._broker()
        result: dict[str, Any] = {
            "records": records, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "records_per_s": round(records / wall) if wall > 0 else None,
            "cpu_us_per_record": round(1e6 * cpu / records, 2) if records else None}
        if broker_now is not None and self.broker is not None and records:
            result["broker_cpu_us_per_record"] = round(1e6 * (broker_now - self.broker) / records, 2)
        return result


def broker_pid(bootstrap: str) -> int | None:
    """The pid of the process listening on the bootstrap port here (a local broker), via `ss`; else None."""
    port = bootstrap.split(",")[0].rsplit(":", 1)[-1]
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True,  # noqa: S607
                             timeout=5, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"pid=(\d+)", out)
    return int(found.group(1)) if found else None


# -- 1. produce ---------------------------------------------------------------------------------
def produce(bootstrap: str, topic: str, records: list[Record], total: int, broker: int | None) -> dict[str, Any]:
    """Produce `total` records (cycling `records`) as the SDK does; time until every one is acknowledged."""
    producer = Producer(producer_config(bootstrap))
    stop, acked, failed = threading.Event(), [0], [0]

    def delivered(err: Any, _msg: Any) -> None:
        if err is None:
            acked[0] += 1
        else:
            failed[0] += 1

    poller = threading.Thread(target=serve_callbacks, args=(producer, stop, 0.1, "bench"), daemon=True)
    poller.start()
    headers = [(TYPE_HEADER, b"TurnRecorded")]
    clock = Window(broker)
    for i in range(total):
        key, value = records[i % len(records)]
        while True:
            try:
                producer.produce(topic, key=key, value=value, headers=headers, on_delivery=delivered)
                break
            except BufferError:
                time.sleep(0.001)
    left = producer.flush(120)
    result = clock.close(total)
    stop.set()
    poller.join(timeout=1)
    if left or failed[0] or acked[0] != total:
        raise RuntimeError(f"produce: {acked[0]} acknowledged, {failed[0]} failed, {left} left of {total}")
    return result


# -- 2. the projector's consume loop ------------------------------------------------------------
def consume(bootstrap: str, topic: str, total: int, batch: int, poll: float, parse: bool,
            timeout: float, broker: int | None) -> dict[str, Any]:
    """Read `total` records with the projector's loop (a fresh group, from the beginning)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-plain-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "topic.metadata.refresh.interval.ms": 5000, "session.timeout.ms": 10_000,
                         "heartbeat.interval.ms": 1000})
    first: list[Window] = []
    consumer.subscribe([topic], on_assign=lambda *_: first.append(Window(broker)) if not first else None)
    seen, parsed = 0, 0
    deadline = time.monotonic() + timeout
    try:
        while seen < total:
            if time.monotonic() > deadline:
                raise TimeoutError(f"consume: {seen} of {total} records after {timeout}s")
            messages = consumer.consume(batch, timeout=poll)
            for msg in messages:
                if msg.error() is not None:
                    continue
                seen += 1
                if parse:
                    parsed += len(orjson.loads(msg.value() or b"{}"))
        return first[0].close(seen)
    finally:
        consumer.close()


def consume_aiokafka(args: argparse.Namespace, topic: str, timeout: float) -> dict[str, Any]:
    """Read `total` records with a bare aiokafka consumer (faust's client, fetch wait as the workers')."""
    return asyncio.run(_aiokafka(args, topic, timeout))


async def _aiokafka(args: argparse.Namespace, topic: str, timeout: float) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

    from engram.distributed.faust_consumer import DEFAULT_FETCH_MAX_WAIT

    first: list[Window] = []

    class Assigned(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            return None

        async def on_partitions_assigned(self, assigned: Any) -> None:
            if assigned and not first:
                first.append(Window(args.broker_pid))

    consumer = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, group_id=f"{topic}-aio-{uuid.uuid4().hex[:6]}",
                                auto_offset_reset="earliest", enable_auto_commit=False,
                                fetch_max_wait_ms=int(DEFAULT_FETCH_MAX_WAIT * 1000))
    consumer.subscribe([topic], listener=Assigned())
    await consumer.start()
    seen, deadline = 0, time.monotonic() + timeout
    try:
        while seen < args.records:
            if time.monotonic() > deadline:
                raise TimeoutError(f"aiokafka: {seen} of {args.records} records after {timeout}s")
            batches = await consumer.getmany(timeout_ms=int(args.within * 1000), max_records=args.batch)
            seen += sum(len(records) for records in batches.values())
        return first[0].close(seen)
    finally:
        await consumer.stop()


# -- 3./4. faust, in a subprocess ---------------------------------------------------------------
def run_faust(args: argparse.Namespace, topic: str, output: str | None, timeout: float,
              folder: Path, agents: int = 1) -> dict[str, Any]:
    """Start the faust child, wait for its result file; its CPU comes from its own /proc stat."""
    result = folder / f"faust-{uuid.uuid4().hex[:6]}.json"
    command = [sys.executable, "-m", "bench.kafka_ceiling", "--child", "--bootstrap", args.bootstrap,
               "--topic", topic, "--records", str(args.records), "--batch", str(args.batch),
               "--within", str(args.within), "--agents", str(agents), "--result", str(result), *(["--output", output] if output else []),
               *(["--broker-pid", str(args.broker_pid)] if args.broker_pid else [])]
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))}
    with open(folder / "faust-child.log", "ab") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)  # noqa: S603
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"faust child did not finish {args.records} records in {timeout}s (see {log.name})")
    if not result.exists():
        raise RuntimeError(f"faust child exited {proc.returncode} without a result (see {folder / 'faust-child.log'})")
    return dict(json.loads(result.read_text()))


def faust_child(args: argparse.Namespace) -> int:
    """The subprocess: `--agents` faust agents on the topic, each counting (the first optionally re-producing)
    records, until every one saw `--records`."""
    import faust

    from engram.distributed.app import MAX_LANDING, WorkerSettings, _app_config, _raw_schema
    from engram.distributed.faust_consumer import DEFAULT_FETCH_MAX_WAIT, app_with_fetch_wait
    from engram.distributed.sink import Send, Sink

    settings = WorkerSettings(bootstrap=args.bootstrap, datadir=Path(tempfile.mkdtemp(prefix="ceiling-faust-")))
    app = app_with_fetch_wait(f"{args.topic}-faust-{uuid.uuid4().hex[:6]}", DEFAULT_FETCH_MAX_WAIT,
                              **_app_config(settings))
    sink = Sink(args.bootstrap) if args.output else None
    state: dict[str, Any] = {"seen": [0] * args.agents, "first": None, "landing": []}

    async def assigned(*_: Any, **__: Any) -> None:
        if state["first"] is None and app.consumer.assignment():
            state["first"] = (cpu_seconds(os.getpid()) or 0.0, Window(args.broker_pid))

    async def land(sends: list[Any]) -> None:
        assert sink is not None
        await sink.send_all(sends)

    async def agent(stream: Any, index: int) -> None:
        async for events in stream.take_events(args.batch, args.within):
            state["seen"][index] += len(events)
            if sink is not None and index == 0:
                sends = [Send(args.output, e.message.key, e.message.value) for e in events]
                state["landing"] = [f for f in state["landing"] if not f.done()]
                state["landing"].append(asyncio.ensure_future(land(sends)))
                if len(state["landing"]) > MAX_LANDING:
                    await state["landing"][0]
            if min(state["seen"]) >= args.records:
                await asyncio.gather(*state["landing"])
                _finish(args, state)

    topic = app.topic(args.topic, schema=_raw_schema())
    for index in range(args.agents):
        app.agent(topic, name=f"ceiling-count-{index}")(functools.partial(agent, index=index))
    app.on_partitions_assigned.connect(assigned)
    faust.Worker(app, loglevel="warning", redirect_stdouts=False, quiet=True).execute_from_commandline()
    return 1  # the agent ends the process once it has counted every record


def _finish(args: argparse.Namespace, state: dict[str, Any]) -> None:
    proc_cpu, clock = state["first"]
    result = clock.close(state["seen"][0])
    if len(state["seen"]) > 1:
        result["deliveries"] = sum(state["seen"])
        result["cpu_us_per_delivery"] = round(1e6 * result["cpu_s"] / result["deliveries"], 2)
    spent = (cpu_seconds(os.getpid()) or 0.0) - proc_cpu
    result["proc_stat_cpu_s"] = round(spent, 2)
    Path(args.result).write_text(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)  # faust's shutdown takes seconds and measures nothing


# -- the runs -----------------------------------------------------------------------------------
def one_run(args: argparse.Namespace, records: list[Record], index: int, folder: Path) -> list[dict[str, Any]]:
    """Every chosen mode once, on a fresh prefix (the input topic is produced first in any case)."""
    prefix = f"{args.run_id}{index}."
    source, sink_topic = f"{prefix}in", f"{prefix}out"
    ensure_topics(args.bootstrap, [TopicSpec(name, args.partitions) for name in (source, sink_topic)])
    timeout = 120 + args.records / 1000
    steps: dict[str, Callable[[], dict[str, Any]]] = {
        "produce": lambda: produce(args.bootstrap, source, records, args.records, args.broker_pid),
        "consume": lambda: consume(args.bootstrap, source, args.records, args.poll_batch, args.poll_timeout,
                                   False, timeout, args.broker_pid),
        "consume_json": lambda: consume(args.bootstrap, source, args.records, args.poll_batch, args.poll_timeout,
                                        True, timeout, args.broker_pid),
        "aiokafka": lambda: consume_aiokafka(args, source, timeout),
        "faust": lambda: run_faust(args, source, None, timeout, folder),
        "faust_produce": lambda: run_faust(args, source, sink_topic, timeout, folder),
        "faust_two_agents": lambda: run_faust(args, source, None, timeout, folder, agents=2),
    }
    results = []
    try:
        for mode in ("produce", *[m for m in args.modes if m != "produce"]):
            load = load_average()
            result = {"kind": "kafka_ceiling", "run": index, "mode": mode, **steps[mode](), "load_before": load,
                      "load_after": load_average()}
            if mode in args.modes:
                emit(result)
                results.append(result)
    finally:
        if not args.keep_topics:
            delete_namespace(args.bootstrap, prefix)
    return results


def delete_groups(bootstrap: str, prefix: str, within: float) -> int:
    """Delete the consumer groups named `prefix...`; returns how many are left after `within` s (best effort).

    A faust child ends without leaving its group, which stays non-empty until its session times out.
    """
    admin, deadline, left = admin_client(bootstrap), time.monotonic() + within, -1
    while left and time.monotonic() < deadline:
        try:
            listed = admin.list_consumer_groups(request_timeout=10).result()
            groups = [g.group_id for g in listed.valid if g.group_id.startswith(prefix)]
            futures = admin.delete_consumer_groups(groups, request_timeout=10) if groups else {}
        except Exception:  # noqa: BLE001 - leftover groups hold only offsets of deleted topics
            return -1
        left = sum(1 for future in futures.values() if future.exception() is not None)
        if left:
            time.sleep(1.0)
    return max(left, 0)


def summarize(results: list[dict[str, Any]], modes: list[str]) -> list[dict[str, Any]]:
    """One line per mode: medians over the runs."""
    lines = []
    for mode in modes:
        runs = [r for r in results if r["mode"] == mode]
        lines.append({"kind": "kafka_ceiling_summary", "mode": mode, "runs": len(runs),
                      "records": runs[0]["records"] if runs else 0,
                      "median_records_per_s": median([r["records_per_s"] for r in runs]),
                      "median_cpu_us_per_record": median([r["cpu_us_per_record"] for r in runs]),
                      "cpu_us_per_record_all": [r["cpu_us_per_record"] for r in runs],
                      "median_broker_cpu_us_per_record": _median_of(runs, "broker_cpu_us_per_record"),
                      "load": load_average()})
    return lines


def _median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if key in r]
    return median(values) if values else None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP)
    parser.add_argument("--records", type=int, default=50_000, help="records per mode and run (N)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    parser.add_argument("--partitions", type=int, default=t.TURNS.partitions, help="as Engram's topics")
    parser.add_argument("--samples", type=int, default=2000, help="distinct synthetic turns cycled as values")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1000, help="take_events batch (the workers' --batch-size)")
    parser.add_argument("--within", type=float, default=0.05, help="take_events wait (the workers' --batch-within)")
    parser.add_argument("--poll-batch", type=int, default=2000, help="consume() batch (the projector's)")
    parser.add_argument("--poll-timeout", type=float, default=0.05, help="consume() timeout (the projector's)")
    parser.add_argument("--broker-pid", type=int, default=None,
                        help="the broker's pid, to report its CPU per record too (default: the local listener "
                             "of the bootstrap port, if any; 0: none)")
    parser.add_argument("--keep-topics", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--agents", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = sorted(set(args.modes) - set(MODES))
    if unknown:
        parser.error(f"unknown mode(s): {', '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return faust_child(args)
    args.run_id = f"ceiling-{uuid.uuid4().hex[:8]}-"
    if args.broker_pid is None:
        args.broker_pid = broker_pid(args.bootstrap)
    records = sample_records(args.samples, args.seed)
    sizes = sorted(len(v) for _, v in records)
    emit({"kind": "kafka_ceiling_setup", "machine": machine_info(), "bootstrap": args.bootstrap,
          "records": args.records, "partitions": args.partitions,
          "broker_pid": args.broker_pid, "value_bytes_median": sizes[len(sizes) // 2],
          "value_bytes_p10_p90": [sizes[len(sizes) // 10], sizes[9 * len(sizes) // 10]], "load": load_average()})
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ceiling-") as tmp:
        for index in range(args.repeat):
            results.extend(one_run(args, records, index, Path(tmp)))
    if not args.keep_topics:
        delete_groups(args.bootstrap, args.run_id, within=20)
    lines = summarize(results, args.modes)
    for line in lines:
        emit(line)
    print(table(["mode", "runs", "records/s (median)", "CPU µs/record (median)", "broker CPU µs/record",
                 "CPU µs/record (runs)"],
                [[s["mode"], s["runs"], s["median_records_per_s"], s["median_cpu_us_per_record"],
                  "-" if s["median_broker_cpu_us_per_record"] is None else s["median_broker_cpu_us_per_record"],
                  " ".join(f"{v:.1f}" for v in s["cpu_us_per_record_all"])] for s in lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
