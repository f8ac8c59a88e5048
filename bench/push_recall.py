"""Push recall: is what the assistant must know in the context of a new session's first message?

Each scenario (one JSON object per line, see `bench/data/push_dev.jsonl`) is one user: past sessions
(turns `U: …` / `A: …`, one day apart) and probes, each asked as the first message of a brand-new session
after all of them. Every user is its own tenant in one embedded runtime. A probe's expectations are checked
on `recall(...).context`, the memory block the assistant would get:

- `expect`: one entry is one expectation; it holds when any of its `|`-separated alternatives is in the
  context (case-insensitive substring).
- `must_not`: one entry is one expectation; it holds when none of its alternatives is in the context. A
  `must_not` entry that fails is also counted as a leak (a superseded or a sensitive fact shown).

Reported per variant (embedder × profile on/off): expectations held / total, overall, per `lang` and per
kind (expect, must_not), the leaks, and the profile's token share of the contexts (profile-item tokens over
all item tokens, over the probes with a non-empty context).

    python -m bench.push_recall                                  # bench/data/push_dev.jsonl, hashing, both
    python -m bench.push_recall --set other.jsonl --embedder use --profile on
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bench.common import emit, machine_info, median, table

DEFAULT_SET = Path(__file__).resolve().parent / "data" / "push_dev.jsonl"
AGENT = "assistant"
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
TURN_GAP = timedelta(minutes=1)


@dataclass(frozen=True)
class Probe:
    question: str
    expect: tuple[str, ...]
    must_not: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    user_id: str
    lang: str
    sessions: tuple[tuple[str, ...], ...]
    probes: tuple[Probe, ...]


def load_set(path: Path) -> list[Scenario]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        probes = tuple(Probe(p["question"], tuple(p.get("expect", ())), tuple(p.get("must_not", ())))
                       for p in raw["probes"])
        out.append(Scenario(str(raw["id"]), str(raw.get("lang", "")), tuple(tuple(s) for s in raw["sessions"]),
                            probes))
    return out


def alternatives(entry: str) -> list[str]:
    return [a.strip().lower() for a in entry.split("|") if a.strip()]


def holds(entry: str, context: str, *, present: bool) -> bool:
    """`present`: any alternative is in the context; otherwise none is."""
    text = context.lower()
    found = any(a in text for a in alternatives(entry))
    return found if present else not found


@dataclass
class Tally:
    held: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.held += ok
        self.total += 1

    @property
    def rate(self) -> float:
        return round(self.held / self.total, 4) if self.total else 0.0


@dataclass
class VariantResult:
    overall: Tally = field(default_factory=Tally)
    by_lang: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_kind: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    leaks: list[dict[str, str]] = field(default_factory=list)
    profile_tokens: int = 0
    context_tokens: int = 0
    empty_contexts: int = 0
    latencies_ms: list[float] = field(default_factory=list)


def runtime_context(embedder: str, profile: bool) -> Any:
    import os

    from engram.core.config import DEFAULT_CONFIG
    from engram.runtime.context import default_context

    recall = DEFAULT_CONFIG.recall
    update: dict[str, Any] = {"deadline_ms": 5000.0}
    if not profile:
        update["profile_share"] = 0.0
    config = DEFAULT_CONFIG.model_copy(update={"recall": recall.model_copy(update=update)})
    env = dict(os.environ)
    env["ENGRAM_EMBEDDER"] = embedder
    return default_context(config, env)


def turn_inputs(scenario: Scenario) -> list[Any]:
    from engram.schemas.inputs import TurnInput

    inputs = []
    for day, session in enumerate(scenario.sessions):
        for n, line in enumerate(session):
            role = "assistant" if line.startswith("A:") else "user"
            content = line[2:].strip() if line[:2] in ("U:", "A:") else line.strip()
            inputs.append(TurnInput(tenant=f"t-{scenario.user_id}", user=scenario.user_id, agent=AGENT,
                                    session=f"s{day}", message_id=f"{scenario.user_id}-s{day}-m{n}", role=role,
                                    content=content, ts=START + timedelta(days=day) + n * TURN_GAP))
    return inputs


def run_variant(scenarios: Sequence[Scenario], embedder: str, profile: bool, out: Any) -> VariantResult:
    from engram.recall.service import RecallRequest
    from engram.runtime.engine import EmbeddedRuntime

    result = VariantResult()
    name = variant_name(embedder, profile)
    with tempfile.TemporaryDirectory(prefix="engram-push-") as tmp:
        runtime = EmbeddedRuntime(Path(tmp), ctx=runtime_context(embedder, profile))
        try:
            for scenario in scenarios:
                runtime.ingest(turn_inputs(scenario))
                probe_day = START + timedelta(days=len(scenario.sessions))
                for n, probe in enumerate(scenario.probes):
                    start = time.perf_counter()
                    recalled = runtime.recall(RecallRequest(
                        tenant=f"t-{scenario.user_id}", user=scenario.user_id, agent=AGENT,
                        session=f"probe{n}", question=probe.question, now=probe_day + n * TURN_GAP,
                        message_id=f"{scenario.user_id}-probe{n}"))
                    result.latencies_ms.append((time.perf_counter() - start) * 1000)
                    emit(score_probe(result, name, scenario, probe, recalled), out)
        finally:
            runtime.close()
    return result


def score_probe(result: VariantResult, name: str, scenario: Scenario, probe: Probe, recalled: Any) -> dict[str, Any]:
    context = recalled.memory_section
    outcomes = []
    for entry in probe.expect:
        ok = holds(entry, context, present=True)
        outcomes.append({"expect": entry, "held": ok})
        for tally in (result.overall, result.by_lang[scenario.lang], result.by_kind["expect"]):
            tally.add(ok)
    for entry in probe.must_not:
        ok = holds(entry, context, present=False)
        outcomes.append({"must_not": entry, "held": ok})
        for tally in (result.overall, result.by_lang[scenario.lang], result.by_kind["must_not"]):
            tally.add(ok)
        if not ok:
            result.leaks.append({"user": scenario.user_id, "question": probe.question, "term": entry})
    tokens = sum(i.tokens for i in recalled.items)
    profile_tokens = sum(i.tokens for i in recalled.items if i.kind == "profile")
    if tokens:
        result.context_tokens += tokens
        result.profile_tokens += profile_tokens
    else:
        result.empty_contexts += 1
    return {"kind": "push_probe", "variant": name, "user": scenario.user_id, "lang": scenario.lang,
            "question": probe.question, "outcomes": outcomes, "context_tokens": tokens,
            "profile_tokens": profile_tokens, "items": [[i.kind, i.text] for i in recalled.items]}


def variant_name(embedder: str, profile: bool) -> str:
    return f"engram[{embedder},profile={'on' if profile else 'off'}]"


def summary(name: str, r: VariantResult) -> dict[str, Any]:
    lat = sorted(r.latencies_ms)
    return {
        "kind": "push_result", "variant": name, "held": r.overall.held, "total": r.overall.total,
        "rate": r.overall.rate,
        "by_lang": {k: {"held": t.held, "total": t.total, "rate": t.rate} for k, t in sorted(r.by_lang.items())},
        "by_kind": {k: {"held": t.held, "total": t.total, "rate": t.rate} for k, t in sorted(r.by_kind.items())},
        "leaks": len(r.leaks), "leak_list": r.leaks,
        "profile_token_share": round(r.profile_tokens / r.context_tokens, 4) if r.context_tokens else 0.0,
        "empty_contexts": r.empty_contexts,
        "recall_p50_ms": round(median(lat), 2),
        "recall_p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2) if lat else 0.0,
    }


def run(path: Path, embedders: Iterable[str], profiles: Iterable[bool], out: Any = None) -> list[dict[str, Any]]:
    scenarios = load_set(path)
    settings = {"kind": "push_run", "set": str(path), "users": len(scenarios),
                "probes": sum(len(s.probes) for s in scenarios), "machine": machine_info()}
    emit(settings, out)
    summaries = []
    for embedder in embedders:
        for profile in profiles:
            result = run_variant(scenarios, embedder, profile, out)
            summaries.append(summary(variant_name(embedder, profile), result))
            emit(summaries[-1], out)
    langs = sorted({lang for s in summaries for lang in s["by_lang"]})
    rows = [[s["variant"], f"{s['held']}/{s['total']}", s["rate"],
             *(f"{s['by_lang'][g]['held']}/{s['by_lang'][g]['total']}" if g in s["by_lang"] else "-" for g in langs),
             s["by_kind"].get("must_not", {}).get("rate", "-"), s["leaks"], s["profile_token_share"],
             s["recall_p50_ms"]] for s in summaries]
    print(table(["variant", "held", "rate", *langs, "must_not rate", "leaks", "profile share", "p50 ms"], rows),
          file=out or sys.stdout)
    return summaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Push recall: expectations held in a new session's context")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="scenario file (.jsonl)")
    parser.add_argument("--embedder", action="append", choices=("hashing", "use"), default=None,
                        help="repeat for a row per embedder (default: hashing)")
    parser.add_argument("--profile", choices=("on", "off", "both"), default="both",
                        help="the standing profile pushed (on), not (off: recall.profile_share = 0), or both")
    args = parser.parse_args(argv)
    profiles = {"on": (True,), "off": (False,), "both": (False, True)}[args.profile]
    run(args.set, tuple(args.embedder or ("hashing",)), profiles)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
