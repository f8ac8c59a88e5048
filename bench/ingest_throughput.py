"""Embedded ingest throughput (target: ≥ 5,000 turns/s).

Generates deterministic mixed Chinese/English traffic (bench/synthetic.py),
then times ONE `EmbeddedRuntime.ingest` call on a fresh data folder: from the
first append to the last projected change (every processor and the
current-memory projection included; rule extractor, built-in hashing
embedder, one process). Building the `TurnInput` objects (the client side) is
outside the timed span.

Each repetition runs in a fresh subprocess, so peak RSS (ru_maxrss) is that
repetition's own. Prints one JSON line per repetition, one summary line with
the medians, and a table.

    python -m bench.ingest_throughput                      # 20,000 turns, 3 repetitions
    python -m bench.ingest_throughput --turns 5000 --repeat 5
    python -m bench.ingest_throughput --profile bench/results/ingest.prof.txt
    python -m bench.ingest_throughput --turns 5000 --repeat 1 --no-compare --sample bench/results/ingest.sample.txt
    python -m bench.ingest_throughput --turns 2000 --repeat 1 --embedder use   # the USE embedder

Encryption (crypto-shredding: forgetting destroys the user's key) is on by default, as in the runtime.
Every repetition is also run with it off (ENGRAM_ENCRYPTION=off), and the
summary reports the overhead: ingest and replay throughput on and off, and
the key store's size. `--no-compare` skips the off runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, machine_info, median, peak_rss_mib, table  # noqa: E402

TARGET_TURNS_PER_S = 5000
REPO = Path(__file__).resolve().parents[1]


def run_once(turns: int, seed: int, users: int | None = None, profile: cProfile.Profile | None = None,
             batch_size: int | None = None, encryption: bool = True, sampler: Any = None) -> dict[str, Any]:
    """Generate the traffic, ingest it into a fresh runtime, and measure. In this process."""
    from bench.synthetic import describe, generate_turns
    from engram.runtime.engine import EmbeddedRuntime

    batch = generate_turns(turns, seed=seed, users=users)
    shape = describe(batch)
    rss_before = peak_rss_mib()
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        runtime = (EmbeddedRuntime(Path(tmp) / "data", batch_size=batch_size, encryption=encryption) if batch_size
                   else EmbeddedRuntime(Path(tmp) / "data", encryption=encryption))
        try:
            if profile is not None:
                profile.enable()
            if sampler is not None:
                sampler.__enter__()
            start, cpu_start = time.perf_counter(), time.process_time()
            report = runtime.ingest(batch)
            events = runtime.log.count()
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            if sampler is not None:
                sampler.__exit__(None, None, None)
            if profile is not None:
                profile.disable()
            memories = _active_memories(runtime, batch)
            types = _event_types(runtime, report)
            processed = int(runtime.counters.get("TurnRecorded", 0))
            start = time.perf_counter()
            runtime.replay()
            replay_seconds = time.perf_counter() - start
            keys = runtime.log.cipher.keys.count() if runtime.log.cipher is not None else 0
        finally:
            runtime.close()
        db_bytes = sum(f.stat().st_size for f in (Path(tmp) / "data").glob("*") if f.is_file())
        keys_file = Path(tmp) / "data" / "keys.db"
        keys_bytes = keys_file.stat().st_size if keys_file.exists() else 0
    return {
        "kind": "ingest_run",
        "turns": report.received,
        "appended": report.appended,
        "duplicates": report.duplicates,
        "users": shape["users"],
        "sessions": shape["sessions"],
        "seconds": round(elapsed, 4),
        "encryption": "on" if encryption else "off",
        "replay_seconds": round(replay_seconds, 4),
        "replay_events_per_s": round(events / replay_seconds, 1),
        "data_keys": keys,
        "keys_db_bytes": keys_bytes,
        "turns_per_s": round(report.received / elapsed, 1),
        "cpu_seconds": round(cpu, 4),
        "turns_per_cpu_s": round(report.received / cpu, 1) if cpu > 0 else None,
        "loadavg": _loadavg(),
        "processed_turns": processed,
        "complete": processed == report.appended,
        "batch_size": batch_size or "default",
        "events_written": events,
        "events_per_s": round(events / elapsed, 1),
        "derived_events": events - report.appended,
        "active_memories": memories,
        "peak_rss_mib": peak_rss_mib(),
        "rss_before_ingest_mib": rss_before,
        "db_mib": round(db_bytes / 2**20, 1),
        "event_types": types,
        "traffic": shape,
    }


def _loadavg() -> str:
    """/proc/loadavg's 1, 5 and 15 minute averages when the run ended (the machine is shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def _event_types(runtime: Any, report: Any) -> dict[str, int]:
    """Every event type written by this ingest (the log was empty before it)."""
    counter = getattr(runtime, "_types_after", None)
    counts = dict(counter(0)) if callable(counter) else {"TurnRecorded": report.appended, **report.events}
    return dict(sorted(counts.items()))


