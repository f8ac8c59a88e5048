"""Rule judge for consolidation: the easy relations decided without a model.

Returns None when no rule applies, so an LLM judge (when configured) or the
default "new" can decide.
"""

from __future__ import annotations

import re

from engram.core.config import MergeConfig
from engram.core.ports import Judgement
from engram.core.text import char_jaccard, compact
from engram.schemas.memory import Candidate, MemoryRecord, is_single_valued

from .switch import switch_replaces

TENTATIVE_CONFIDENCE = 0.5


def topics_match(a: str | None, b: str | None) -> bool:
    """Same topic, or one topic contains the other ("java" vs "java编程")."""
    if not a or not b:
        return False
    ca, cb = compact(a), compact(b)
    return bool(ca and cb) and (ca in cb or cb in ca)


_LATIN_WORD = re.compile(r"[a-z0-9+#]{3,}")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def topics_overlap(a: str | None, b: str | None) -> bool:
    """Partly the same topic: a shared word ("horror movies" / "horror films") or, in
    Chinese, at least half of the characters ("听中文播客" / "听播客")."""
    if not a or not b:
        return False
    la, lb = a.lower(), b.lower()
    if set(_LATIN_WORD.findall(la)) & set(_LATIN_WORD.findall(lb)):
        return True
    ca, cb = set(_CJK_CHAR.findall(la)), set(_CJK_CHAR.findall(lb))
    return bool(ca and cb) and len(ca & cb) / len(ca | cb) >= 0.5


_VERBATIM_PREFIX = re.compile(r"^(?:User (?:said|mentioned|repeated):\s*|用户(?:说|提到|重申)[：:]\s*)")
_SUBJECT = re.compile(r"^(?:User(?:'s)?\s+|用户(?:的)?|I\s+|I'm\s+|my\s+|我(?:的)?)", re.IGNORECASE)
MIN_RESTATED_CHARS = 8
RESTATED_SHARE = 0.8
"""A verbatim note that says much more than the note it holds ("part-time在一家书店打工，一周差不多12个钟头"
against "用户一周差不多12个钟头") is not a restatement: merging it would lose what only it says."""
"""A restatement must hold at least this many characters of the other note (no bare "User likes")."""


def comparable(content: str) -> str:
    """A note reduced to what it says: no verbatim prefix ("User said: ", "用户说："), no subject ("User", "我"),
    no third-person "s" on English words ("User uses vim" / "I use emacs"), compacted ("用户说：我每天晚上9点去游泳。"
    and "用户每天晚上9点去游泳" both read "每天晚上9点去游泳")."""
    return compact(_AGREEMENT_S.sub("", bare(content)))


_AGREEMENT_S = re.compile(r"(?<=[a-z]{3})s\b", re.IGNORECASE)
"""The "s" a verb takes in the third person (and a plural's, read alike on both sides)."""


_NEGATOR = re.compile(r"\b(?:not|never|no longer|cannot)\b|n't\b|不|没|别", re.IGNORECASE)
_NOT_A_NEGATOR = re.compile(r"不错|不过|不少|不同|不断|不仅|不久|不管|差不多|没错|(?<=[特分区类性级告识鉴差个])别|别(?=人|的|处|墅)")
"""Words that carry 不, 没 or 别 without denying anything ("不错", "特别", "别人")."""


def has_negator(content: str) -> bool:
    """The note denies something: not, never, no longer, n't, 不, 没, 别 (outside words such as 不错 or 特别)."""
    return _NEGATOR.search(_NOT_A_NEGATOR.sub("", content)) is not None


def opposite_polarity(a: str, b: str) -> bool:
    """One note carries a negator the other lacks: "User doesn't eat beef" says the opposite of "User eats beef",
    however many words they share."""
    return has_negator(a) != has_negator(b)


def bare(content: str) -> str:
    """A note without its verbatim prefix and its subject ("User said: I'm allergic to X" -> "allergic to X")."""
    return _SUBJECT.sub("", _VERBATIM_PREFIX.sub("", content.strip()))


def is_verbatim(content: str) -> bool:
    """A note kept in the user's own words ("User said: …", "用户说：…")."""
    return _VERBATIM_PREFIX.match(content) is not None


def restates(new: str, old: str) -> bool:
    """Mechanism (restatement): a verbatim note that holds a note the rules understood whole, or the reverse,
    and says little more, says it again; the comparison drops the parts that differ only in who wrote the note
    down. A negator on one side only makes it another statement ("I don't eat beef" / "User eats beef")."""
    if is_verbatim(new) == is_verbatim(old) or opposite_polarity(new, old):  # two readings in the user's words are not one restating the other
        return False
    a, b = comparable(new), comparable(old)
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return len(shorter) >= MIN_RESTATED_CHARS and shorter in longer and len(shorter) >= RESTATED_SHARE * len(longer)


def judge_by_rules(
    candidate: Candidate, existing: MemoryRecord, cosine: float, config: MergeConfig
) -> Judgement | None:
    """Decide the relation of a candidate to one related existing memory, if rules can."""
    new_text, old_text = compact(candidate.content), compact(existing.content)
    if switch := switch_replaces(candidate, existing):
        return Judgement("replace", switch, "rule")
    if new_text == old_text or cosine >= config.near_duplicate_cosine:
        if opposite_polarity(candidate.content, existing.content):  # "User eats beef" against "… doesn't eat beef"
            return _reversal(candidate, existing)
        return Judgement("same", "near-duplicate of an existing memory", "rule")
    if candidate.slot == existing.slot and is_single_valued(candidate.slot):
        return Judgement("replace", f"single-valued slot {candidate.slot} takes the newer value", "rule")
    same_topic = topics_match(candidate.topic, existing.topic)
    if same_topic and candidate.negated != existing.negated:
        return _reversal(candidate, existing)
    if candidate.negated != existing.negated and topics_overlap(candidate.topic, existing.topic):
        return Judgement(
            "conflict",
            f"opposite stances on overlapping topics {existing.topic!r} and {candidate.topic!r}; both kept, linked",
            "rule",
        )
    if new_text in old_text or old_text in new_text:
        return Judgement("same", "one statement contains the other; keeping the more specific", "rule")
    if restates(candidate.content, existing.content):
        return Judgement("same", "the same statement, once in the user's own words", "rule")
    if same_topic:
        return Judgement("same", f"same topic {candidate.topic!r} with the same stance", "rule")
    if candidate.topic and existing.topic:
        return Judgement("new", "different topics", "rule")
    if char_jaccard(candidate.content, existing.content) < config.related_jaccard:
        return Judgement("new", "unrelated by character overlap", "rule")
    return None


def _reversal(candidate: Candidate, existing: MemoryRecord) -> Judgement:
    if candidate.confidence < TENTATIVE_CONFIDENCE <= existing.confidence:
        return Judgement(
            "conflict",
            f"tentative reversal of topic {candidate.topic!r} against a confident memory",
            "rule",
        )
    return Judgement("replace", f"newer statement reverses the stance on {candidate.topic!r}", "rule")
