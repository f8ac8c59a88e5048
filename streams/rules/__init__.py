"""Deterministic Chinese and English extraction rules (the embedded default extractor).

`extract_drafts(role, text)` is a pure function of its arguments, so its
result is cached: repeated messages ("我不吃香菜" said in three sessions) cost
one dictionary lookup.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.schemas.memory import MemoryType, Role

from . import en, zh
from .assistant import assistant_drafts
from .common import CJK, Draft, entities_in, keywords_of, prepare, shorten

__all__ = ["Draft", "extract_drafts", "FALLBACK_CONFIDENCE"]

FALLBACK_CONFIDENCE = 0.45
"""Confidence of a statement kept verbatim because no specific rule matched it."""

MAX_FALLBACK_CHARS = 400
_LATIN_LETTERS = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=8192)
def extract_drafts(role: Role, text: str, decision_signal: bool = True) -> tuple[Draft, ...]:
    """Drafts for one message. Assistant text yields nothing without a decision signal."""
    prepared = prepare(text)
    if not prepared or (role == "assistant" and not decision_signal):
        return ()
    if role == "assistant":
        drafts = assistant_drafts(prepared)
    else:
        leftovers: list[str] = []
        chinese = _is_chinese(prepared)
        drafts = (zh if chinese else en).user_drafts(prepared, leftovers)
        if leftovers:
            drafts.append(_fallback(leftovers, chinese))
    return tuple(_with_keywords(d) for d in drafts)


def _with_keywords(d: Draft) -> Draft:
    keywords = keywords_of(d.content, d.topic)
    return Draft(d.type, d.content, d.confidence, d.attribute, d.topic, d.negated, d.entities, keywords)


def _is_chinese(text: str) -> bool:
    """Chinese rules unless the text is English with a few Chinese characters in it."""
    if CJK.search(text) is None:
        return False
    return len(_LATIN_LETTERS.findall(text)) <= 2 * len(CJK.findall(text))


def _fallback(leftovers: list[str], chinese: bool) -> Draft:
    content = shorten(("，" if chinese else " ").join(leftovers), MAX_FALLBACK_CHARS)
    return Draft(MemoryType.USER_FACT, content, FALLBACK_CONFIDENCE, None, None, False, entities_in(content, prose=True))
