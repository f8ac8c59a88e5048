"""Extraction by rules and by a real model, side by side, on a corpus of cases.

Every turn of every case goes through the pipeline's turn filter (a skipped
turn asks nothing of either extractor), then through the rule extractor and
through `LLMExtractor` against the endpoint `ENGRAM_LLM_*` names (the real
`openai` client; `deploy/local/llm up` prints the settings of the local
model). Reported per extractor:

- quality: expectations held (a memory of an accepted type containing the
  terms; `none` cases: no memory at all) and must-not violations, overall and
  per language;
- calls per 100 turns (every attempt counts, retries included);
- latency per call, p50 / p95 (ms), and per extracted turn (with `--parallel N`,
  N cases are in flight and the server batches them: latency includes that);
- failure kinds: malformed answers, timeouts, schema-invalid (calls whose
  answered items were dropped by validation, and how many items), other
  errors, and turns that fell back to the rules.

Corpus: JSON lines, one case each:
    {"id": "zh-01", "lang": "zh", "kind": "profile",
     "turns": [{"role": "user", "content": "..."}],
     "expect": [{"type": ["user_profile"], "contains": ["李娜"]}],   # each term a regex, all must match
     "must_not": [{"type": ["user_preference"], "contains": ["喜欢猫"]}],
     "none": false}                                                   # true: no memory may be extracted
`type` may be a string or a list (omitted: any type); `turns` may be plain strings (user turns).
The corpus of `bench/extraction.py` (`bench/data/extraction_*.jsonl`: "U: text" turns, `has` /
`not` / `none` expectations) is read too; its `count` / `one` / `resolved` expectations are about
consolidation and are not scored here (every turn is extracted on its own, nothing is merged).

    eval "$(deploy/local/llm up)"
    python -m bench.llm_extraction                                 # bench/data/llm_subset.jsonl
    python -m bench.llm_extraction --corpus bench/data/extraction.jsonl --limit 40 --json-out out.json
    python -m bench.llm_extraction --parallel 4 --show-misses         # 4 cases in flight (the server's slots)

One untimed warm-up call per prompt (user, assistant) runs first, so the
server has both prompts' prefix cached, as it has in steady state.
    deploy/local/llm down
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bench.common import emit, machine_info, table
from engram.core.ports import Extraction, Extractor, LLMCall
from engram.llm.client import ModelClient
from engram.llm.extractor import LLMExtractor, warm_up
from engram.llm.settings import settings_from_env
from engram.schemas.events import TurnRecorded
from engram.schemas.memory import Candidate
from engram.streams.filters import filter_turn
from engram.streams.rule_extractor import RuleExtractor

DEFAULT_CORPUS = Path(__file__).parent / "data" / "llm_subset.jsonl"


@dataclass(frozen=True)
class Expectation:
    types: frozenset[str]
    """memory types (`user_goal`) or slots (`user_profile.occupation`); empty: any"""
    terms: tuple[str, ...]
    negated: bool | None = None

    def matches(self, candidate: Candidate) -> bool:
        if self.types and candidate.type.value not in self.types and candidate.slot not in self.types:
            return False
        if self.negated is not None and candidate.negated != self.negated:
            return False
        return all(re.search(term, candidate.content, re.IGNORECASE) for term in self.terms)


def _term(raw: str) -> str:
    """bench/extraction.py's terms as a regex: Latin words whole (`x*` a prefix), CJK substrings, `a|b`."""
    alternatives = []
    for alt in raw.split("|"):
        if re.search(r"[\u4e00-\u9fff]", alt):
            alternatives.append(re.escape(alt))
        elif alt.endswith("*"):
            alternatives.append(r"\b" + re.escape(alt[:-1]))
        else:
            alternatives.append(r"\b" + re.escape(alt) + r"\b")
    return "|".join(alternatives)


_ROLES = {"U": "user", "B": "user", "A": "assistant"}
SKIPPED_KINDS = ("count", "one", "resolved")
"""Expectations of `bench/extraction.py` about consolidation, not extraction: not scored here."""


def _extraction_case(raw: dict[str, Any], n: int) -> Case:
    """A case of `bench/data/extraction_*.jsonl` ("U: text" turns; has / not / none expectations)."""
    turns = tuple((_ROLES.get(t[:1], "user"), t[2:].strip()) for t in raw["turns"] if t != "---")
    expect, must_not, none = [], [], False
    for e in raw.get("expect", []):
        if "has" in e:
            expect.append(Expectation(frozenset(e["has"].split("|")), tuple(_term(t) for t in e.get("terms", []))))
        elif "not" in e:
            kinds = frozenset(e["type"].split("|")) if e.get("type") else frozenset()
            must_not.append(Expectation(kinds, tuple(_term(t) for t in e["not"]), e.get("negated")))
        elif e.get("none"):
            none = True
    return Case(str(raw.get("id", n)), str(raw.get("lang", "?")), str(raw.get("kind", "?")), turns,
                tuple(expect), tuple(must_not), none)


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    kind: str
    turns: tuple[tuple[str, str], ...]
    expect: tuple[Expectation, ...]
    must_not: tuple[Expectation, ...]
    none: bool


