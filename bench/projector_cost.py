"""The projector's own CPU per turn: decode sealed records, project into a real Weaviate, build ClickHouse rows.

A fixed event log (synthetic turns run through the embedded runtime once: turns, memory
changes, summaries, cards, recalls... as the processors derive them) is encoded the way
the processors write it (user text sealed with a `FieldCipher`) and then fed, in batches,
through the code a distributed projector runs per batch: `decode(bytes, cipher)`,
`CurrentMemoryProjector.apply` on a `WeaviateStore` (blind search terms, sealed text, a
unique collection prefix on the shared Weaviate) and `store.flush()`, plus the ClickHouse
rows of the batch (`ClickHouseProjector.apply_all`, not inserted: the insert runs in chDB).
No Kafka: this isolates the Python work per record. CPU is `time.process_time` of this
process (the Weaviate client's threads included), so load shifts it much less than wall time.

    ENGRAM_WEAVIATE_URL=http://127.0.0.1:18080 ENGRAM_WEAVIATE_GRPC_PORT=50061 \
        python -m bench.projector_cost --turns 3000 --repeat 3
        python -m bench.projector_cost --turns 2000 --batch 85 --chdb   # plus a chDB insert per batch

Prints one JSON line per run and a summary line (median CPU-s per 1,000 turns, load average).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, median  # noqa: E402
from bench.distributed_common import load_average  # noqa: E402
from bench.synthetic import generate_turns  # noqa: E402
from engram.core.crypto import FieldCipher  # noqa: E402
from engram.core.keystore import MemoryKeyStore  # noqa: E402
from engram.projections.clickhouse import ClickHouseProjector  # noqa: E402
from engram.projections.clickhouse_client import chdb_target  # noqa: E402
from engram.projections.clickhouse_rows import rows_for  # noqa: E402
from engram.projections.clickhouse_shared import shared_connection  # noqa: E402
from engram.projections.projector import PROJECTED_TYPES, CurrentMemoryProjector  # noqa: E402
from engram.projections.weaviate_store import WeaviateStore  # noqa: E402
from engram.runtime.context import default_context  # noqa: E402
from engram.runtime.engine import EmbeddedRuntime  # noqa: E402
from engram.schemas.base import Event  # noqa: E402
from engram.schemas.codec import decode, encode  # noqa: E402

MASTER = bytes(range(32))


def event_log(turns: int, seed: int) -> list[Event]:
    """Every event the embedded runtime logs for `turns` synthetic turns, in log order."""
    with tempfile.TemporaryDirectory() as tmp:
        runtime = EmbeddedRuntime(Path(tmp) / "data", encryption=False, analytics="off")
        try:
            runtime.ingest(generate_turns(turns, seed=seed))
            return [event for _seq, event in runtime.log.scan()]
        finally:
            runtime.close()


def _cold_caches() -> None:
    """Every run starts with the process-wide caches of ids and blind terms empty (old code: none there)."""
    for module, name in (("engram.core.crypto", "_blind_term"), ("engram.projections.weaviate_schema", "object_id")):
        clear = getattr(getattr(sys.modules.get(module), name, None), "cache_clear", None)
        if clear is not None:
            clear()


def run(records: list[bytes], cipher: FieldCipher, url: str, grpc_port: int, batch: int,
        analytics: bool, chdb: ClickHouseProjector | None = None) -> dict[str, Any]:
    _cold_caches()
    embedder = default_context().embedder
    store = WeaviateStore.connect(url, grpc_port, embedder.model_id, f"bench-pc-{uuid.uuid4().hex[:8]}", cipher)
    store._index_master = MASTER  # blind terms as with ENGRAM_MASTER_KEY set
    try:
        projector = CurrentMemoryProjector(store, embedder)
        cpu, wall, flush_cpu, decode_cpu, chdb_cpu = time.process_time(), time.perf_counter(), 0.0, 0.0, 0.0
        for start in range(0, len(records), batch):
            began = time.process_time()
            events = [decode(value, cipher) for value in records[start:start + batch]]
            decode_cpu += time.process_time() - began
            for offset, event in enumerate(events, start):
                if event.type in PROJECTED_TYPES:
                    projector.apply(event, offset)
            began = time.process_time()
            store.flush()
            flush_cpu += time.process_time() - began
            if chdb is not None:  # rows built and inserted, one insert per batch
                began = time.process_time()
                chdb.apply_all(events)
                chdb.flush()
                chdb_cpu += time.process_time() - began
            elif analytics:  # what `ClickHouseProjector.apply` buffers (the insert itself runs in chDB)
                built = [row for event in events for row in rows_for(event)]
                del built
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return {"cpu_s": round(cpu, 3), "decode_cpu_s": round(decode_cpu, 3), "flush_cpu_s": round(flush_cpu, 3),
                "chdb_cpu_s": round(chdb_cpu, 3),
                "wall_s": round(wall, 3), "state_hash": store.state_hash()}
    finally:
        store.drop()
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=2000, help="records per projector batch (as `--batch-size`)")
    parser.add_argument("--no-analytics", action="store_true", help="leave out the ClickHouse rows")
    parser.add_argument("--chdb", action="store_true",
                        help="also insert each batch's rows into a chDB in a temporary folder (one insert per batch)")
    parser.add_argument("--weaviate-url", default=os.environ.get("ENGRAM_WEAVIATE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--weaviate-grpc-port", type=int,
                        default=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")))
    args = parser.parse_args(argv)
    url, grpc_port = args.weaviate_url, args.weaviate_grpc_port
    events = event_log(args.turns, args.seed)
    cipher = FieldCipher(MemoryKeyStore())
    records = [encode(event, cipher) for event in events]
    turns = sum(1 for e in events if e.type == "TurnRecorded")
    runs = []
    with contextlib.ExitStack() as stack:
        chdb = _chdb(stack) if args.chdb else None
        for index in range(args.repeat):
            runs.append(_one(index, records, cipher, url, grpc_port, args, chdb, turns))
    emit({"summary": True, "turns": turns, "records": len(records), "repeat": args.repeat, "batch": args.batch,
          "chdb": args.chdb, "median_cpu_s_per_1000_turns": round(median([r["cpu_s_per_1000_turns"] for r in runs]), 3),
          "median_wall_s": round(median([r["wall_s"] for r in runs]), 3),
          "state_hashes": sorted({r["state_hash"] for r in runs}), "load": load_average()})
    return 0


def _chdb(stack: contextlib.ExitStack) -> ClickHouseProjector:
    folder = stack.enter_context(tempfile.TemporaryDirectory())
    projector = ClickHouseProjector(stack.enter_context(shared_connection(chdb_target(folder))))
    projector.create_schema()
    return projector


def _one(index: int, records: list[bytes], cipher: FieldCipher, url: str, grpc_port: int, args: argparse.Namespace,
         chdb: ClickHouseProjector | None, turns: int) -> dict[str, Any]:
    result = run(records, cipher, url, grpc_port, args.batch, not args.no_analytics, chdb)
    result.update(run=index, turns=turns, records=len(records),
                  cpu_s_per_1000_turns=round(1000 * result["cpu_s"] / max(turns, 1), 3), load=load_average())
    emit(result)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
