"""Cross-lingual and paraphrase recall: hit@1 / hit@5 per embedder on a bilingual set of our own.

    python -m bench.bilingual_recall                      # hashing and use
    python -m bench.bilingual_recall --embedder use

`bench/bilingual_recall.jsonl` holds 30 memories of one user (half Chinese,
half English) and 69 questions: Chinese questions about English memories and
the reverse, same-language paraphrases and synonyms, and 10 negatives that no
memory answers. The memories are written straight into the embedded store
(through the projector, as the log would) and every question goes through the
normal `RecallService`; the ranking is its long-term items.

- hit@1 / hit@5: share of the positive questions with an expected memory first
  / among the first five;
- negatives rejected: share of negatives for which recall returns no memory.

Written by hand for this benchmark; it was not used to tune anything in LoCoMo.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit, table  # noqa: E402

DATA = Path(__file__).with_name("bilingual_recall.jsonl")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
TENANT, USER = "bench", "bilingual"


@dataclass(frozen=True)
class Query:
    qid: str
    tag: str
    text: str
    expect: frozenset[str]


def load(path: Path = DATA) -> tuple[dict[str, str], list[Query]]:
    memories: dict[str, str] = {}
    queries: list[Query] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["kind"] == "memory":
            memories[row["id"]] = row["text"]
        else:
            queries.append(Query(row["id"], row["tag"], row["text"], frozenset(row["expect"])))
    return memories, queries


def _record(mid: str, text: str, at: datetime) -> Any:
    from engram.schemas.memory import MemoryRecord, MemoryType

    return MemoryRecord(memory_id=mid, tenant_id=TENANT, user_id=USER, type=MemoryType.USER_FACT,
                        slot="user_fact", content=text, confidence=0.9, importance=0.5,
                        source_message_ids=(f"msg-{mid}",), created_at=at, updated_at=at, last_seen_at=at)


def rankings(kind: str, memories: dict[str, str], queries: list[Query]) -> list[list[str]]:
    """The memory ids recall returns for each query, best first, with the embedder `kind`."""
    from engram.core.config import DEFAULT_CONFIG
    from engram.core.embedding import make_embedder
    from engram.projections.embedded_store import EmbeddedStore
    from engram.projections.projector import CurrentMemoryProjector
    from engram.recall.service import RecallRequest, RecallService
    from engram.runtime.log import open_database
    from engram.schemas.events import MemoryChanged

    embedder = make_embedder(kind, DEFAULT_CONFIG.embedder.dimensions)
    with tempfile.TemporaryDirectory(prefix="engram-bilingual-") as tmp:
        db = open_database(Path(tmp) / "engram.db")
        store = EmbeddedStore(db, embedder.dimensions)
        projector = CurrentMemoryProjector(store, embedder)
        for n, (mid, text) in enumerate(memories.items()):
            at = T0 + timedelta(minutes=n)
            record = _record(mid, text, at)
            projector.apply(MemoryChanged(event_id=f"e-{mid}", occurred_at=at, tenant_id=TENANT, user_id=USER,
                                          memory_id=mid, change="created", after=record, relation="new",
                                          judge="rule"), n)
        store.flush()
        service = RecallService(store, embedder, DEFAULT_CONFIG)
        out = []
        for q in queries:
            result = service.recall(RecallRequest(TENANT, USER, "agent", "s-eval", q.text, T0 + timedelta(days=1),
                                                  message_id=q.qid, limit=10))
            out.append([i.item_id for i in result.items if i.kind == "memory"])
        db.close()
    return out


def score(queries: list[Query], ranked: list[list[str]]) -> dict[str, Any]:
    positives = [(q, r) for q, r in zip(queries, ranked) if q.expect]
    negatives = [r for q, r in zip(queries, ranked) if not q.expect]
    by_tag: dict[str, list[tuple[bool, bool]]] = {}
    for q, r in positives:
        by_tag.setdefault(q.tag, []).append((bool(q.expect & set(r[:1])), bool(q.expect & set(r[:5]))))
    n = len(positives) or 1
    return {
        "positives": len(positives), "negatives": len(negatives),
        "hit_at_1": round(sum(bool(q.expect & set(r[:1])) for q, r in positives) / n, 3),
        "hit_at_5": round(sum(bool(q.expect & set(r[:5])) for q, r in positives) / n, 3),
        "negatives_rejected": round(sum(not r for r in negatives) / (len(negatives) or 1), 3),
        "by_tag": {tag: {"n": len(v), "hit_at_1": round(sum(a for a, _ in v) / len(v), 3),
                         "hit_at_5": round(sum(b for _, b in v) / len(v), 3)} for tag, v in sorted(by_tag.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bilingual recall: hit@1 / hit@5 per embedder")
    parser.add_argument("--embedder", action="append", choices=("hashing", "use"), default=None)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    memories, queries = load(args.data)
    rows = []
    for kind in args.embedder or ("hashing", "use"):
        result = score(queries, rankings(kind, memories, queries))
        emit({"kind": "bilingual_recall", "embedder": kind, **result})
        tags = result["by_tag"]
        rows.append([kind, result["positives"], result["hit_at_1"], result["hit_at_5"], result["negatives_rejected"],
                     " ".join(f"{t}:{v['hit_at_1']}/{v['hit_at_5']}" for t, v in tags.items())])
    print()
    print(table(["embedder", "positives", "hit@1", "hit@5", "negatives rejected", "by tag hit@1/hit@5"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