def _expectation(raw: dict[str, Any]) -> Expectation:
    kind = raw.get("type") or raw.get("types") or ()
    terms = raw.get("contains") or ()
    return Expectation(frozenset([kind] if isinstance(kind, str) else kind),
                       tuple([terms] if isinstance(terms, str) else terms))


def load_corpus(path: Path) -> list[Case]:
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        raw = json.loads(line)
        if any(isinstance(t, str) and t[1:2] == ":" for t in raw.get("turns", [])):
            cases.append(_extraction_case(raw, n))
            continue
        turns = tuple(("user", t) if isinstance(t, str) else (t.get("role", "user"), t["content"])
                      for t in raw.get("turns") or [raw])
        expect = raw.get("expect") or raw.get("expected") or raw.get("expectations") or []
        cases.append(Case(str(raw.get("id", n)), str(raw.get("lang", "?")), str(raw.get("kind", "?")), turns,
                          tuple(_expectation(e) for e in expect),
                          tuple(_expectation(e) for e in raw.get("must_not") or []), bool(raw.get("none"))))
    return cases


@dataclass
class Tally:
    """What one extractor did over the corpus."""

    held: int = 0
    expected: int = 0
    violations: int = 0
    by_lang: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    turns: int = 0
    extracted_turns: int = 0
    calls: list[LLMCall] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    fallbacks: int = 0
    misses: list[str] = field(default_factory=list)

    def score(self, case: Case, found: list[Candidate]) -> None:
        checks = [not found] if case.none else [any(e.matches(c) for c in found) for e in case.expect]
        self.held += sum(checks)
        self.expected += len(checks)
        self.by_lang[case.lang][0] += sum(checks)
        self.by_lang[case.lang][1] += len(checks)
        broken = sum(any(e.matches(c) for c in found) for e in case.must_not)
        self.violations += broken
        if not all(checks) or broken:
            self.misses.append(f"{case.id}: {[f'{c.type.value}: {c.content}' for c in found]}")


def _turn(case: Case, i: int, role: str, content: str) -> TurnRecorded:
    return TurnRecorded(event_id=f"{case.id}-{i}", occurred_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                        tenant_id="bench", user_id=case.id, agent_id="a", session_id="s", message_id=f"m{i}",
                        role=role, content=content)  # type: ignore[arg-type]


def run(cases: list[Case], extractors: dict[str, Extractor], parallel: int = 1) -> dict[str, Tally]:
    """Each extractor over every case; `parallel` cases in flight at once (the model's server batches them)."""
    tallies = {}
    for name, extractor in extractors.items():
        tally = tallies[name] = Tally()
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            done = pool.map(lambda case: (case, _extract_case(case, extractor)), cases)
            for n, (case, (found, turns)) in enumerate(done, 1):
                for extraction, ms in turns:
                    tally.turn_ms.append(ms)
                    tally.extracted_turns += 1
                    tally.calls.extend(extraction.calls)
                    tally.fallbacks += bool(extraction.calls) and extraction.extractor != "llm"
                tally.turns += len(case.turns)
                tally.score(case, found)
                print(f"[{name} {n}/{len(cases)}] {case.id}", file=sys.stderr, flush=True)
    return tallies


def _extract_case(case: Case, extractor: Extractor) -> tuple[list[Candidate], list[tuple[Extraction, float]]]:
    found: list[Candidate] = []
    turns = []
    for i, (role, content) in enumerate(case.turns):
        if filter_turn(role, content) is not None:  # type: ignore[arg-type]
            continue
        started = time.monotonic()
        extraction = extractor.extract(_turn(case, i, role, content))
        turns.append((extraction, (time.monotonic() - started) * 1000))
        found.extend(extraction.candidates)
    return found, turns


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def failure_kinds(calls: list[LLMCall]) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for call in calls:
        if call.outcome == "ok":
            if call.dropped:
                kinds["schema-invalid calls"] += 1
                kinds["schema-invalid items"] += call.dropped
            continue
        error = call.error.lower()
        kinds["malformed" if error.startswith("malformed") else "timeout" if "timeout" in error
              else "json mode rejected" if error.startswith("json mode") else "other error"] += 1
    return kinds


