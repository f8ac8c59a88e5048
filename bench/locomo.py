"""Recall quality on LoCoMo, with raw-turn baselines in the same run.

    python -m bench.locomo ../shared/data/locomo/                  # Engram + BM25 + dense + hybrid
    python -m bench.locomo ../shared/data/locomo/ --no-baselines   # Engram only
    python -m bench.locomo DIR --limit-conversations 1 --limit-questions 20
    python -m bench.locomo DIR --embedder hashing --embedder use   # a row per embedder, same run

Each conversation file (`*.json`, LoCoMo-10 layout) becomes ONE user
(tenant `locomo`, user `conv-<file stem>`). Every turn goes through the normal
ingest path (`EmbeddedRuntime.ingest`) as a `user` turn: message id = dia_id,
session = the LoCoMo session key, speaker name in metadata `{"speaker": ...}`,
event time = the session's `session_N_date_time` plus TURN_SPACING per turn,
and an image caption, when there is one, appended as ` [image: caption]`.

Then each question of category 1–4 (5, adversarial, is excluded; questions
without evidence are counted but not scored) is recalled in a fresh session
(`locomo-eval`, so no summary and no recent window) one day after the last
session, with a large result limit and token budget so the cut-offs below are
the benchmark's, not the service's:

- the items, in the order recall returns them, are the ranking (every kind;
  bench/recall_items.py); an item's provenance is its `source_message_ids`;
  a turn shown beside a memory (`context_turns`, the verbatim turns around its
  source turn) follows it as an item of its own, with its one dia_id and its
  own tokens (it takes a rank and budget like a raw turn);
  an item with more than 3 distinct source turns (a summary-like item)
  takes its rank and its tokens but counts for no evidence;
- any@10: share of questions with an evidence dia_id in the provenance of
  one of the top 10 items;
- any@1000tok: the same for the longest prefix of the ranking that fits in
  1,000 tokens (Engram's token estimate, `estimate_tokens`: 4 characters a
  token, a CJK character one); the walk stops at the first item that does not fit.

The answer metric looks at the 1,000-token context the model would get. For
Engram, the question is recalled a second time as a product call would make it:
token budget 1,000 with the item limit lifted (--context-limit, 100) so the
budget binds; the context is the returned `memory_section`. For a baseline, it
is the longest prefix of its ranking that fits, one dated turn a line. Per
system: answer@1000tok (every content word of the gold answer in the context,
bench/answer_metric.py; answers without a content word are not scored),
any_in_context (an evidence turn behind an item of that context) and the mean
and max context size in tokens beside the budget.

Baselines rank the raw turns of the conversation (text `speaker: content`,
the same content Engram ingested), each turn one item with its own dia_id:
BM25 (Okapi, Engram's tokenizer), dense all-MiniLM-L6-v2 (bench/minilm.py,
numpy), and their reciprocal-rank-fusion hybrid (k = 60). In the budget, a
turn is shown with its date, `2023-05-08 speaker: content`, as Engram shows
a memory's date.

Prints one JSON line per (system, conversation) and per system overall, then
tables. Nothing here looks at the question texts beyond passing them to
recall and to the baselines.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_metric import answer_found, context_size, fitting_text, rate  # noqa: E402
from bench.common import emit, machine_info, median, peak_rss_mib, table, timed_ingest  # noqa: E402
from bench.locomo_data import (  # noqa: E402,F401  (re-exported: the loaders were defined here)
    CATEGORIES, TURN_SPACING, Conversation, LocomoTurn, Question, load_conversation, load_folder,
    normalise_evidence, parse_session_time,
)
from bench.recall_items import MAX_EVIDENCE_SPAN, RankedItem, engram_context, ranked_items  # noqa: E402,F401
from engram.core.text import estimate_tokens  # noqa: E402

TENANT = "locomo"
AGENT = "locomo"
EVAL_SESSION = "locomo-eval"
TOP_K = 10
TOKEN_BUDGET = 1000
CONTEXT_LIMIT = 100
LONG_TERM_KINDS = ("profile", "memory")


# -- scoring ---------------------------------------------------------------------------------------------

def chars_to_tokens(text: str) -> int:
    return max(1, estimate_tokens(text))


def score_ranking(items: Sequence[RankedItem], evidence: frozenset[str]) -> dict[str, Any]:
    """any@10, any@1000tok and how many items the 1,000-token prefix held."""
    def hit(item: RankedItem) -> bool:
        return item.counts_as_evidence and bool(item.provenance & evidence)

    at_k = any(hit(i) for i in items[:TOP_K])
    used = in_budget = 0
    at_budget = False
    for item in items:
        if used + item.tokens > TOKEN_BUDGET:
            break
        used += item.tokens
        in_budget += 1
        at_budget = at_budget or hit(item)
    return {"at_10": at_k, "at_1000tok": at_budget, "items_in_budget": in_budget, "tokens_in_budget": used,
            "items": len(items)}


@dataclass(frozen=True)
class Context:
    """The budgeted context of one question: its items and its text."""

    items: tuple[RankedItem, ...]
    text: str


def score_context(context: Context, q: Question) -> dict[str, Any]:
    """The answer metric, an evidence turn behind an item of the context, and the context's size."""
    return {"answer_at_1000tok": answer_found(q.answer, context.text),
            "any_in_context": any(i.counts_as_evidence and bool(i.provenance & q.evidence) for i in context.items),
            "context_tokens": estimate_tokens(context.text)}


