"""How much the LLM path is used on a generated workload (model calls per task and turn).

Runs the synthetic traffic of `bench/synthetic.py` through the embedded
runtime with every chat task on the scripted OpenAI-compatible server of the
tests (real `openai` client, loopback HTTP), and reports from the event log:

- the share of merge decisions (one per consolidated candidate) for which the
  rules deferred and the judge was asked (target <= 20 %), and judge calls;
- LLM calls per 100 turns, per task (every call is an `LLMCallRecorded` event).

Three scripted extraction models bracket real ones: `topics` answers like
the rule extractor, with topic and negation (what the prompt asks for);
`bare` gives type, attribute and content only, and the extractor fills the
labels from the rule candidate saying the same thing (the default);
`unlabelled` is `bare` with that labelling off: the worst case, where every
pair without a topic and with some character overlap goes to the judge.
The judge answers by stance; the summarizer echoes user lines.

    python -m bench.llm_share                  # 2,000 turns, the three models
    python -m bench.llm_share --turns 5000 --model bare
    python -m bench.llm_share --model topics --answer-cache 10000   # calls with the answer memory on
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import emit, table
from bench.synthetic import generate_turns
from engram.llm.context import llm_context
from engram.llm.extractor import LLMExtractor
from engram.llm.settings import LLMSettings
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import LLMCallRecorded
from tests.llm.models import echo_extractor, section_summarizer, stance_judge
from tests.llm.scripted_server import ScriptedServer

MODELS = {"topics": (False, True), "bare": (True, True), "unlabelled": (True, False)}
"""model -> (answers without topic/negation, extractor labels from the rules)"""


def measure(turns: int, seed: int, model: str, answer_cache: int = 0) -> dict[str, Any]:
    """Ingest the generated turns against the scripted server; count decisions and calls.

    The answer memory is off by default: an answer from memory makes no call
    and so no event, and the share is counted from the judge's call events.
    """
    traffic = generate_turns(turns, seed=seed)
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as folder:
        bare, labelled = MODELS[model]
        server.route("extract", echo_extractor(bare=bare))
        server.route("judge", stance_judge)
        server.route("summarize", section_summarizer)
        settings = LLMSettings(base_url=server.base_url, api_key="bench", extract_model="extract",
                               judge_model="judge", summarize_model="summarize", timeout_s=5.0,
                               answer_cache=answer_cache)
        ctx = llm_context(settings)
        assert isinstance(ctx.extractor, LLMExtractor)
        client = ctx.extractor.client
        ctx = replace(ctx, extractor=LLMExtractor(client, "extract", label_with_rules=labelled))
        started = time.perf_counter()
        with EmbeddedRuntime(Path(folder), ctx=ctx) as runtime:
            runtime.ingest(traffic)
            record = _counts(runtime, turns)
        record["answers_from_memory"] = client.cache_hits
        record.update(model=model, seed=seed, answer_cache=answer_cache, seconds=round(time.perf_counter() - started, 2),
                      requests_received=len(server.requests))
    return record


def _counts(runtime: EmbeddedRuntime, turns: int) -> dict[str, Any]:
    calls = [e for _, e in runtime.log.scan(types=("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]
    decisions = runtime.log.count(("MemoryProposed",))
    judged = {c.causation_ids[0] for c in calls if c.task == "judge"}
    by_task = Counter(c.task for c in calls)
    outcomes = Counter(c.outcome for c in calls)
    per_100 = {task: round(100 * n / turns, 1) for task, n in sorted(by_task.items())}
    return {
        "turns": turns,
        "merge_decisions": decisions,
        "decisions_needing_llm": len(judged),
        "llm_decision_share": round(len(judged) / decisions, 4) if decisions else 0.0,
        "judge_calls": by_task["judge"],
        "llm_calls": len(calls),
        "llm_calls_per_100_turns": round(100 * len(calls) / turns, 1),
        "calls_per_100_turns_by_task": per_100,
        "outcomes": dict(outcomes),
        "tokens_in": sum(c.tokens_in for c in calls),
        "tokens_out": sum(c.tokens_out for c in calls),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", choices=[*MODELS, "all"], default="all")
    parser.add_argument("--answer-cache", type=int, default=0,
                        help="answers remembered per process (the product default is 10000; 0 counts every call)")
    args = parser.parse_args(argv)
    models = MODELS if args.model == "all" else [args.model]
    records = [measure(args.turns, args.seed, m, args.answer_cache) for m in models]
    for record in records:
        emit(record)
    print(table(
        ["model", "turns", "decisions", "needed LLM", "share", "calls/100 turns", "extract", "judge", "summarize"],
        [[r["model"], r["turns"], r["merge_decisions"], r["decisions_needing_llm"],
          f"{100 * r['llm_decision_share']:.1f} %", f"{r['llm_calls_per_100_turns']:.1f}",
          *(f"{r['calls_per_100_turns_by_task'].get(t, 0):.1f}" for t in ("extract", "judge", "summarize"))]
         for r in records],
    ))


if __name__ == "__main__":
    main()
