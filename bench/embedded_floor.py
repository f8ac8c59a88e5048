"""The ingest floor — what the embedded runtime's durable, encrypted event log alone costs per turn.

The ingest target is ≥ 5,000 turns/s (200 µs a turn, everything included). This
measures the part no processor can skip: the events one turn leaves in the log
(synthetic turns run once through the embedded runtime, ~3.4 events a turn:
the turn, its candidate, its memory change, the audit of a skipped turn, summaries)
written again the way the runtime writes them — `EventLog.stage` (ids checked,
user text sealed under the owner's key with AES-GCM, JSON) and `flush` (one
SQLite `executemany` per batch, WAL, `synchronous=NORMAL`) and one commit per
batch — plus, separately, the pydantic construction of those events
(`model_validate` of their dicts: what deriving them costs before any rule runs).
No extraction, consolidation, summaries or projection. A floor above the 200 µs
budget would show the target is out of reach whatever the processors do.

    python -m bench.embedded_floor --turns 5000 --repeat 3

Prints one JSON line per run and a summary line (medians, µs per turn; load average).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, machine_info, median  # noqa: E402
from bench.distributed_common import load_average  # noqa: E402
from bench.projector_cost import event_log  # noqa: E402
from engram.runtime.erasure import open_cipher  # noqa: E402
from engram.runtime.log import EventLog, open_database  # noqa: E402
from engram.schemas.base import Event  # noqa: E402

BUDGET_US = 200.0
"""µs per turn at the ingest target (5,000 turns/s)."""


def log_append(events: list[Event], batch: int) -> float:
    """CPU seconds to stage, seal and write `events` into a fresh encrypted log, `batch` at a time."""
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "engram.db")
        log = EventLog(db, open_cipher(Path(tmp)))
        start = time.process_time()
        for at in range(0, len(events), batch):
            db.execute("BEGIN")
            log.stage(events[at:at + batch])
            log.flush()
            db.execute("COMMIT")
        spent = time.process_time() - start
        db.close()
        return spent


def construction(events: list[Event]) -> float:
    """CPU seconds to build the same events again from their field values (pydantic validation)."""
    fields = [(type(e), e.model_dump()) for e in events]
    start = time.process_time()
    for model, values in fields:
        model.model_validate(values)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=2000, help="events per log write (as the runtime's batches)")
    args = parser.parse_args(argv)
    events = event_log(args.turns, args.seed)
    appends, builds = [], []
    for index in range(args.repeat):
        append_us = 1e6 * log_append(events, args.batch) / args.turns
        build_us = 1e6 * construction(events) / args.turns
        appends.append(append_us)
        builds.append(build_us)
        emit({"kind": "embedded_floor", "run": index, "turns": args.turns, "events": len(events),
              "log_append_us_per_turn": round(append_us, 1), "construct_us_per_turn": round(build_us, 1),
              "load": load_average()})
    floor = median(appends) + median(builds)
    emit({"kind": "embedded_floor_summary", "turns": args.turns, "events_per_turn": round(len(events) / args.turns, 3),
          "log_append_us_per_turn": round(median(appends), 1), "construct_us_per_turn": round(median(builds), 1),
          "floor_us_per_turn": round(floor, 1), "budget_us_per_turn": BUDGET_US,
          "floor_share_of_budget": round(floor / BUDGET_US, 2), "load": load_average(), "machine": machine_info()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
