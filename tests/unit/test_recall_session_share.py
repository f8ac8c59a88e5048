"""A piece of evidence is lifted by the rest of its session: several matches in one conversation outrank a
single stray match elsewhere, and the lift counts only the session's best few other entries."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram.core.config import DEFAULT_CONFIG, RecallConfig
from engram.recall import evidence
from engram.recall.evidence import session_scores


def test_an_entry_gains_a_share_of_its_sessions_other_scores() -> None:
    entries = [(0.10, 0, "s1"), (0.09, 1, "s2"), (0.08, 2, "s2")]
    scored = dict((n, score) for score, n in session_scores(entries, share=0.5, top=2))
    assert scored[0] == 0.10  # alone in its session
    assert abs(scored[1] - (0.09 + 0.5 * 0.08)) < 1e-12
    assert abs(scored[2] - (0.08 + 0.5 * 0.09)) < 1e-12
    best = max(scored, key=lambda n: scored[n])
    assert best == 1  # two matches in s2 outrank the single better match in s1


def test_only_the_best_others_of_a_session_count() -> None:
    entries = [(0.2, 0, "s1"), *[(0.05, n, "s1") for n in range(1, 6)]]
    scored = dict((n, score) for score, n in session_scores(entries, share=0.5, top=2))
    assert abs(scored[0] - (0.2 + 0.5 * 0.1)) < 1e-12


def test_an_entry_with_no_session_and_a_zero_share_are_left_alone() -> None:
    entries = [(0.2, 0, ""), (0.1, 1, ""), (0.05, 2, "s")]
    assert session_scores(entries, share=0.5, top=2) == [(0.2, 0), (0.1, 1), (0.05, 2)]
    assert session_scores([(0.1, 0, "s"), (0.1, 1, "s")], share=0.0, top=2) == [(0.1, 0), (0.1, 1)]


def test_the_defaults_lift_by_session_and_the_fusion_reads_them_from_config() -> None:
    recall = DEFAULT_CONFIG.recall
    assert recall.session_share == 0.5 and recall.session_top == 1
    ask = evidence.FusionInput("t", "u", "q", frozenset(), 0, 5.0, 60)
    assert (ask.session_share, ask.session_top) == (recall.session_share, recall.session_top)


def test_the_session_settings_are_validated() -> None:
    with pytest.raises(ValidationError):
        RecallConfig(session_share=1.5)
    with pytest.raises(ValidationError):
        RecallConfig(session_top=0)
