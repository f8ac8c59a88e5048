"""The column-stored vector table scores like a plain matrix product, through adds, replaces and removes."""

from __future__ import annotations

import random

import numpy as np

import engram.core.vector_table as vector_table
from engram.core.embedding import HashingEmbedder
from engram.core.vector_table import VectorTable

TEXTS = ["User likes jazz on weekends", "用户不吃香菜", "Decided: use PostgreSQL for billing", "我下周去上海出差",
         "User's sister lives in Berlin", "User plays chess after work", "用户喜欢喝乌龙茶", "Plan: ship the beta"]


def _unit(rng: np.random.Generator, dimensions: int) -> np.ndarray:
    v = rng.standard_normal(dimensions).astype(np.float32)
    return v / np.linalg.norm(v)


def test_sparse_and_dense_queries_score_like_the_plain_product_through_writes() -> None:
    embedder = HashingEmbedder(256)
    table = VectorTable(256, capacity=2)  # grows several times
    stored: dict[str, np.ndarray] = {}
    rng = random.Random(5)
    for step in range(300):
        key = f"m{rng.randrange(60)}"
        if rng.random() < 0.25:
            table.remove(key)
            stored.pop(key, None)
        else:
            vector = embedder.embed_one(f"{rng.choice(TEXTS)} {step}")
            table.put(key, vector)
            stored[key] = vector
    assert sorted(table.ids) == sorted(stored)
    dense = _unit(np.random.default_rng(1), 256)
    for query in (embedder.embed_one("jazz weekends"), embedder.embed_one("上海出差"), dense,
                  np.zeros(256, dtype=np.float32)):
        expected = np.array([float(stored[k] @ query) for k in table.ids], dtype=np.float32)
        assert np.allclose(table.scores(query), expected, atol=1e-6)
        assert table.vector(table.ids[0]) is not None and np.array_equal(table.vector(table.ids[0]),
                                                                            stored[table.ids[0]])


def test_blocked_products_equal_one_product(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    table = VectorTable(64)
    vectors = {f"k{i}": _unit(rng, 64) for i in range(500)}
    for key, vector in vectors.items():
        table.put(key, vector)
    query = _unit(rng, 64)
    whole = table.scores(query)
    monkeypatch.setattr(vector_table, "BLOCK_ELEMENTS", 64 * 7)  # 7 columns per block, a ragged last block
    assert np.allclose(table.scores(query), whole, atol=1e-6)


def test_top_is_best_first_with_ties_by_id_and_respects_the_limit() -> None:
    table = VectorTable(4)
    base = np.array([1, 0, 0, 0], dtype=np.float32)
    other = np.array([0, 1, 0, 0], dtype=np.float32)
    for key in ("c", "a", "b"):
        table.put(key, base)
    table.put("z", other)
    table.put("y", (base + other) / np.linalg.norm(base + other))
    assert [k for k, _ in table.top(base, 10)] == ["a", "b", "c", "y", "z"]
    best_two = table.top(base, 2)
    assert len(best_two) == 2 and all(score == 1.0 for _, score in best_two)
    assert table.top(base, 0) == [] and VectorTable(4).top(base, 3) == []
    table.remove("a")
    assert [k for k, _ in table.top(base, 3)] == ["b", "c", "y"]


def test_ties_at_the_cut_are_taken_by_id_whatever_order_the_vectors_were_stored_in() -> None:
    same = np.zeros(8, dtype=np.float32)
    same[0] = 1.0
    keys = [f"m{i:02d}" for i in range(10)]
    picks = []
    for order in (keys, list(reversed(keys))):
        table = VectorTable(8)
        for key in order:
            table.put(key, same)
        picks.append([k for k, _ in table.top(same, 3)])
    assert picks[0] == picks[1] == ["m00", "m01", "m02"]
