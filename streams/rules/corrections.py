"""Corrections that name what they correct ("Sorry, not Utrecht, I meant Eindhoven", "说错了，不是美团，是滴滴").

Mechanism (named correction): such a sentence carries no subject of its own -
only the wrong value and the right one. The rules note it as a correction
(`User corrected "Utrecht" to "Eindhoven"`); consolidation then finds the
user's latest active memory that holds the wrong value, writes the same note
with the right value in the same type and slot, and retires the old one. A
correction of a value no memory holds is discarded: on its own it says nothing.

Frames (after an optional cue: sorry, oops, correction, my bad, 说错了, 更正…):
"not X, I meant / it's / but Y", "I meant Y, not X", "I said X but I meant Y",
"不是X，是Y", "X说错了，是Y", "应该是Y，不是X". A frame with a subject of its own
("我不是学生，是老师", "I'm not a nurse, I'm a midwife") is a plain statement
for the ordinary rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engram.schemas.memory import Candidate, MemoryRecord, MemoryType as T

from .common import CJK, Draft, clean, sentences

_I = re.IGNORECASE
_EN_CUE = r"(?:(?:sorry|oops|whoops|correction|my bad|wait|no|actually|typo|i misspoke|scratch that)\b[,:!.]?\s*)*"
_VALUE = r"(?:(?!\s[-–—]\s)[^,;.!?]){1,40}?"
_TAIL = r"(?:\s+[-–—]\s+.*)?"
_EN_FRAMES = (
    re.compile(rf"^{_EN_CUE}(?:it's\s+|it is\s+)?not\s+(?P<old>{_VALUE})\s*[,;-]+\s*(?:i meant|i mean|it's|it is|rather|but|it was)\s+"
               rf"(?P<new>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}i meant\s+(?P<new>{_VALUE})\s*,?\s*not\s+(?P<old>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}i said\s+(?P<old>{_VALUE})\s*,?\s*(?:but\s+)?i meant\s+(?P<new>{_VALUE}){_TAIL}$", _I),
)
_ZH_CUE = r"(?:(?:说错了|打错了|写错了|口误|更正一下|更正|纠正一下|纠正|不好意思|抱歉|不对)[,，:：!！。]?\s*)*"
_ZH_VALUE = r"[^,，;；。!！?？是]{1,16}"
_ZH_FRAMES = (
    re.compile(rf"^{_ZH_CUE}不是(?P<old>{_ZH_VALUE})[,，]\s*(?:而)?(?:应该)?是(?P<new>{_ZH_VALUE})$"),
    re.compile(rf"^{_ZH_CUE}(?:应该)?是(?P<new>{_ZH_VALUE})[,，]\s*不是(?P<old>{_ZH_VALUE})$"),
    re.compile(rf"^(?P<old>{_ZH_VALUE})(?:说错了|打错了|写错了)[,，]\s*(?:应该)?是(?P<new>{_ZH_VALUE})$"),
)
_NOTE = re.compile(r'^User corrected "(?P<old>[^"]+)" to "(?P<new>[^"]+)"$|^用户更正：(?P<zold>[^→]+)→(?P<znew>.+)$')
_NOT_VALUE = re.compile(r"^(?:that|this|it|what i|sure|really|quite|so|too|me|you)\b", _I)


def named_correction(sentence: str) -> tuple[str, str] | None:
    """`(wrong value, right value)` when the sentence is a correction that names both."""
    text = sentence.strip().rstrip("。.!！")
    frames = _ZH_FRAMES if CJK.search(text) else _EN_FRAMES
    for frame in frames:
        m = frame.match(text)
        if m is None:
            continue
        old, new = clean(m.group("old")), clean(m.group("new"))
        if old and new and old.lower() != new.lower() and not _NOT_VALUE.match(old) and not _NOT_VALUE.match(new):
            return old, new
    return None


def correction_drafts(text: str) -> tuple[str, list[Draft]]:
    """The turn without its named-correction sentences, and a correction note for each."""
    kept, drafts = [], []
    for sentence, _ in sentences(text):
        pair = named_correction(sentence)
        if pair is None:
            kept.append(sentence)
            continue
        old, new = pair
        content = f"用户更正：{old}→{new}" if CJK.search(old + new) else f'User corrected "{old}" to "{new}"'
        drafts.append(Draft(T.USER_FACT, content, 0.8, None, None, False, ()))
    return (" ".join(kept), drafts) if drafts else (text, [])


def parse_correction_note(content: str) -> tuple[str, str] | None:
    """`(wrong, right)` of a correction note written by `correction_drafts`, else None."""
    m = _NOTE.match(content)
    if m is None:
        return None
    return (m.group("old"), m.group("new")) if m.group("old") else (m.group("zold"), m.group("znew"))


def holds_value(content: str, value: str) -> bool:
    """The value appears in the content: as a substring in Chinese, as whole words otherwise."""
    if CJK.search(value):
        return value in content
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", content, _I) is not None


def corrected_content(content: str, old: str, new: str) -> str:
    """The content with the wrong value replaced by the right one."""
    if CJK.search(old):
        return content.replace(old, new)
    return re.sub(rf"(?<![\w]){re.escape(old)}(?![\w])", new.replace("\\", r"\\"), content, flags=_I)


def latest_holding(memories: Iterable[MemoryRecord], old: str, new: str) -> MemoryRecord | None:
    """The most recently updated user memory that holds the wrong value and not yet the right one."""
    found = [m for m in memories if not m.type.is_assistant and holds_value(m.content, old)
             and not holds_value(m.content, new) and parse_correction_note(m.content) is None]
    return max(found, key=lambda m: (m.updated_at, m.memory_id), default=None)


def corrected_candidate(candidate: Candidate, target: MemoryRecord, old: str, new: str) -> Candidate:
    """The target memory restated with the right value, as a candidate of the target's type and slot."""
    attribute = target.slot.split(".", 1)[1] if "." in target.slot else None
    entities = tuple(new if e == old else e for e in target.entities)
    topic = corrected_content(target.topic, old, new) if target.topic else None
    return Candidate(type=target.type, attribute=attribute, content=corrected_content(target.content, old, new),
                     confidence=max(candidate.confidence, target.confidence), entities=entities,
                     keywords=target.keywords, topic=topic, negated=target.negated,
                     source_message_ids=candidate.source_message_ids)
