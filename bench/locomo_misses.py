"""Why LoCoMo questions miss: counts by category, never a question text.

    python -m bench.locomo_misses ../shared/data/locomo/ --embedder hashing

Every scored question whose evidence is not within the 1,000-token prefix of
Engram's ranking falls in exactly one bucket:

- `uncovered`: no active memory (with at most 3 source turns) has an evidence
  turn in its provenance: no ranking can find it (the extraction ceiling);
- `not_retrieved`: a covering memory exists but recall did not return it at
  all (neither channel found it, or it fell under `min_score`);
- `below_budget`: recall returned a covering memory, past the budget; the
  record gives the rank and the token offset of the first covering item.

And, over the 1,000-token prefixes of all questions: the share of tokens
spent on persona items, on items that repeat an earlier item of the prefix
(same source turn, or content term overlap >= 0.8), and on items longer than
twice the median item. These say whether long or duplicate items crowd the
budget. Aggregates only: the output names no question and no memory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit  # noqa: E402
from bench.locomo import (  # noqa: E402
    AGENT, EVAL_SESSION, LONG_TERM_KINDS, MAX_EVIDENCE_SPAN, TENANT, TOKEN_BUDGET, chars_to_tokens,
    engram_context, load_folder,
)


@dataclass(frozen=True)
class _Shown:
    kind: str
    text: str
    source_message_ids: tuple[str, ...]


def _flatten(items: list[Any]) -> list[_Shown]:
    """Long-term items in order, each followed by the turns shown beside it (as bench.locomo ranks them)."""
    out = []
    for i in items:
        if i.kind in LONG_TERM_KINDS:
            out.append(_Shown(i.kind, i.text, tuple(i.source_message_ids)))
            out.extend(_Shown("turn", t, (m,)) for m, t in getattr(i, "context_turns", ()))
    return out


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def analyse(folder: Path, embedder: str, candidate_limit: int | None = None) -> dict[str, Any]:
    from engram.core.text import terms
    from engram.recall.service import RecallRequest
    from engram.runtime.engine import EmbeddedRuntime
    from engram.schemas.inputs import TurnInput

    buckets: Counter[str] = Counter()
    ranks: list[int] = []
    offsets: list[int] = []
    spend: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="engram-locomo-misses-") as tmp:
        runtime = EmbeddedRuntime(Path(tmp), ctx=engram_context(candidate_limit, 5000.0, embedder))
        try:
            for conv in load_folder(folder):
                runtime.ingest([
                    TurnInput(tenant=TENANT, user=conv.user, agent=AGENT, session=t.session, message_id=t.dia_id,
                              role="user", content=t.content, ts=t.ts, metadata={"speaker": t.speaker})
                    for t in conv.turns])
                memories = runtime.store.list_memories(TENANT, conv.user)
                order = {t.dia_id: (t.session, n) for n, t in enumerate(conv.turns)}
                covered = {m for r in memories if len(set(r.source_message_ids)) <= MAX_EVIDENCE_SPAN
                           for m in r.source_message_ids}
                for q in conv.questions:
                    result = runtime.recall(RecallRequest(
                        tenant=TENANT, user=conv.user, agent=AGENT, session=EVAL_SESSION, question=q.text,
                        now=conv.eval_time, message_id=f"q{q.index}", limit=200, token_budget=100_000))
                    items = _flatten(result.items)
                    _spend(items, spend, terms)
                    outcome = _bucket(items, q.evidence, covered)
                    buckets[outcome[0]] += 1
                    if outcome[0] == "below_budget":
                        ranks.append(outcome[1])
                        offsets.append(outcome[2])
                    buckets[f"cat{q.category}:{outcome[0]}"] += 1
                    if outcome[0] == "uncovered":
                        buckets[f"uncovered_neighbour:{_neighbour_rank(items, q.evidence, order)}"] += 1
        finally:
            runtime.close()
    total = sum(v for k, v in buckets.items() if ":" not in k)
    return {"kind": "locomo_misses", "embedder": embedder, "questions": total,
            "buckets": dict(sorted(buckets.items())),
            "below_budget_ranks": sorted(ranks), "below_budget_token_offsets": sorted(offsets),
            "prefix_tokens": dict(spend),
            "prefix_share": {k: round(v / spend["all"], 3) for k, v in spend.items() if spend["all"]}}


def _bucket(items: list[Any], evidence: frozenset[str], covered: set[str]) -> tuple[str, int, int]:
    used = 0
    for rank, item in enumerate(items):
        provenance = set(item.source_message_ids)
        hit = 0 < len(provenance) <= MAX_EVIDENCE_SPAN and bool(provenance & evidence)
        tokens = chars_to_tokens(item.text)
        if hit:
            return ("hit", rank, used) if used + tokens <= TOKEN_BUDGET else ("below_budget", rank, used)
        used += tokens
    return ("not_retrieved", -1, -1) if evidence & covered else ("uncovered", -1, -1)


def _neighbour_rank(items: list[Any], evidence: frozenset[str], order: dict[str, tuple[str, int]]) -> str:
    """Where the first item whose source turn is next to (same session, +-1) an evidence turn ranks."""
    near = {(order[e][0], order[e][1] + d) for e in evidence if e in order for d in (-1, 1)}
    for rank, item in enumerate(items):
        if any(order.get(m) in near for m in item.source_message_ids):
            return "top3" if rank < 3 else "top10" if rank < 10 else "deeper"
    return "none"


def _spend(items: list[Any], spend: Counter[str], terms: Any) -> None:
    prefix, used = [], 0
    for item in items:
        tokens = chars_to_tokens(item.text)
        if used + tokens > TOKEN_BUDGET:
            break
        prefix.append((item, tokens))
        used += tokens
    if not prefix:
        return
    lengths = sorted(t for _, t in prefix)
    long_cut = 2 * lengths[len(lengths) // 2]
    seen_sources: set[str] = set()
    seen_terms: list[set[str]] = []
    for item, tokens in prefix:
        spend["all"] += tokens
        spend["items"] += 1
        words = set(terms(item.text))
        sources = set(item.source_message_ids)
        if item.kind == "profile":
            spend["persona"] += tokens
        if sources & seen_sources:
            spend["same_source_as_earlier"] += tokens
        elif any(_overlap(words, s) >= 0.8 for s in seen_terms):
            spend["near_duplicate_text"] += tokens
        if tokens > long_cut:
            spend["long"] += tokens
        seen_sources |= sources
        seen_terms.append(words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="LoCoMo misses by category (no question texts)")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--embedder", action="append", default=None, choices=("hashing", "use"))
    parser.add_argument("--candidate-limit", type=int, default=None)
    args = parser.parse_args(argv)
    for kind in args.embedder or ("hashing",):
        emit(analyse(args.folder, kind, args.candidate_limit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