def prefix_context(items: Sequence[RankedItem], budget: int = TOKEN_BUDGET) -> Context:
    """The longest prefix of a raw-turn ranking that fits the budget, one item a line."""
    taken, text = fitting_text([i.text for i in items], budget)
    return Context(tuple(items[n] for n in taken), text)


@dataclass
class Tally:
    """Per-question outcomes of one system on one conversation (or overall)."""

    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def add(self, category: int, outcome: dict[str, Any]) -> None:
        self.rows.append((category, outcome))

    def metrics(self) -> dict[str, Any]:
        def block(rows: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
            n = len(rows)
            out = {
                "questions": n,
                "any_at_10": round(sum(o["at_10"] for _, o in rows) / n, 4) if n else None,
                "any_at_1000tok": round(sum(o["at_1000tok"] for _, o in rows) / n, 4) if n else None,
                "answer_at_1000tok": rate(o.get("answer_at_1000tok") for _, o in rows),
                "answer_unscorable": sum(1 for _, o in rows if o.get("answer_at_1000tok", False) is None),
                "any_in_context": rate(o.get("any_in_context") for _, o in rows),
            }
            sizes = [o["context_tokens"] for _, o in rows if "context_tokens" in o]
            if sizes:
                out["context"] = context_size(sizes, TOKEN_BUDGET)
            return out

        out = block(self.rows)
        out["by_category"] = {str(c): block([r for r in self.rows if r[0] == c]) for c in CATEGORIES}
        if self.rows:
            out["mean_items_in_1000tok"] = round(sum(o["items_in_budget"] for _, o in self.rows) / len(self.rows), 1)
            out["empty_rankings"] = sum(1 for _, o in self.rows if o["items"] == 0)
        return out


# -- systems ---------------------------------------------------------------------------------------------

def ingest_conversation(runtime: Any, conv: Conversation) -> dict[str, Any]:
    from engram.schemas.inputs import TurnInput

    inputs = [
        TurnInput(tenant=TENANT, user=conv.user, agent=AGENT, session=t.session, message_id=t.dia_id,
                  role="user", content=t.content, ts=t.ts, metadata={"speaker": t.speaker})
        for t in conv.turns
    ]
    report, seconds, processed = timed_ingest(runtime, inputs, f"conversation {conv.name}")
    memories = runtime.store.list_memories(TENANT, conv.user)
    provenance = {m for r in memories if len(set(r.source_message_ids)) <= MAX_EVIDENCE_SPAN
                  for m in r.source_message_ids}
    coverage = (sum(bool(q.evidence & provenance) for q in conv.questions) / len(conv.questions)
                if conv.questions else None)
    return {"turns": report.received, "appended": report.appended, "processed_turns": processed,
            "evidence_coverage": None if coverage is None else round(coverage, 4),
            "ingest_seconds": round(seconds, 3),
            "events": dict(sorted(report.events.items())), "active_memories": len(memories),
            "persona_memories": sum(1 for m in memories if getattr(m, "layer", "") == "L3")}


def engram_rankings(runtime: Any, conv: Conversation, questions: Sequence[Question], limit: int,
                    budget: int, context_limit: int = CONTEXT_LIMIT
                    ) -> tuple[list[list[RankedItem]], list[Context], dict[str, Any]]:
    """Per question: the ranking (a recall with `limit` and `budget`, large, so the cut-offs are the
    benchmark's) and the context of a recall with the 1,000-token budget and `context_limit` items."""
    from engram.recall.service import RecallRequest

    rankings, contexts, latencies, exceeded = [], [], [], 0
    dia_ids = frozenset(t.dia_id for t in conv.turns)
    for q in questions:
        def recall(message_id: str, limit: int, budget: int) -> Any:
            return runtime.recall(RecallRequest(
                tenant=TENANT, user=conv.user, agent=AGENT, session=EVAL_SESSION, question=q.text,
                now=conv.eval_time, message_id=message_id, limit=limit, token_budget=budget))

        start = time.perf_counter()
        result = recall(f"q{q.index}", limit, budget)
        latencies.append((time.perf_counter() - start) * 1000)
        exceeded += bool(result.deadline_exceeded)
        rankings.append(ranked_items(result.items, dia_ids))
        budgeted = recall(f"q{q.index}-context", context_limit, TOKEN_BUDGET)
        contexts.append(Context(tuple(ranked_items(budgeted.items, dia_ids)), budgeted.memory_section))
    lat = sorted(latencies)
    info = {"recall_p50_ms": round(median(lat), 2),
            "recall_p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2) if lat else 0.0,
            "deadline_exceeded": exceeded}
    return rankings, contexts, info


def baseline_rankings(conv: Conversation, questions: Sequence[Question], dense_model: Any | None
                      ) -> dict[str, list[list[RankedItem]]]:
    from bench.baselines import BM25, Dense, rrf

    docs = [f"{t.speaker}: {t.content}" for t in conv.turns]
    shown = [f"{t.ts:%Y-%m-%d} {d}" for t, d in zip(conv.turns, docs)]
    items = [RankedItem(frozenset({t.dia_id}), chars_to_tokens(text), text) for t, text in zip(conv.turns, shown)]
    bm25 = BM25(docs)
    out: dict[str, list[list[RankedItem]]] = {"bm25": []}
    sparse = [bm25.rank(q.text) for q in questions]
    out["bm25"] = [[items[i] for i in r] for r in sparse]
    if dense_model is not None:
        dense = Dense(dense_model.encode(docs))
        qvecs = dense_model.encode([q.text for q in questions])
        dense_ranks = [dense.rank(v) for v in qvecs]
        out["dense_minilm"] = [[items[i] for i in r] for r in dense_ranks]
        out["hybrid_rrf"] = [[items[i] for i in rrf(s, d)] for s, d in zip(sparse, dense_ranks)]
    return out


# -- main ------------------------------------------------------------------------------------------------

BASELINES = ("bm25", "dense_minilm", "hybrid_rrf")
PUBLISHED_BASELINES = {  # the raw-turn baselines as published for all ten conversations, 1,536 questions
    "bm25": (0.573, 0.694), "dense_minilm": (0.516, 0.717), "hybrid_rrf": (0.604, 0.779),
}


def engine_name(kind: str, turns: int, profile: bool) -> str:
    """The row name of an Engram variant: `engram[hashing]`, `engram[use,context_turns=1,profile=off]`."""
    parts = [kind, *([f"context_turns={turns}"] if turns else []), *([] if profile else ["profile=off"])]
    return f"engram[{','.join(parts)}]"


def run(folder: Path, *, baselines: bool = True, dense: bool = True, limit_conversations: int | None = None,
        limit_questions: int | None = None, recall_limit: int = 200, recall_budget: int = 100_000,
        candidate_limit: int | None = None, deadline_ms: float = 5000.0, data_dir: Path | None = None,
        model_dir: str | None = None, out: Any = None, embedders: Sequence[str] = ("hashing",),
        context_turns: Sequence[int] = (0,), context_limit: int = CONTEXT_LIMIT,
        profiles: Sequence[bool] = (True,)) -> list[dict[str, Any]]:
    """Run the benchmark; emit and return the JSON records. One Engram row per embedder, `context_turns`
    value (recall.context_turns_top: 0 is the product default, raw turns not quoted) and profile setting
    (False: no standing profile pushed, recall.profile_share 0)."""
    from engram.runtime.engine import EmbeddedRuntime

    records: list[dict[str, Any]] = []

    def record(rec: dict[str, Any]) -> None:
        records.append(rec)
        emit(rec, out)

    conversations = load_folder(folder, limit_conversations)
    dense_model, dense_error = None, None
    if baselines and not dense:
        dense_error = "disabled (--no-dense)"
    elif baselines:
        try:
            from bench.minilm import MiniLM

            dense_model = MiniLM(model_dir)
        except Exception as exc:  # the dense route is optional; say exactly why it is missing
            dense_error = f"{type(exc).__name__}: {exc}"
    settings = {
        "kind": "locomo_run", "folder": str(folder), "conversations": [c.name for c in conversations],
        "top_k": TOP_K, "token_budget": TOKEN_BUDGET, "token_rule": "engram.core.text.estimate_tokens",
        "context_limit": context_limit,
        "max_evidence_span": MAX_EVIDENCE_SPAN, "recall_limit": recall_limit, "recall_token_budget": recall_budget,
        "candidate_limit": candidate_limit or "default", "deadline_ms": deadline_ms,
        "baselines": baselines, "dense": (str(dense_model.model_dir) if dense_model else dense_error),
        "embedders": list(embedders), "context_turns": list(context_turns),
        "machine": machine_info(),
    }
    record(settings)

    tallies: dict[str, dict[str, Tally]] = defaultdict(dict)
    conv_info: dict[str, dict[str, Any]] = {}
    variants = [(kind, turns, profile) for kind in embedders for turns in context_turns for profile in profiles]
    engines = [engine_name(kind, turns, profile) for kind, turns, profile in variants]
    systems_order = (*engines, *BASELINES)
    with tempfile.TemporaryDirectory(prefix="engram-locomo-") as tmp:
        for (kind, turns, profile), engine in zip(variants, engines):
            name = f"{kind}-{turns}" + ("" if profile else "-profile-off")
            folder = (data_dir / name) if data_dir else Path(tmp) / name
            runtime = EmbeddedRuntime(folder, ctx=engram_context(candidate_limit, deadline_ms, kind, turns, profile))
            try:
                for conv in conversations:
                    questions = conv.questions[:limit_questions] if limit_questions else conv.questions
                    info = ingest_conversation(runtime, conv)
                    ranks, contexts, recall_info = engram_rankings(runtime, conv, questions, recall_limit,
                                                                   recall_budget, context_limit)
                    info.update(recall_info)
                    info["skipped_no_evidence"] = conv.skipped_no_evidence
                    info["skipped_category_5"] = conv.skipped_category_5
                    conv_info[f"{conv.name} {engine}"] = info
                    _tally(tallies, engine, conv, questions, ranks, contexts, record, info)
            finally:
                runtime.close()
        if baselines:
            for conv in conversations:
                questions = conv.questions[:limit_questions] if limit_questions else conv.questions
                for system, rankings in baseline_rankings(conv, questions, dense_model).items():
                    contexts = [prefix_context(r) for r in rankings]
                    _tally(tallies, system, conv, questions, rankings, contexts, record, None)

    overall: dict[str, dict[str, Any]] = {}
    for system in systems_order:
        if system not in tallies:
            continue
        merged = Tally([row for t in tallies[system].values() for row in t.rows])
        overall[system] = merged.metrics()
        rec = {"kind": "locomo_result", "system": system, "conversation": "all", **overall[system]}
        if system in PUBLISHED_BASELINES:
            rec["published_reference"] = dict(zip(("any_at_10", "any_at_1000tok"), PUBLISHED_BASELINES[system]))
        if system.startswith("engram"):
            rec["peak_rss_mib"] = peak_rss_mib()
        record(rec)

    _print_tables(tallies, overall, conv_info, settings, out, systems_order)
    return records


def _tally(tallies: dict[str, dict[str, Tally]], system: str, conv: Conversation, questions: Sequence[Question],
           rankings: list[list[RankedItem]], contexts: list[Context], record: Any,
           info: dict[str, Any] | None) -> None:
    tally = Tally()
    for q, ranking, context in zip(questions, rankings, contexts):
        tally.add(q.category, score_ranking(ranking, q.evidence) | score_context(context, q))
    tallies[system][conv.name] = tally
    rec = {"kind": "locomo_result", "system": system, "conversation": conv.name, **tally.metrics()}
    if info is not None:
        rec["engram"] = info
    record(rec)


def _print_tables(tallies: dict[str, dict[str, Tally]], overall: dict[str, dict[str, Any]],
                  conv_info: dict[str, dict[str, Any]], settings: dict[str, Any], out: Any,
                  systems: Sequence[str]) -> None:
    stream = out or sys.stdout
    rows = []
    for system in systems:
        if system not in tallies:
            continue
        for name, tally in tallies[system].items():
            rows.append([system, name, *_row(tally.metrics()), ""])
        ref = PUBLISHED_BASELINES.get(system)
        rows.append([system, "all", *_row(overall[system]),
                     f"{ref[0]:.3f} / {ref[1]:.3f}" if ref else ("0.75 / 0.90 target" if system.startswith("engram") else "")])
    print(file=stream)
    print(table(["system", "conv", "questions", "any@10", "any@1000tok", "answer@1000tok", "in context",
                 f"context tokens mean / max / {TOKEN_BUDGET}", "published (10 convs)"], rows), file=stream)
    cat_rows = []
    for system in systems:
        if system in overall:
            cats = overall[system]["by_category"]
            cat_rows.append([system] + [f"{cats[str(c)]['any_at_10']} / {cats[str(c)]['any_at_1000tok']} / "
                                        f"{cats[str(c)]['answer_at_1000tok']} (n={cats[str(c)]['questions']})"
                                        for c in CATEGORIES])
    print(file=stream)
    print(table(["system"] + [f"cat {c}: any@10 / any@1000tok / answer" for c in CATEGORIES], cat_rows),
          file=stream)
    print(file=stream)
    print(table(["conv", "turns", "ingest s", "memories", "persona", "evidence coverage", "recall p50 ms",
                 "deadline hit"],
                [[n, i["turns"], i["ingest_seconds"], i["active_memories"], i["persona_memories"],
                  i["evidence_coverage"], i["recall_p50_ms"], i["deadline_exceeded"]] for n, i in conv_info.items()]),
          file=stream)
    m = settings["machine"]
    print(f"\nmachine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu_model']}; dense: {settings['dense']}",
          file=stream)


def _row(m: dict[str, Any]) -> list[Any]:
    ctx = m.get("context")
    size = f"{ctx['mean_tokens']} / {ctx['max_tokens']}" + (f" ({ctx['over_budget']} over)" if ctx["over_budget"]
                                                            else "") if ctx else ""
    return [m["questions"], m["any_at_10"], m["any_at_1000tok"], m["answer_at_1000tok"], m["any_in_context"], size]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="LoCoMo evidence recall")
    parser.add_argument("folder", type=Path, help="folder of LoCoMo conversation files (*.json)")
    parser.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                        help="also rank raw turns with BM25, dense MiniLM and their RRF hybrid")
    parser.add_argument("--dense", action=argparse.BooleanOptionalAction, default=True,
                        help="include the dense MiniLM baseline and the hybrid (needs the model weights)")
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--limit-questions", type=int, default=None, help="scored questions per conversation")
    parser.add_argument("--recall-limit", type=int, default=200, help="RecallRequest.limit (memory items)")
    parser.add_argument("--recall-budget", type=int, default=100_000, help="RecallRequest.token_budget")
    parser.add_argument("--candidate-limit", type=int, default=None,
                        help="override config recall.candidate_limit (default: the product's)")
    parser.add_argument("--deadline-ms", type=float, default=5000.0,
                        help="recall deadline for this run (quality, not latency, is measured here)")
    parser.add_argument("--embedder", action="append", default=None, choices=("hashing", "use"),
                        help="Engram's embedder (repeat for a row per embedder; default: hashing)")
    parser.add_argument("--context-turns", type=int, action="append", default=None,
                        help="recall.context_turns_top (repeat for a row per value; default 0, the product's: "
                             "the opt-in quoting of the turns around the best memories' source turns)")
    parser.add_argument("--context-limit", type=int, default=CONTEXT_LIMIT,
                        help="item limit of the 1,000-token recall the answer metric reads (lifted so the budget binds)")
    parser.add_argument("--data", type=Path, default=None, help="keep the Engram data folder here")
    parser.add_argument("--model-dir", default=None, help="all-MiniLM-L6-v2 folder (default: the packaged one)")
    parser.add_argument("--profile", choices=("on", "off", "both"), default="on",
                        help="the standing profile pushed (on), not (off: recall.profile_share 0), or a row of each")
    args = parser.parse_args(argv)
    run(args.folder, baselines=args.baselines, dense=args.dense, limit_conversations=args.limit_conversations,
        limit_questions=args.limit_questions, recall_limit=args.recall_limit, recall_budget=args.recall_budget,
        candidate_limit=args.candidate_limit, deadline_ms=args.deadline_ms, data_dir=args.data,
        model_dir=args.model_dir, embedders=tuple(args.embedder or ("hashing",)),
        context_turns=tuple(args.context_turns or (0,)), context_limit=args.context_limit,
        profiles={"on": (True,), "off": (False,), "both": (True, False)}[args.profile])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