def summary(name: str, tally: Tally) -> dict[str, Any]:
    latencies = [c.latency_ms for c in tally.calls]
    kinds = failure_kinds(tally.calls)
    return {
        "extractor": name, "expectations_held": tally.held, "expectations": tally.expected,
        "quality": round(tally.held / tally.expected, 3) if tally.expected else 0.0,
        "must_not_violations": tally.violations,
        "by_lang": {lang: f"{h}/{t}" for lang, (h, t) in sorted(tally.by_lang.items())},
        "turns": tally.turns, "extracted_turns": tally.extracted_turns,
        "calls_per_100_turns": round(100 * len(tally.calls) / tally.turns, 1) if tally.turns else 0.0,
        "call_ms_p50": round(_pct(latencies, 50)), "call_ms_p95": round(_pct(latencies, 95)),
        "turn_ms_p50": round(_pct(tally.turn_ms, 50), 1), "turn_ms_p95": round(_pct(tally.turn_ms, 95), 1),
        "tokens_out_mean": round(statistics.mean([c.tokens_out for c in tally.calls]), 1) if tally.calls else 0,
        "malformed": kinds["malformed"], "timeout": kinds["timeout"],
        "schema_invalid_calls": kinds["schema-invalid calls"], "schema_invalid_items": kinds["schema-invalid items"],
        "other_errors": kinds["other error"] + kinds["json mode rejected"], "fallback_turns": tally.fallbacks,
        "misses": tally.misses,
    }


ROWS = [("quality (expectations held)", lambda s: f"{s['expectations_held']}/{s['expectations']} ({s['quality']:.0%})"),
        ("must-not violations", "must_not_violations"), ("per language", lambda s: ", ".join(
            f"{k} {v}" for k, v in s["by_lang"].items())),
        ("turns / reaching the extractor", lambda s: f"{s['turns']} / {s['extracted_turns']}"),
        ("model calls per 100 turns", "calls_per_100_turns"),
        ("latency per call p50 / p95 (ms)", lambda s: f"{s['call_ms_p50']} / {s['call_ms_p95']}"),
        ("latency per extracted turn p50 / p95 (ms)", lambda s: f"{s['turn_ms_p50']} / {s['turn_ms_p95']}"),
        ("answer tokens per call (mean)", "tokens_out_mean"),
        ("malformed answers", "malformed"), ("timeouts", "timeout"),
        ("schema-invalid calls (items dropped)", lambda s: f"{s['schema_invalid_calls']} ({s['schema_invalid_items']})"),
        ("other errors", "other_errors"), ("turns fell back to rules", "fallback_turns")]


def side_by_side(results: list[dict[str, Any]]) -> str:
    rows = [[label, *(key(r) if callable(key) else r[key] for r in results)] for label, key in ROWS]
    return table(["", *(r["extractor"] for r in results)], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=0, help="first N cases only (0 = all)")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--parallel", type=int, default=1, help="cases in flight at once against the model")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the untimed first call per prompt")
    args = parser.parse_args(argv)
    settings = settings_from_env(os.environ)
    if settings is None or not settings.extract_model:
        parser.error("no model configured: eval \"$(deploy/local/llm up)\" first (ENGRAM_LLM_*)")
    cases = load_corpus(args.corpus)[: args.limit or None]
    model = f"model ({settings.extract_model})"
    llm = LLMExtractor(ModelClient(settings), settings.extract_model)
    warm_ms = [] if args.no_warm_up else warm_up(llm)  # not counted: the prompts' prefix cached once
    extractors: dict[str, Extractor] = {"rules": RuleExtractor(), model: llm}
    started = time.monotonic()
    tallies = run(cases, extractors, args.parallel)
    results = [summary(name, tally) for name, tally in tallies.items()]
    print(side_by_side(results))
    if args.show_misses:
        for r in results:
            print(f"\nmisses of {r['extractor']}:\n  " + "\n  ".join(r["misses"]))
    record = {"bench": "llm_extraction", "corpus": str(args.corpus), "cases": len(cases),
              "json_mode": settings.json_mode, "base_url": settings.base_url, "parallel": args.parallel,
              "warm_up_ms": [round(ms) for ms in warm_ms],
              "seconds": round(time.monotonic() - started, 1), "machine": machine_info(), "results": results}
    emit({k: v for k, v in record.items() if k != "results"} | {
        "results": [{k: v for k, v in r.items() if k != "misses"} for r in results]})
    if args.json_out:
        args.json_out.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
