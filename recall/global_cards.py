"""Which global cards go into the context. Pure: no I/O, no clock.

The mode depends on how many cards are bound to the agent: a few are all
shown; a moderate number are narrowed to the mandatory cards plus those whose
tags match the question; many are narrowed to the mandatory cards plus those
close to the question in vector space, with tag matches as the fallback.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from engram.core.config import GlobalConfig
from engram.core.embedding import Embedder, cosine
from engram.core.text import EN_STOPWORDS, compact, has_cjk, is_cjk_char, normalize
from engram.schemas.memory import GlobalCard

Mode = Literal["all", "tag", "vector"]
Reason = Literal["mandatory", "all", "tag", "vector"]

MANDATORY_SCORE = 1.0
_CJK_SHARED_CHARS = 3
"""A CJK tag longer than this also matches a question sharing this many consecutive
characters with it (question 微服务 ↔ tag 微服务架构)."""

_LATIN_WORD_RE = re.compile(r"[a-z0-9][a-z0-9+#.-]*[a-z0-9+#]|[a-z0-9]")
_CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_FILLERS = re.compile(
    r"请问|请|帮我|给我|推荐|一下|一些|一点|可以|怎么|如何|什么|为什么|哪些|哪个|是否|能否"
    r"|我们|你们|我|你|的|了|吗|呢|吧|啊|呀|和|与|或|是|点|些|想|要|能|这|那|就|也|都|还"
)


@dataclass(frozen=True)
class SelectedCard:
    """A card chosen for the context, its score, the mode in force and why it was chosen."""

    card: GlobalCard
    score: float
    mode: Mode
    reason: Reason
    matched_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Question:
    text: str
    flat: str
    padded: str
    keywords: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> _Question:
        return cls(text, compact(text), f" {normalize(text)} ", question_keywords(text))


def select_cards(
    cards: Sequence[GlobalCard],
    agent_id: str,
    question: str,
    *,
    embedder: Embedder,
    config: GlobalConfig,
) -> list[SelectedCard]:
    """The cards to show for `question`, mandatory ones first, then best-scored first."""
    candidates = eligible_cards(cards, agent_id)
    q = _Question.of(question)
    if len(candidates) <= config.show_all_up_to:
        return _show_all(candidates, q, config)
    mode: Mode = "tag" if len(candidates) <= config.tag_mode_up_to else "vector"
    mandatory = _ordered(
        SelectedCard(c, MANDATORY_SCORE, mode, "mandatory") for c in candidates if c.mandatory
    )
    others = [c for c in candidates if not c.mandatory]
    if mode == "tag":
        matched = [s for c in others if (s := _tag_match(c, q, mode, config)) is not None]
    else:
        matched = _vector_matches(others, q, embedder, config)
    room = max(0, config.limit - len(mandatory))
    return mandatory + _ordered(matched)[:room]


def eligible_cards(cards: Iterable[GlobalCard], agent_id: str) -> list[GlobalCard]:
    """Enabled, not deleted, bound to the agent; the newest version of each card id."""
    latest: dict[str, GlobalCard] = {}
    for card in cards:
        if not card.enabled or card.deleted or agent_id not in card.agent_ids:
            continue
        seen = latest.get(card.card_id)
        if seen is None or (card.version, card.updated_at) > (seen.version, seen.updated_at):
            latest[card.card_id] = card
    return list(latest.values())


def question_keywords(question: str) -> tuple[str, ...]:
    """Latin words (no stop words) and CJK phrases left once filler words are removed."""
    folded = unicodedata.normalize("NFKC", question).lower()
    words = [w for w in _LATIN_WORD_RE.findall(folded) if w not in EN_STOPWORDS]
    phrases = [
        piece
        for run in _CJK_RUN_RE.findall(folded)
        for piece in _CJK_FILLERS.split(run)
        if len(piece) >= 2
    ]
    return tuple(dict.fromkeys(words + phrases))


def tag_hits(tags: Sequence[str], question: str) -> tuple[str, ...]:
    """The tags of a card that the question matches."""
    q = _Question.of(question)
    return tuple(tag for tag in tags if _tag_hit(tag, q))


def _tag_hit(tag: str, q: _Question) -> bool:
    flat = compact(tag)
    if not flat:
        return False
    if any(len(k) >= 3 and k in flat for k in q.keywords):
        return True  # question word inside the tag: spring -> springboot, java -> java开发
    if has_cjk(flat):
        return flat in q.flat or _shares_cjk(flat, q.flat)
    return f" {normalize(tag)} " in q.padded


def _shares_cjk(tag: str, question: str) -> bool:
    if len(tag) <= _CJK_SHARED_CHARS:
        return False
    for i in range(len(tag) - _CJK_SHARED_CHARS + 1):
        window = tag[i : i + _CJK_SHARED_CHARS]
        if all(is_cjk_char(ch) for ch in window) and window in question:
            return True
    return False


def _tag_match(
    card: GlobalCard, q: _Question, mode: Mode, config: GlobalConfig
) -> SelectedCard | None:
    hits = tuple(tag for tag in card.tags if _tag_hit(tag, q))
    if not hits:
        return None
    score = config.tag_base_score + config.tag_hit_score * len(hits)
    return SelectedCard(card, score, mode, "tag", hits)


def _vector_matches(
    cards: Sequence[GlobalCard], q: _Question, embedder: Embedder, config: GlobalConfig
) -> list[SelectedCard]:
    """Cards close to the question; a card below the threshold may still match by tag."""
    if not cards:
        return []
    vectors = embedder.embed([q.text] + [card.text() for card in cards])
    out: list[SelectedCard] = []
    for card, vector in zip(cards, vectors[1:]):
        similarity = cosine(vectors[0], vector)
        if similarity >= config.vector_min_cosine:
            hits = tuple(tag for tag in card.tags if _tag_hit(tag, q))
            out.append(SelectedCard(card, similarity, "vector", "vector", hits))
        elif (fallback := _tag_match(card, q, "vector", config)) is not None:
            out.append(fallback)
    return out


def _show_all(
    cards: Sequence[GlobalCard], q: _Question, config: GlobalConfig
) -> list[SelectedCard]:
    mandatory = [SelectedCard(c, MANDATORY_SCORE, "all", "mandatory") for c in cards if c.mandatory]
    others = [
        _tag_match(c, q, "all", config) or SelectedCard(c, 0.0, "all", "all")
        for c in cards
        if not c.mandatory
    ]
    return _ordered(mandatory) + _ordered(others)


def _ordered(selected: Iterable[SelectedCard]) -> list[SelectedCard]:
    """Score desc, then most recently updated, then card id: the same order every time."""
    return sorted(
        selected, key=lambda s: (-s.score, -s.card.updated_at.timestamp(), s.card.card_id)
    )
