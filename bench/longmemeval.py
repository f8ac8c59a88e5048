"""Recall quality on LongMemEval_S: session, turn and answer recall, with BM25 baselines in the same run.

    python -m bench.longmemeval                                   # the 50 dev questions, hashing
    python -m bench.longmemeval --limit 5 --embedder use
    python -m bench.longmemeval --data PATH/longmemeval_s.json --no-baselines

The default data file is `shared/data/longmemeval/longmemeval_s_dev50.json`
in the folder the repository is cloned beside (`../shared`, looked for upwards
from the repository).

Each question is one user of its own tenant. Every haystack turn (user and
assistant) goes through the normal ingest path (`EmbeddedRuntime.ingest`) with
its role, its session id, message id `<session>:<index in session>` and event
time = the session's date (`haystack_dates`, "2023/05/20 (Sat) 02:21") plus
TURN_SPACING per turn. Turns with no visible character are skipped, turns
longer than MAX_TURN_CHARS are cut to it. Then the question is recalled in a
new session at its `question_date`, with the item limit lifted (--recall-limit,
100) so the token budget (--token-budget, 1,000) binds.

The ranking is the recalled items in recall order (bench/recall_items.py:
provenance = source message ids, a summary-like item counts for no evidence);
an item's sessions are the sessions of its provenance.

- s@1: the first item's sessions include an evidence session;
- all@5 / s@5 / s@10: every / an evidence session among the first 5 / 5 / 10
  distinct sessions of the ranking;
- t@10: a `has_answer` turn in the provenance of one of the first 10 items;
- ev1k: an evidence session behind an item of the context (Engram: every
  item the recall returned within the budget; baselines: the longest prefix of
  the ranking that fits in the budget);
- ans1k: every content word of the gold answer in that context
  (bench/answer_metric.py; answers without a content word are not scored).

Baselines, same run: BM25 (Engram's tokenizer) over whole sessions (the
session metrics) and over rounds, a user turn with the assistant reply after
it, as `<date> user: … / assistant: …` (every metric). Prints one JSON line per
question and system, per system and question type, and per system overall,
then tables with the mean and max context size beside the budget.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_metric import answer_found, context_size, fitting_text, rate  # noqa: E402
from bench.common import emit, machine_info, median, peak_rss_mib, table, timed_ingest  # noqa: E402
from bench.lme_data import LmeQuestion, default_data_path, load_questions  # noqa: E402
from bench.recall_items import RankedItem, engram_context, ranked_items  # noqa: E402

AGENT = "assistant"
USER = "user"
EVAL_SESSION = "lme-eval"
TOKEN_BUDGET = 1000
RECALL_LIMIT = 100
METRICS = ("s_at_1", "all_at_5", "s_at_5", "s_at_10", "t_at_10", "ev_1k", "ans_1k")
HEADERS = ("s@1", "all@5", "s@5", "s@10", "t@10", "ev1k", "ans1k")
SESSION_METRICS = METRICS[:4]


# -- scoring -------------------------------------------------------------------------------------------

def session_order(item_sessions: Sequence[set[str]]) -> list[str]:
    """Distinct sessions in order of first appearance in the ranking."""
    seen: dict[str, None] = {}
    for sessions in item_sessions:
        for session in sorted(sessions):
            seen.setdefault(session, None)
    return list(seen)


def session_scores(q: LmeQuestion, item_sessions: Sequence[set[str]]) -> dict[str, Any]:
    """s@1, all@5, s@5 and s@10 of a ranking given as the evidence sessions behind each item."""
    evidence = q.evidence_sessions
    order = session_order(item_sessions)
    return {
        "s_at_1": bool(item_sessions) and bool(item_sessions[0] & evidence),
        "all_at_5": bool(evidence) and evidence <= set(order[:5]),
        "s_at_5": bool(evidence & set(order[:5])),
        "s_at_10": bool(evidence & set(order[:10])),
    }


def score(q: LmeQuestion, items: Sequence[RankedItem], in_context: Sequence[RankedItem], context: str
          ) -> dict[str, Any]:
    """The metrics of one ranking; `in_context` are the items of the budgeted context whose text is `context`."""
    out = session_scores(q, [q.sessions_of(item.evidence) for item in items])
    out["t_at_10"] = any(item.evidence & q.answer_turns for item in items[:10])
    out["ev_1k"] = any(q.sessions_of(item.evidence) & q.evidence_sessions for item in in_context)
    out["ans_1k"] = answer_found(q.answer, context)
    out["context_tokens"] = estimate(context)
    out["items_in_context"] = len(in_context)
    return out


def estimate(text: str) -> int:
    from engram.core.text import estimate_tokens

    return estimate_tokens(text)


def summarise(rows: Sequence[dict[str, Any]], budget: int) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for metric in METRICS:
        out[metric] = rate(r.get(metric) for r in rows)
    out["ans_unscorable"] = sum(1 for r in rows if "ans_1k" in r and r["ans_1k"] is None and "context_tokens" in r)
    sizes = [r["context_tokens"] for r in rows if "context_tokens" in r]
    if sizes:
        out["context"] = context_size(sizes, budget)
    return out


# -- Engram ----------------------------------------------------------------------------------------------

def ingest(runtime: Any, q: LmeQuestion) -> dict[str, Any]:
    from engram.schemas.inputs import TurnInput

    inputs = [TurnInput(tenant=q.tenant, user=USER, agent=AGENT, session=t.session, message_id=t.message_id,
                        role=t.role, content=t.content, ts=t.ts) for t in q.turns]
    _, seconds, processed = timed_ingest(runtime, inputs, q.question_id)
    return {"turns": len(inputs), "skipped_invisible": q.skipped_invisible, "cut_long": q.cut_long,
            "processed_turns": processed, "ingest_seconds": round(seconds, 3),
            "turns_per_s": round(len(inputs) / seconds, 1) if seconds else None,
            "active_memories": len(runtime.store.list_memories(q.tenant, USER))}


def engram_outcome(runtime: Any, q: LmeQuestion, limit: int, budget: int) -> tuple[dict[str, Any], float]:
    from engram.recall.service import RecallRequest

    start = time.perf_counter()
    result = runtime.recall(RecallRequest(tenant=q.tenant, user=USER, agent=AGENT, session=EVAL_SESSION,
                                          question=q.question, now=q.asked_at, message_id="question",
                                          limit=limit, token_budget=budget))
    ms = (time.perf_counter() - start) * 1000
    items = ranked_items(result.items, q.message_ids)
    outcome = score(q, items, items, result.memory_section)
    outcome["deadline_exceeded"] = bool(result.deadline_exceeded)
    outcome["kinds"] = sorted({i.kind for i in result.items})
    return outcome, ms


# -- baselines ------------------------------------------------------------------------------------------

def baseline_outcomes(q: LmeQuestion, budget: int) -> dict[str, dict[str, Any]]:
    from bench.baselines import BM25

    sessions = q.session_documents()
    ranked = BM25([text for _, text in sessions]).rank(q.question)
    out = {"bm25_sessions": session_scores(q, [{sessions[i][0]} for i in ranked])
           | {"t_at_10": None, "ev_1k": None, "ans_1k": None}}

    rounds = q.rounds()
    ranked = BM25([text for _, text in rounds]).rank(q.question)
    round_items = [RankedItem(ids, estimate(text), text) for ids, text in (rounds[i] for i in ranked)]
    taken, context = fitting_text([i.text for i in round_items], budget)
    out["bm25_rounds"] = score(q, round_items, [round_items[n] for n in taken], context)
    return out


# -- run --------------------------------------------------------------------------------------------------

@dataclass
class Results:
    rows: dict[str, list[tuple[str, dict[str, Any]]]]

    def add(self, system: str, q: LmeQuestion, outcome: dict[str, Any]) -> None:
        self.rows.setdefault(system, []).append((q.question_type, outcome))


def run(data: Path, *, limit: int | None = None, embedders: Sequence[str] = ("hashing",), baselines: bool = True,
        recall_limit: int = RECALL_LIMIT, token_budget: int = TOKEN_BUDGET, deadline_ms: float = 5000.0,
        candidate_limit: int | None = None, context_turns: int = 0, data_dir: Path | None = None,
        out: Any = None, profiles: Sequence[bool] = (True,)) -> list[dict[str, Any]]:
    from engram.runtime.engine import EmbeddedRuntime

    records: list[dict[str, Any]] = []

    def record(rec: dict[str, Any]) -> None:
        records.append(rec)
        emit(rec, out)

    questions = load_questions(data, limit)
    record({"kind": "lme_run", "data": str(data), "questions": len(questions), "embedders": list(embedders),
            "recall_limit": recall_limit, "token_budget": token_budget, "deadline_ms": deadline_ms,
            "candidate_limit": candidate_limit or "default", "context_turns": context_turns,
            "turns": sum(len(q.turns) for q in questions), "baselines": baselines, "machine": machine_info()})
    results = Results({})
    info: dict[str, dict[str, Any]] = {}
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="engram-lme-") as tmp:
        for kind, profile in ((k, p) for k in embedders for p in profiles):
            system = f"engram[{kind}]" if profile else f"engram[{kind},profile=off]"
            folder = (data_dir or Path(tmp)) / (kind if profile else f"{kind}-profile-off")
            runtime = EmbeddedRuntime(folder, ctx=engram_context(candidate_limit, deadline_ms, kind, context_turns,
                                                                 profile))
            latencies: list[float] = []
            ingest_seconds = turns = 0.0
            try:
                for n, q in enumerate(questions, start=1):
                    ingested = ingest(runtime, q)
                    outcome, ms = engram_outcome(runtime, q, recall_limit, token_budget)
                    latencies.append(ms)
                    ingest_seconds += ingested["ingest_seconds"]
                    turns += ingested["turns"]
                    results.add(system, q, outcome)
                    record({"kind": "lme_question", "system": system, "question_id": q.question_id,
                            "question_type": q.question_type, **outcome, "ingest": ingested,
                            "recall_ms": round(ms, 1)})
                    print(f"[{system} {n}/{len(questions)}] {q.question_id}: {ingested['turns']} turns in "
                          f"{ingested['ingest_seconds']:.1f} s ({ingested['turns_per_s']} turns/s), "
                          f"{ingested['active_memories']} memories, recall {ms:.0f} ms; "
                          f"elapsed {time.perf_counter() - wall:.0f} s", file=sys.stderr, flush=True)
            finally:
                runtime.close()
            lat = sorted(latencies)
            info[system] = {"turns": int(turns), "ingest_seconds": round(ingest_seconds, 1),
                            "turns_per_s": round(turns / ingest_seconds, 1) if ingest_seconds else None,
                            "recall_p50_ms": round(median(lat), 1),
                            "recall_p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1) if lat else None,
                            "peak_rss_mib": peak_rss_mib()}
    if baselines:
        for q in questions:
            for system, outcome in baseline_outcomes(q, token_budget).items():
                results.add(system, q, outcome)
                record({"kind": "lme_question", "system": system, "question_id": q.question_id,
                        "question_type": q.question_type, **outcome})
    seconds = time.perf_counter() - wall
    summaries = _summaries(results, token_budget, info, record)
    _print_tables(summaries, info, token_budget, seconds, out)
    return records


def _summaries(results: Results, budget: int, info: dict[str, dict[str, Any]], record: Any
               ) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for system, rows in results.rows.items():
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for question_type, outcome in rows:
            by_type[question_type].append(outcome)
        overall = summarise([o for _, o in rows], budget)
        overall["by_type"] = {t: summarise(r, budget) for t, r in sorted(by_type.items())}
        if system in info:
            overall["engram"] = info[system]
        out[system] = overall
        record({"kind": "lme_result", "system": system, **overall})
    return out


def _print_tables(summaries: dict[str, dict[str, Any]], info: dict[str, dict[str, Any]], budget: int,
                  seconds: float, out: Any) -> None:
    stream = out or sys.stdout

    def cells(m: dict[str, Any]) -> list[Any]:
        return ["—" if m[k] is None else m[k] for k in METRICS]

    rows = []
    for system, m in summaries.items():
        ctx = m.get("context")
        rows.append([system, "all", m["questions"], *cells(m),
                     f"{ctx['mean_tokens']} / {ctx['max_tokens']} / {budget}" if ctx else "—"])
        for question_type, t in m["by_type"].items():
            ctx = t.get("context")
            rows.append(["", question_type, t["questions"], *cells(t),
                         f"{ctx['mean_tokens']} / {ctx['max_tokens']}" if ctx else "—"])
    print(file=stream)
    print(table(["system", "type", "n", *HEADERS, "context tokens mean / max / budget"], rows), file=stream)
    if info:
        print(file=stream)
        print(table(["system", "turns", "ingest s", "turns/s", "recall p50 ms", "recall p95 ms", "peak RSS MiB"],
                    [[s, i["turns"], i["ingest_seconds"], i["turns_per_s"], i["recall_p50_ms"], i["recall_p95_ms"],
                      i["peak_rss_mib"]] for s, i in info.items()]), file=stream)
    print(f"\nrun: {seconds:.0f} s wall", file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="LongMemEval_S session, turn and answer recall")
    parser.add_argument("--data", type=Path, default=None, help="LongMemEval_S JSON file (default: the dev split)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--embedder", action="append", default=None, choices=("hashing", "use"),
                        help="Engram's embedder (repeat for a row per embedder; default: hashing)")
    parser.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                        help="also rank with BM25 over sessions and over rounds")
    parser.add_argument("--engram", action=argparse.BooleanOptionalAction, default=True,
                        help="run Engram (--no-engram: the baselines alone)")
    parser.add_argument("--recall-limit", type=int, default=RECALL_LIMIT, help="RecallRequest.limit (items)")
    parser.add_argument("--token-budget", type=int, default=TOKEN_BUDGET,
                        help="RecallRequest.token_budget, and the baselines' context budget")
    parser.add_argument("--deadline-ms", type=float, default=5000.0,
                        help="recall deadline for this run (quality, not latency, is measured here)")
    parser.add_argument("--candidate-limit", type=int, default=None,
                        help="override config recall.candidate_limit (default: the product's)")
    parser.add_argument("--context-turns", type=int, default=0, help="recall.context_turns_top (default 0)")
    parser.add_argument("--keep-data", type=Path, default=None, help="keep the Engram data folders here")
    parser.add_argument("--profile", choices=("on", "off", "both"), default="on",
                        help="the standing profile pushed (on), not (off: recall.profile_share 0), or a row of each")
    args = parser.parse_args(argv)
    data = args.data or default_data_path()
    if not data.is_file():
        parser.error(f"no LongMemEval file at {data} (give --data PATH)")
    embedders = tuple(args.embedder or ("hashing",)) if args.engram else ()
    run(data, limit=args.limit, embedders=embedders, baselines=args.baselines, recall_limit=args.recall_limit,
        token_budget=args.token_budget, deadline_ms=args.deadline_ms, candidate_limit=args.candidate_limit,
        context_turns=args.context_turns, data_dir=args.keep_data,
        profiles={"on": (True,), "off": (False,), "both": (True, False)}[args.profile])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