def _active_memories(runtime: Any, batch: list[Any]) -> int:
    owners = {(t.tenant, t.user) for t in batch}
    return sum(len(runtime.store.list_memories(tenant, user)) for tenant, user in owners)


def run_in_subprocess(turns: int, seed: int, users: int | None, batch_size: int | None = None,
                      encryption: bool = True) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.ingest_throughput", "--worker", "--turns", str(turns), "--seed", str(seed),
           "--encryption", "on" if encryption else "off"]
    if users:
        cmd += ["--users", str(users)]
    if batch_size:
        cmd += ["--batch-size", str(batch_size)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def encryption_overhead(on: list[dict[str, Any]], off: list[dict[str, Any]]) -> dict[str, Any]:
    """Median ingest and replay throughput with encryption on and off, and the cost in per cent."""
    ingest_on, ingest_off = median([r["turns_per_s"] for r in on]), median([r["turns_per_s"] for r in off])
    replay_on = median([r["replay_events_per_s"] for r in on])
    replay_off = median([r["replay_events_per_s"] for r in off])
    return {
        "ingest_turns_per_s_on": round(ingest_on, 1), "ingest_turns_per_s_off": round(ingest_off, 1),
        "ingest_overhead_pct": round(100 * (1 - ingest_on / ingest_off), 1),
        "replay_events_per_s_on": round(replay_on, 1), "replay_events_per_s_off": round(replay_off, 1),
        "replay_overhead_pct": round(100 * (1 - replay_on / replay_off), 1),
        "data_keys": on[0]["data_keys"], "keys_db_bytes": on[0]["keys_db_bytes"],
        "db_mib_on": on[0]["db_mib"], "db_mib_off": off[0]["db_mib"],
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    tps = median([r["turns_per_s"] for r in runs])
    return {
        "kind": "ingest_summary",
        "repetitions": len(runs),
        "turns": runs[0]["turns"],
        "users": runs[0]["users"],
        "sessions": runs[0]["sessions"],
        "median_seconds": round(median([r["seconds"] for r in runs]), 4),
        "median_turns_per_s": round(tps, 1),
        "median_turns_per_cpu_s": round(median([r.get("turns_per_cpu_s") or 0.0 for r in runs]), 1),
        "loadavg": [r.get("loadavg", "") for r in runs],
        "min_turns_per_s": min(r["turns_per_s"] for r in runs),
        "max_turns_per_s": max(r["turns_per_s"] for r in runs),
        "median_events_per_s": round(median([r["events_per_s"] for r in runs]), 1),
        "complete": all(r["complete"] for r in runs),
        "processed_turns": runs[0]["processed_turns"],
        "batch_size": runs[0]["batch_size"],
        "events_written": runs[0]["events_written"],
        "active_memories": runs[0]["active_memories"],
        "max_peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "target_turns_per_s": TARGET_TURNS_PER_S,
        "ratio_to_target": round(tps / TARGET_TURNS_PER_S, 3),
        "event_types": runs[0]["event_types"],
        "traffic": runs[0]["traffic"],
        "machine": machine_info(),
    }


def write_profile(profile: cProfile.Profile, path: Path, top: int = 30) -> str:
    """Top `top` functions by cumulative and by own time, as text; returns the text."""
    out = io.StringIO()
    for key in ("cumulative", "tottime"):
        out.write(f"=== top {top} by {key} ===\n")
        pstats.Stats(profile, stream=out).strip_dirs().sort_stats(key).print_stats(top)
    text = out.getvalue()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    profile.dump_stats(str(path.with_suffix(".pstats")))
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20_000, help="turns per repetition (default 20,000)")
    parser.add_argument("--users", type=int, default=None, help="users (default: one per 100 turns)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; the median is reported")
    parser.add_argument("--in-process", action="store_true",
                        help="run repetitions in this process (peak RSS is then cumulative)")
    parser.add_argument("--profile", type=Path, default=None,
                        help="also run one cProfile'd repetition (not in the medians) and write the "
                             "top 25 by cumulative and own time to this file")
    parser.add_argument("--sample", type=Path, default=None,
                        help="also run one repetition under a CPU sampler (bench/cpu_sampler.py; not in the "
                             "medians) and write the inclusive and own shares per function to this file")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="EmbeddedRuntime batch_size (default: the runtime's own)")
    parser.add_argument("--no-compare", action="store_true",
                        help="do not also run each repetition with encryption off")
    parser.add_argument("--encryption", choices=("on", "off"), default="on", help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--embedder", choices=("hashing", "use"), default=None,
                        help="the runtime's embedder (sets ENGRAM_EMBEDDER for every repetition)")
    args = parser.parse_args(argv)

    if args.embedder:
        os.environ["ENGRAM_EMBEDDER"] = args.embedder
    if args.worker:
        emit(run_once(args.turns, args.seed, args.users, batch_size=args.batch_size,
                      encryption=args.encryption == "on"))
        return 0

    runs: list[dict[str, Any]] = []
    plain: list[dict[str, Any]] = []
    for n in range(args.repeat):
        for encryption in (True,) if args.no_compare else (True, False):
            run = (run_once(args.turns, args.seed, args.users, batch_size=args.batch_size, encryption=encryption)
                   if args.in_process
                   else run_in_subprocess(args.turns, args.seed, args.users, args.batch_size, encryption))
            run["repetition"] = n + 1
            emit(run)
            (runs if encryption else plain).append(run)
    summary = summarize(runs)
    if plain:
        summary["encryption_overhead"] = encryption_overhead(runs, plain)
    emit(summary)

    rows = [[r["repetition"], r["turns"], r["seconds"], r["turns_per_s"], r["turns_per_cpu_s"], r["events_written"],
             r["events_per_s"], r["peak_rss_mib"], r["loadavg"]] for r in runs]
    rows.append(["median", summary["turns"], summary["median_seconds"], summary["median_turns_per_s"],
                 summary["median_turns_per_cpu_s"], summary["events_written"], summary["median_events_per_s"],
                 summary["max_peak_rss_mib"], ""])
    print()
    print(table(["run", "turns", "seconds", "turns/s", "turns/CPU-s", "events", "events/s", "peak RSS MiB",
                 "loadavg"], rows))
    m = summary["machine"]
    print(f"\nmachine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu_model']}, Python {m['python']}")
    print(f"users {summary['users']}, sessions {summary['sessions']}, active memories {summary['active_memories']}; "
          f"target {TARGET_TURNS_PER_S:,} turns/s -> ratio {summary['ratio_to_target']}")
    if plain:
        o = summary["encryption_overhead"]
        print(f"encryption: ingest {o['ingest_turns_per_s_on']:,} turns/s on vs {o['ingest_turns_per_s_off']:,} off "
              f"({o['ingest_overhead_pct']}% overhead); replay {o['replay_events_per_s_on']:,} events/s on vs "
              f"{o['replay_events_per_s_off']:,} off ({o['replay_overhead_pct']}%); "
              f"{o['data_keys']} data keys, keys.db {o['keys_db_bytes']:,} bytes")
    if not summary["complete"]:
        print(f"WARNING: only {summary['processed_turns']:,} of {summary['turns']:,} turns reached the processors "
              "(runtime counters['TurnRecorded']): the throughput above is NOT valid", file=sys.stderr)

    if args.sample:
        from bench.cpu_sampler import CpuSampler

        sampler = CpuSampler()
        sampled = run_once(args.turns, args.seed, args.users, batch_size=args.batch_size, sampler=sampler)
        text = (f"{sampled['turns']} turns, {sampled['cpu_seconds']} CPU s ({sampled['turns_per_cpu_s']} turns/CPU-s), "
                f"load {sampled['loadavg']}\n" + sampler.report())
        args.sample.parent.mkdir(parents=True, exist_ok=True)
        args.sample.write_text(text, encoding="utf-8")
        print(f"\nCPU samples written to {args.sample}")
        print("\n".join(text.splitlines()[:30]))

    if args.profile:
        profile = cProfile.Profile()
        run_once(args.turns, args.seed, args.users, profile=profile, batch_size=args.batch_size)
        text = write_profile(profile, args.profile)
        print(f"\nprofile written to {args.profile} (and {args.profile.with_suffix('.pstats')})")
        print("\n".join(text.splitlines()[:45]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
