"""Engram configuration. Every number here is a default, and every one can change in the config file
(`engram.core.config_file`: TOML, e.g. `<data folder>/engram.toml`; `engram config` shows the effective values)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FilterConfig(_Section):
    min_user_chars: int = 5
    min_assistant_chars: int = 20
    user_pass_length: int = 20
    assistant_pass_length: int = 120


class GuardConfig(_Section):
    max_content_chars: int = 500
    min_importance: float = 0.0


class MergeConfig(_Section):
    find_cosine: float = 0.40
    near_duplicate_cosine: float = 0.92
    related_jaccard: float = 0.30
    importance_bump: float = 0.05
    max_candidates: int = 8


class SummaryConfig(_Section):
    first_snapshot_messages: int = 10
    new_messages: int = 10
    new_characters: int = 1000
    max_items_per_section: int = 5
    max_item_chars: int = 120


class RecallWeights(_Section):
    match: float = 0.5
    decay: float = 0.3
    importance: float = 0.2
    bigram: float = 0.6
    contains: float = 0.4
    lexical: float = 0.7
    """Share of `match` from the lexical channel (BM25 and phrase overlap)..."""
    semantic: float = 0.3
    """...and from the semantic channel (the embedder's cosine); the two sum to 1."""
    bm25: float = 0.5
    """Inside `lexical`: the share of BM25 (the rest is the bigram/contains phrase score)."""
    domain: float = Field(default=0.4, ge=0.0, le=1.0)
    """The least `match` of a memory in a specific domain the question implies (a dinner plan and the
    diet): `match = max(channels, domain·overlap)`; 0 turns task-implied relevance off."""


class RecallConfig(_Section):
    weights: RecallWeights = RecallWeights()
    half_life_hours: float = 24.0 * 365
    decay_floor: float = Field(default=0.5, ge=0.0, le=1.0)
    """Decay never drops below this: old facts of a long history are not buried."""
    min_score: float = 0.25
    semantic_match_cosine: float = 0.50
    """A memory sharing no term with the question is still a candidate above this cosine (an embedder
    with its own calibration, `related_cosine`, uses that instead: USE's cosines run lower)."""
    token_budget: int = 1024
    recent_rounds: int = 5
    deadline_ms: float = 300.0
    pool_size: int = Field(default=64, ge=1)
    """Slots of the process's one recall pool (recall/deadline.py): at most this many retrieval parts
    (5 a recall) in flight, late ones included; a recall that finds too few free degrades at once."""
    candidate_limit: int = 50
    result_limit: int = 10
    near_duplicate_cosine: float = 0.92
    source_repeat_factor: float = Field(default=0.5, gt=0.0, le=1.0)
    """Ranking only: a memory drawn from a turn already behind a chosen memory ranks as if its score were
    this much lower per such turn (1 = off). The reported S1 score is unchanged."""
    context_turns_top: int = Field(default=0, ge=0)
    """Opt-in: the best this many memories show the turns just before and after their source turn (the
    question it answers, the reply), verbatim (redacted), each once in the context. Off by default: raw
    turns are not injected unless asked for: the context carries what was remembered, not the chat log."""
    context_turn_tokens: int = Field(default=60, ge=8)
    """A quoted turn longer than this many tokens is cut, with an ellipsis."""
    turn_candidates: int = Field(default=50, ge=0)
    """Recorded turns (user and assistant) searched beside the memories and fused into one ranking
    (0: memories only)."""
    fusion_k: float = Field(default=5.0, gt=0.0)
    """Reciprocal rank fusion constant: a piece of evidence scores sum(1 / (k + rank)) over the rankings
    (memories, turns) it is found in. Small: the first few places of either ranking decide the top."""
    turn_weight: float = Field(default=1.5, ge=0.0)
    """The turn ranking's weight in the fusion (the memories' is 1): a turn's share is
    `turn_weight / (k + rank)`; below 1 a turn no note was drawn from needs a better rank to enter. Above 1
    by default: a turn is what was said, word for word, where a note is a paraphrase of part of it."""
    evidence_tokens: int = Field(default=60, ge=8)
    """The sentences of a memory's source turn shown with it, or of a turn shown alone, at most this long
    for the best `evidence_top` items, half as long for the others (more distinct evidence fits)."""
    evidence_top: int = Field(default=5, ge=0)
    session_share: float = Field(default=0.5, ge=0.0, le=1.0)
    """A piece of evidence (a note or a turn) also scores this much of the best other scores of its session
    in the fused ranking: a conversation several of whose turns match the question is likelier the one it
    asks about than a single stray match elsewhere (0: every piece scores alone)."""
    session_top: int = Field(default=1, ge=1)
    """How many of the session's other scores lift a piece of evidence: only the best by default, so a
    long session is not lifted for its length."""
    profile_share: float = Field(default=0.3, ge=0.0, le=1.0)
    """The standing profile's share of `token_budget`: its entries come first, most important first,
    within this many tokens (0 turns the push off: no profile entry unless a question matches it)."""
    profile_limit: int = Field(default=12, ge=0)
    """At most this many profile entries a recall, whatever the budget."""
    profile_candidates: int = Field(default=24, ge=0)
    """A long history's profile is large: at most this many entries are read and scored a recall (pinned,
    then important, then recent ones; an entry the question reaches beyond them is found by the search)."""

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> "RecallConfig":
        w = self.weights
        if not math.isclose(w.match + w.decay + w.importance, 1.0, abs_tol=1e-9):
            raise ValueError(
                "recall weights match + decay + importance must sum to 1, got "
                f"{w.match} + {w.decay} + {w.importance}"
            )
        if not math.isclose(w.lexical + w.semantic, 1.0, abs_tol=1e-9):
            raise ValueError(
                f"match channels lexical + semantic must sum to 1, got {w.lexical} + {w.semantic}"
            )
        if not 0.0 <= w.bm25 <= 1.0 or min(w.match, w.decay, w.importance, w.lexical, w.semantic) < 0:
            raise ValueError("recall weights must be non-negative and bm25 within [0, 1]")
        if not math.isclose(w.bigram + w.contains, 1.0, abs_tol=1e-9):
            raise ValueError(
                f"match weights bigram + contains must sum to 1, got {w.bigram} + {w.contains}"
            )
        return self


class GlobalConfig(_Section):
    show_all_up_to: int = 5
    tag_mode_up_to: int = 20
    limit: int = 5
    tag_base_score: float = 0.10
    tag_hit_score: float = 0.05
    vector_min_cosine: float = 0.60


class GovernanceConfig(_Section):
    """Decay and eviction (formula in `engram.streams.govern`); `lifetime_days` are per-type half-lives."""

    evict_below_strength: float = 0.1
    protect_importance: float = 0.9
    conflict_penalty: float = Field(default=0.5, ge=0.0, le=1.0)
    """Strength factor of a memory in conflict with another (conflicts weaken)."""
    archive_grace_days: float = Field(default=0.0, ge=0.0)
    """An archived memory is deleted by the first tick later than this after its archival."""
    default_lifetime_days: float = Field(default=365.0, gt=0.0)
    lifetime_days: dict[str, float] = Field(
        default_factory=lambda: {
            "user_preference": 365.0, "user_profile": 3650.0, "user_goal": 180.0,
            "user_constraint": 90.0, "user_fact": 365.0, "assistant_decision": 180.0,
            "assistant_plan": 90.0, "assistant_constraint": 180.0, "assistant_action": 30.0,
        }
    )


class EmbedderConfig(_Section):
    kind: Literal["hashing", "use"] = "hashing"
    """hashing: words, no model; use: multilingual USE v3 (the semantic extra). ENGRAM_EMBEDDER wins."""
    dimensions: int = 256


class EngramConfig(_Section):
    """All tunables. Invalid combinations refuse to load."""

    filters: FilterConfig = FilterConfig()
    guard: GuardConfig = GuardConfig()
    merge: MergeConfig = MergeConfig()
    summary: SummaryConfig = SummaryConfig()
    recall: RecallConfig = RecallConfig()
    global_memory: GlobalConfig = GlobalConfig()
    governance: GovernanceConfig = GovernanceConfig()
    embedder: EmbedderConfig = EmbedderConfig()


DEFAULT_CONFIG = EngramConfig()
