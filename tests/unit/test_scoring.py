"""The shared scorer and its configuration."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from engram.core.config import RecallConfig, RecallWeights
from engram.core.scoring import (
    bigram_overlap, combined_score, contains, decay_factor, match_score, match_scores, rarity_weights, relevance,
)
from engram.core.text import terms

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
W = RecallWeights()


def test_weights_that_do_not_sum_to_one_refuse_to_load() -> None:
    with pytest.raises(ValidationError, match="sum to 1"):
        RecallConfig(weights=RecallWeights(match=0.6, decay=0.3, importance=0.2))
    with pytest.raises(ValidationError, match="sum to 1"):
        RecallConfig(weights=RecallWeights(bigram=0.7, contains=0.4))


def test_decay_halves_after_one_half_life_in_whole_hours() -> None:
    assert decay_factor(NOW, NOW, 10) == 1.0
    assert decay_factor(NOW - timedelta(hours=10), NOW, 10) == pytest.approx(0.5)
    assert decay_factor(NOW - timedelta(minutes=59), NOW, 10) == 1.0
    assert decay_factor(NOW + timedelta(hours=5), NOW, 10) == 1.0


def test_combined_score_uses_the_documented_weights() -> None:
    assert combined_score(1.0, 0.5, 0.2, W) == pytest.approx(0.5 * 1.0 + 0.3 * 0.5 + 0.2 * 0.2)


def test_match_rewards_overlap_and_containment() -> None:
    strong = match_score("喜欢java", "用户喜欢Java编程", W)
    weak = match_score("喜欢java", "用户不吃香菜", W)
    assert strong > 0.8 and weak < 0.2
    assert match_score("Go language", "User loves the Go language", W) > match_score("Go language", "User likes cats", W)


def test_relevance_prefers_recent_and_important_memories_for_equal_match() -> None:
    base = dict(weights=W, half_life_hours=24.0, now=NOW)
    fresh = relevance("java", "likes java", importance=0.5, last_seen=NOW, **base)
    stale = relevance("java", "likes java", importance=0.5, last_seen=NOW - timedelta(days=3), **base)
    important = relevance("java", "likes java", importance=0.9, last_seen=NOW, **base)
    assert important > fresh > stale


def test_match_scores_of_many_texts_are_the_one_by_one_floats() -> None:
    texts = ["我喜欢吃火锅和辣的菜", "user likes hot pot", "喜欢猫", "", "billing service plan 喜欢火锅"]
    documents = [terms(t) for t in texts]
    for question in ("我喜欢吃什么火锅？", "what does the user like", "猫", ""):
        q = terms(question)
        full, only = rarity_weights(documents), rarity_weights(documents, only=q)
        assert [only(t) for t in q] == [full(t) for t in q]
        one_by_one = [W.bigram * bigram_overlap(q, d) + W.contains * contains(q, d, full) for d in documents]
        assert match_scores(q, documents, W, only) == one_by_one
