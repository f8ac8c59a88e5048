"""The array-backed BM25 of the embedded index gives the textbook per-document loop's scores exactly."""

from __future__ import annotations

import math
import random
from collections import Counter

from engram.core.text import terms
from engram.projections.hybrid_index import BM25_B, BM25_K1, KeywordIndex

WORDS = "用户 喜欢 火锅 猫 java python billing service 北京 西安 trip plan 会议 项目 数据 我 喜欢吃辣 周末".split()
QUERIES = ("用户喜欢火锅", "java billing", "周末 trip 猫", "nothing here", "我", "")


def reference_bm25(docs: dict[str, tuple[str, ...]], query: str, limit: int) -> dict[str, float]:
    """The plain loop over postings the index replaced: same formula, same order of additions."""
    n = len(docs)
    if not n:
        return {}
    avgdl = sum(len(d) for d in docs.values()) / n or 1.0
    scores: dict[str, float] = {}
    for term in set(terms(query)):
        postings = {doc_id: Counter(d)[term] for doc_id, d in docs.items() if term in d}
        if not postings:
            continue
        idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
        for doc_id, tf in postings.items():
            norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * len(docs[doc_id]) / avgdl)
            scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (BM25_K1 + 1) / norm
    if not scores:
        return {}
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return {doc_id: score / best[0][1] for doc_id, score in best}


def random_doc(rng: random.Random) -> tuple[str, ...]:
    return terms(" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9))))


def test_scores_and_order_match_the_reference_through_adds_and_removes() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        index, docs = KeywordIndex(), {}
        for step in range(200):
            doc_id = f"m{rng.randrange(40):02d}"
            if doc_id in docs:
                index.discard(doc_id, docs.pop(doc_id))
            if rng.random() < 0.8:
                docs[doc_id] = random_doc(rng)
                index.add(doc_id, docs[doc_id])
            assert len(index) == len(docs)
            if step % 20 == 0:
                for query in QUERIES:
                    for limit in (1, 3, 50):
                        got, want = index.search(query, limit), reference_bm25(docs, query, limit)
                        assert list(got.items()) == list(want.items())


def test_an_empty_index_finds_nothing() -> None:
    index = KeywordIndex()
    assert index.search("用户", 10) == {}
    index.add("a", terms("用户 喜欢"))
    index.discard("a", terms("用户 喜欢"))
    assert index.search("用户", 10) == {}
