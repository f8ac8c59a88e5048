"""The CPU cost of sealing on the distributed runtime's processing path, with and without encryption.

Runs the three processor stages (`StageRunner`, the code a worker runs per batch) in
this process over synthetic turns, the way a worker does: decode the input records,
process, encode the outputs and the changed states; each stage's outputs feed the next.
Once with a `FieldCipher` (every record and state sealed, as the distributed runtime
does), once without. No broker: this isolates what encryption adds per event on the
worker (AES-GCM, the JSON round trip, base64), which is the part of ingest it changes.
Keys come from a `MemoryKeyStore` (the Kafka key store adds one broker round trip per
new user and one refresh per second, not per event).

    python -m bench.erasure_overhead --turns 3000 --repeat 3

Prints one JSON line per run and a summary line; print the load average beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, median  # noqa: E402
from bench.synthetic import generate_turns  # noqa: E402
from engram.core.crypto import FieldCipher  # noqa: E402
from engram.core.keystore import MemoryKeyStore  # noqa: E402
from engram.distributed.app import dead_letter_owner, stages_for  # noqa: E402
from engram.distributed.governor import partition_of  # noqa: E402
from engram.distributed.records import Inbound  # noqa: E402
from engram.distributed.runner import StageRunner  # noqa: E402
from engram.distributed.topics import Namespace  # noqa: E402
from engram.distributed.tracking import TYPE_HEADER  # noqa: E402
from engram.runtime.context import default_context  # noqa: E402
from engram.schemas import topics as t  # noqa: E402
from engram.schemas.codec import encode  # noqa: E402
from engram.schemas.inputs import to_turn_event  # noqa: E402

NS = Namespace("bench.")


def run(turns: int, seed: int, sealed: bool, batch: int = 500) -> dict[str, Any]:
    cipher = FieldCipher(MemoryKeyStore()) if sealed else None
    now = generate_turns(1, seed)[0].ts
    events = [to_turn_event(turn, now) for turn in generate_turns(turns, seed)]  # type: ignore[arg-type]
    stages = stages_for("processors")
    context = default_context()
    runners = [StageRunner(s.processor, context, NS, dead_letter_owner(stages, s), cipher=cipher) for s in stages]
    offsets: dict[tuple[str, int], int] = {}
    reads = {r.processor.name: {NS.topic(x) for x in _inputs(r)} for r in runners}

    def record(topic: str, key: bytes, value: bytes, headers: Any) -> Inbound:
        part = partition_of(key, t.TURNS.partitions)
        offset = offsets.get((topic, part), 0)
        offsets[(topic, part)] = offset + 1
        return Inbound(topic, part, offset, key, value, 1.0, tuple(headers))

    began = time.perf_counter()
    queue = [record(NS.topic(t.TURNS), e.partition_key.encode(), encode(e, cipher),
                     [(TYPE_HEADER, e.type.encode())]) for e in events]
    tables: dict[str, dict[bytes, bytes]] = {r.processor.name: {} for r in runners}
    handled = 0
    while queue:
        produced = []
        for runner in runners:
            wanted = [r for r in queue if r.topic in reads[runner.processor.name]]
            table = tables[runner.processor.name]
            for start in range(0, len(wanted), batch):
                result = runner.run_batch(wanted[start:start + batch], table)
                for write in result.writes:
                    table[write.key] = write.value
                produced.extend(record(o.topic, o.key, o.value, o.headers) for o in result.outputs)
                handled += len(wanted[start:start + batch])
        queue = produced
    seconds = time.perf_counter() - began
    return {"sealed": sealed, "turns": turns, "records_handled": handled, "seconds": round(seconds, 3),
            "turns_per_s": round(turns / seconds, 1), "records_per_s": round(handled / seconds, 1)}


def _inputs(runner: StageRunner) -> list[t.Topic]:
    return next(s.inputs for s in stages_for("processors") if s.processor.name == runner.processor.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.repeat):
        for sealed in (False, True):  # interleaved: both see the same load
            result = run(args.turns, args.seed, sealed)
            emit(result)
            rates[sealed].append(result["turns_per_s"])
    plain, sealed_rate = median(rates[False]), median(rates[True])
    emit({"summary": True, "plain_turns_per_s_median": plain, "sealed_turns_per_s_median": sealed_rate,
          "overhead": round(1 - sealed_rate / plain, 3), "loadavg": Path("/proc/loadavg").read_text().split()[:3]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
