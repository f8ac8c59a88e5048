"""Per-hop breakdown of the freshness probes (`python -m bench.recall_freshness --trace`).

The runtime writes a line per hop of each traced record (`engram.distributed.trace`: the SDK
in the bench process, the stages and the projector in the worker's processes); the bench adds
when `list_memories` first showed the memory and when recall first returned it. For each probe
the first time of each hop after its `record_turn` call on the path a fact takes (turn -> extract
-> candidate -> consolidate -> memory change -> projector -> Weaviate -> recall) is taken, and each
hop's duration is the gap to the hop before it; the table gives p50 / p95 per hop over the probes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from bench.distributed_common import percentile
from bench.freshness_probes import PROBE_TENANT
from engram.distributed.trace import FILE_ENV, KEYS_ENV, read_hops

PATH: tuple[tuple[str, str], ...] = (
    ("sdk.record", "record_turn called"),
    ("sdk.key", "owner's data key ready (SDK)"),
    ("sdk.acked", "turn acknowledged by the broker"),
    ("extract.took:engram.turns", "extract stage took it"),
    ("extract.computed:engram.turns", "extract computed"),
    ("extract.acked:engram.turns", "candidate acknowledged"),
    ("consolidate.took:engram.candidates", "consolidate stage took it"),
    ("consolidate.computed:engram.candidates", "consolidate computed"),
    ("consolidate.acked:engram.candidates", "memory change acknowledged"),
    ("projector.consumed:engram.memory-changes", "projector consumed it"),
    ("projector.written:engram.memory-changes", "Weaviate write acknowledged"),
    ("recall.stored", "list_memories shows it"),
    ("recall.seen", "recall returns it"),
)


def enable(path: str, key_prefix: str) -> None:
    """Trace keys under `key_prefix` into `path`, in this process and the workers it starts (environment)."""
    os.environ[FILE_ENV] = path
    os.environ[KEYS_ENV] = key_prefix


def hop_times(path: str) -> dict[str, dict[str, list[float]]]:
    """key -> hop -> every wall-clock time it was logged, in order."""
    out: dict[str, dict[str, list[float]]] = {}
    for line in read_hops(path):
        key, hop, at = str(line["k"]), str(line["h"]), float(line["t"])  # type: ignore[arg-type]
        out.setdefault(key, {}).setdefault(hop, []).append(at)
    for hops in out.values():
        for times in hops.values():
            times.sort()
    return out


def breakdown(path: str, probes: Sequence[tuple[str, float, float | None, float | None]]) -> list[dict[str, Any]]:
    """Per hop of `PATH`: p50 / p95 ms since the hop before, over `probes`.

    A known user's earlier turns pass the same hops, so each hop is the first one logged after the
    probe's `record_turn` call. (Not "after the hop before": a consumer may read a record before its
    producer's acknowledgement has reached the producer, so a gap can be slightly negative.)"""
    traced = hop_times(path)
    gaps: dict[str, list[float]] = {hop: [] for hop, _ in PATH[1:]}
    totals: dict[str, list[float]] = {hop: [] for hop, _ in PATH[1:]}
    for key, sent, stored, seen in probes:
        hops = dict(traced.get(key, {}))
        hops["recall.stored"] = [stored] if stored is not None else []
        hops["recall.seen"] = [seen] if seen is not None else []
        previous: float | None = sent
        for hop, _ in PATH[1:]:
            at = next((t for t in hops.get(hop, []) if t >= sent), None)
            if at is None or previous is None:
                previous = None
                continue
            gaps[hop].append(1000 * (at - previous))
            totals[hop].append(1000 * (at - sent))
            previous = at
    return [{"hop": hop, "what": what, "n": len(gaps[hop]),
             "p50_ms": _round(percentile(gaps[hop], 50)), "p95_ms": _round(percentile(gaps[hop], 95)),
             "since_record_p50_ms": _round(percentile(totals[hop], 50)),
             "since_record_p95_ms": _round(percentile(totals[hop], 95))}
            for hop, what in PATH[1:]]


def _round(value: float) -> float | None:
    return round(value, 1) if value == value else None


def judge_checks(path: str, checks: Sequence[tuple[str, float, Any, bool, str]],
                 probes: Sequence[tuple[str, float]]) -> dict[str, Any]:
    """What the recalls' freshness said, against when each probe's turn (user, wall-clock time sent) was
    acknowledged (`sdk.acked`).

    A check that began after the acknowledgement and said `current` must be followed by a read that
    holds the memory: `wrong_current` counts those that did not (on `list_memories`, which returns every
    stored memory; a recall may rank a stored memory out, so those are counted apart)."""
    traced = hop_times(path)
    sent = {user: at for user, at in probes}
    acked = {user: next((t for t in traced.get(f"{PROBE_TENANT}/{user}", {}).get("sdk.acked", []) if t >= at),
                        float("inf")) for user, at in probes}  # the probe turn's, not a known user's first turn's
    probe_users = set(sent)
    mine = [c for c in checks if c[0] in probe_users]
    after = [c for c in mine if c[1] >= acked.get(c[0], float("inf"))]
    ms = [c[2].checked_ms for c in mine]
    return {"checks": len(mine), "checked_ms_p50": _round(percentile(ms, 50)),
            "checked_ms_p95": _round(percentile(ms, 95)),
            "unknown": sum(c[2].behind is None for c in mine), "current": sum(c[2].current for c in mine),
            "after_ack": len(after), "after_ack_current": sum(c[2].current for c in after),
            "after_ack_current_found": sum(c[2].current and c[3] for c in after),
            "wrong_current_stored": sum(c[2].current and not c[3] for c in after if c[4] == "stored"),
            "current_not_in_recall": sum(c[2].current and not c[3] for c in after if c[4] == "recall"),
            "found_not_current": sum(c[3] and not c[2].current for c in after)}
