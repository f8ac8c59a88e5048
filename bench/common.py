"""Shared benchmark helpers: machine facts, peak RSS, JSON lines and plain tables."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any


def machine_info() -> dict[str, Any]:
    """Cores, memory and CPU model of this machine, plus the interpreter."""
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "memory_gib": None,
        "cpu_model": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    info["memory_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                    break
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024, 1)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def emit(record: dict[str, Any], stream: Any = None) -> None:
    """One JSON line per result."""
    print(json.dumps(record, ensure_ascii=False, sort_keys=False), file=stream or sys.stdout, flush=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain, aligned text table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if n and _numeric(c) else c.ljust(w) for c, w in zip(row, widths)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _numeric(text: str) -> bool:
    return text.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()


def timed_ingest(runtime: Any, inputs: Sequence[Any], label: str) -> tuple[Any, float, int]:
    """`runtime.ingest(inputs)` timed: (its report, seconds, turns that reached the processors). Warns on
    stderr, naming `label`, when fewer turns reached the processors than were appended."""
    before = int(runtime.counters.get("TurnRecorded", 0))
    start = time.perf_counter()
    report = runtime.ingest(inputs)
    seconds = time.perf_counter() - start
    processed = int(runtime.counters.get("TurnRecorded", 0)) - before
    if processed != report.appended:
        print(f"WARNING: {label}: only {processed} of {report.appended} turns reached the processors",
              file=sys.stderr)
    return report, seconds, processed
