"""Corrections that name what they correct ("Sorry, not Leipzig, I meant Dresden", "说错了，不是京东，是顺丰").

Mechanism (named correction): such a sentence carries no subject of its own -
only the wrong value and the right one. The rules note it as a correction
(`User corrected "Leipzig" to "Dresden"`); consolidation then finds the
user's latest active memory that holds the wrong value, writes the same note
with the right value in the same type and slot, and retires the old one. A
correction of a value no memory holds is discarded: on its own it says nothing.

A statement that rejects an alternative in passing ("I work at Deloitte, not
PwC", "我是测试工程师，不是开发工程师") is read twice: as the statement without
"not PwC", and as a correction of PwC to the words just before it, so a memory
that still holds PwC is rewritten. Only first-person statements count: "my
aunt is a dentist, not a pharmacist" corrects nothing of the user's.

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

from .common import CJK, Draft, clean, en_object, sentences
from .value_shapes import has_shape, same_shape_values

_I = re.IGNORECASE
_EN_CUE_WORDS = (r"sorry|oops|whoops|ugh|(?:small |quick )?correction(?: to what i said(?: yesterday| earlier| before)?)?|update|my bad|my mistake|wait|no|actually|typo|i misspoke|scratch that|oh|ah|well|hmm|um|"
                 r"i got (?:that|it) wrong(?: earlier| before)?|i was wrong(?: earlier| before)?|let me correct (?:that|myself)|"
                 r"(?:let me|i need to|i have to|i should|i must) (?:correct|fix|clarify) (?:myself|that|this|something(?: i said)?)")
_EN_CUE = rf"(?:(?:{_EN_CUE_WORDS})\b[,:!.]?\s*(?:[-–—]\s*)?)*"
_VALUE = r"(?:(?!\s[-–—]\s)[^,;.!?]){1,40}?"
_TAIL = r"(?:\s+[-–—]\s+.*)?"
_RELATIVES = (r"sister|brother|wife|husband|partner|girlfriend|boyfriend|mom|mum|mother|dad|father|parents|son|daughter|"
              r"kids?|children|child|friend|boss|manager|colleague|coworker|roommate|neighbou?r|cousin|aunt|uncle|niece|"
              r"nephew|grand\w+|in-laws?|\w+-in-law|fianc[ée]e?|teacher|doctor|landlord|landlady|client|coach|tutor|"
              r"mentor|team|family|baby|twins?|step\w+|ex")
"""Whose statements are not the user's: "my cousin is a plumber, not an electrician" corrects nothing."""
_EN_FRAMES = (
    re.compile(rf"^{_EN_CUE}(?:it's\s+|it is\s+)?not\s+(?P<old>{_VALUE})\s*[,;-]+\s*(?:i meant|i mean|it's|it is|rather|but|it was)\s+"
               rf"(?P<new>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}i meant\s+(?P<new>{_VALUE})\s*,?\s*not\s+(?P<old>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}i said\s+(?P<old>{_VALUE})(?:\s+(?:earlier|before|just now))?\s*,?\s*(?:but\s+)?"
               rf"i\s+(?:actually\s+|really\s+)?meant\s+(?P<new>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}(?:it's|it is)\s+(?P<new>{_VALUE})\s*,?\s*not\s+(?P<old>{_VALUE}){_TAIL}$", _I),
    re.compile(rf"^{_EN_CUE}i (?:said|told you|wrote)\s+(?P<old>{_VALUE})(?:\s+(?:earlier|before|just now|last time|yesterday|the other day))?\s*[,;:]?\s*(?:[-–—]\s*)?(?:but\s+)?"
               rf"(?:i'm|i am|it's|it is|that's|that is)\s+(?:actually|really|in fact)\s+(?P<new>{_VALUE})$", _I),
)
_EN_REJECTED = re.compile(rf"^(?P<head>(?:i|i'm|i am|i've|i work|i live|my\s+(?!(?:{_RELATIVES})\b)\w+)\b.*?)"
                          rf"\s*,?\s+(?:and\s+)?not\s+(?P<old>(?:an?\s+|the\s+)?[\w'-]+(?:\s+[\w'-]+)?)$", _I)
_ZH_REJECTED = re.compile(r"^(?P<head>我(?![的]?(?:老婆|老公|爸|妈|哥|姐|弟|妹|儿子|女儿|孩子|朋友|同事))[^,，。]+?)[,，]\s*(?:而)?"
                          r"(?P<at>不是在|不在|不是)(?P<old>[^,，。]{1,12})$")
_ZH_PLACE_VERB = re.compile(r"(?:工作|上班|住|生活|读书|上学|定居|发展|念书|实习|读研|读大学)(?:了|的|呢)?$")
_EN_CUE_ONLY = re.compile(rf"^(?:(?:{_EN_CUE_WORDS})\b[,:!.]?\s*(?:[-–—]\s*)?)+", _I)
_ZH_APOLOGY = re.compile(r"^(?:(?:(?i:sorry|oops|my bad|ugh|btw)|不好意思|抱歉|不对|哦对了|对了|哦|噢|啊)\s*[,，!！]?\s*)+")
_ZH_CUE_ONLY = re.compile(r"^(?:我)?(?:刚才|之前|前面)?(?:不好意思|抱歉)?[,，]?(?:记错了|搞错了|弄错了|说反了|说错了|打错了|写错了|口误|更正一下|更正|纠正一下|纠正|更新一下)(?:一下|下)?(?:昨天|之前|刚才|前面|上次)?(?:说的|说的话)?[,，:：!！。]?\s*")
_ZH_CUE = r"(?:(?:(?i:sorry|oops|my bad)|记错了|搞错了|弄错了|说反了|说错了|打错了|写错了|口误|更正一下|更正|纠正一下|纠正|更新一下|不好意思|抱歉|不对)[,，:：!！。]?\s*)*"
_ZH_VALUE = r"[^,，;；。!！?？是]{1,16}"
_ZH_FRAMES = (
    re.compile(rf"^{_ZH_CUE}不是(?P<old>{_ZH_VALUE})[,，]\s*(?:而)?(?:应该)?是(?P<new>{_ZH_VALUE})$"),
    re.compile(rf"^{_ZH_CUE}(?:应该)?是(?P<new>{_ZH_VALUE})[,，]?\s*不是(?P<old>{_ZH_VALUE})$"),
    re.compile(rf"^(?P<old>{_ZH_VALUE})(?:说错了|打错了|写错了)[,，]\s*(?:应该)?是(?P<new>{_ZH_VALUE})$"),
)
_MAY_CORRECT = re.compile(r"not\b|meant|i said|told you|sorry|wait|oops|correction|update|scrap|forget|ignore|actually|"
                          r"不是|不在|错|更正|纠正|口误|更新|不对", _I)
"""Every frame needs one of these: most turns skip the correction reading with one scan."""
_NOTE = re.compile(r'^User corrected (?:"(?P<old>[^"]+)"|a value) to "(?P<new>[^"]+)"$|^用户更正：(?P<zold>[^→]*)→(?P<znew>.+)$')
_NOT_VALUE = re.compile(r"^(?:that|this|it|what i|sure|really|quite|so|too|me|you)\b", _I)


def named_correction(sentence: str) -> tuple[str, str] | None:
    """`(wrong value, right value)` when the sentence is a correction that names both."""
    text = sentence.strip().rstrip("。.!！")
    frames = _ZH_FRAMES if CJK.search(text) else _EN_FRAMES
    for frame in frames:
        m = frame.match(text)
        if m is None:
            continue
        old, new = _bare(clean(m.group("old"))), _bare(clean(m.group("new")))
        if old and new and old.lower() != new.lower() and not _NOT_VALUE.match(old) and not _NOT_VALUE.match(new):
            return old, new
    return None


_NUMBER = re.compile(r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b", _I)
_ARTICLE = re.compile(r"^(?:an?|the|my)\s+", _I)


def _bare(value: str) -> str:
    """A value without its article ("a Golf" -> "Golf"), so it is found in "User drives a Volkswagen Golf"."""
    return _ARTICLE.sub("", value).strip()


def rejected_alternative(sentence: str) -> tuple[str, str, str] | None:
    """ "I work at Deloitte, not PwC" -> `("PwC", "Deloitte", "I work at Deloitte")`: the statement without its
    rejected alternative, and the alternative as the wrong value of a correction (the right one has as many
    words, or characters in Chinese, just before it)."""
    text = sentence.strip().rstrip("。.!！")
    zh = CJK.search(text) is not None
    m = (_ZH_REJECTED if zh else _EN_REJECTED).match(text)
    return _rejected_pair(m, zh) if m is not None else None


def _rejected_pair(m: re.Match[str], zh: bool) -> tuple[str, str, str] | None:
    head, old = m.group("head").rstrip(" ,，"), clean(m.group("old"))
    old = re.sub(r"^(?:(?:just|only|even|really|actually|an?|the)\s+)+", "", old, flags=_I)
    if zh and m.group("at") != "不是":
        new = _zh_place_in(head)  # "我是在合肥工作，不在芜湖": the place after 在, not the characters before the comma
    elif zh:
        new = head[-len(old):]
    elif _NUMBER.fullmatch(old):
        found = _NUMBER.findall(head)  # "I have three cats, not two": the number corrects the number
        new = found[-1] if found else ""
    else:
        head = en_object(head)  # "I live in Halifax now" -> the value ends at "Halifax"
        words = head.split()
        new = " ".join(words[-len(old.split()):]) if len(words) > len(old.split()) else ""
    new = clean(new)
    if not old or not new or old.lower() == new.lower() or _NOT_VALUE.match(old) or _NOT_VALUE.match(new):
        return None
    return old, new, head + ("。" if zh else ".")


def _zh_place_in(head: str) -> str:
    at = head.rfind("在")
    return _ZH_PLACE_VERB.sub("", head[at + 1:]) if at >= 0 else ""


def correction_drafts(text: str) -> tuple[str, list[Draft]]:
    """The turn without correction cues and named-correction frames, and a correction note for each correction.

    A statement with a rejected alternative ("I'm 29, not 28") stays, without the alternative, for the rules;
    so do the clauses of a sentence around a correction inside it (`cued_correction`).
    """
    if not _MAY_CORRECT.search(text):
        return text, []
    kept, drafts = [], []
    for sentence, _ in sentences(text):
        zh = CJK.search(sentence) is not None
        bare = (_ZH_CUE_ONLY.sub("", _ZH_APOLOGY.sub("", sentence)) if zh else _EN_CUE_ONLY.sub("", sentence)).strip()
        pair = named_correction(sentence)
        rejected = rejected_alternative(bare) if pair is None else None
        if rejected is not None:
            pair = rejected[:2]
            kept.append(rejected[2])
        cued = cued_correction(sentence) if pair is None else None
        if cued is not None:
            pair = cued[:2]
            if cued[2]:
                kept.append(cued[2])
        if pair is None:
            kept.append(sentence)
            continue
        drafts.append(Draft(T.USER_FACT, correction_note(*pair), 0.8, None, None, False, ()))
    return (" ".join(kept), drafts) if drafts else (text, [])


def correction_note(old: str, new: str) -> str:
    """The note of a correction; an empty `old` is a value the correction leaves unsaid (`value_shapes`)."""
    if CJK.search(old + new):
        return f"用户更正：{old}→{new}"
    return f'User corrected "{old}" to "{new}"' if old else f'User corrected a value to "{new}"'


_CUED = re.compile(r"\b(?:sorry|oops|whoops|correction|my bad|my mistake|wait|typo|misspoke|scratch that|actually|"
                   r"i meant|update|not quite right|not accurate|inaccurate|scrap|disregard|forget|ignore)\b|记错了|搞错了|弄错了|说反了|说错了|打错了|写错了|"
                   r"口误|更正|纠正|更新一下|不对|不准确", _I)
"""A correction cue anywhere in the sentence: only then is a frame looked for inside it, clause by clause."""
_PIECE = re.compile(r".+?(?:[，；：;:]+\s*|(?<!\d),\s*|,(?!\d)\s*|\s[-–—]\s+|$)", re.DOTALL)
_EN_UNNAMED = re.compile(rf"^{_EN_CUE}(?:it's|it is|it was|it'll be|that's|that is|i'm|i am)\s+(?:actually\s+|really\s+|now\s+)*"
                         rf"(?P<new>{_VALUE})$", _I)
_ZH_UNNAMED = re.compile(rf"^{_ZH_CUE}(?:现在|其实|实际上|应该)?(?:是|有)(?P<new>[^,，;；。!！?？]{{1,10}}?)了?$")
_ZH_SUBJECT_FRAME = re.compile(rf"^{_ZH_CUE}(?!我)[^,，;；。!！?？是]{{1,8}}是(?P<new>{_ZH_VALUE})[,，]?\s*(?:而)?不是(?P<old>{_ZH_VALUE})$")
_EN_ANY_REJECTED = re.compile(r"^(?P<head>[^,;]*?\b(?:is|are|was|were|'s|in|at|on|to)\s+[^,;]+?)\s*,?\s+(?:and\s+)?not\s+"
                              r"(?P<old>(?:an?\s+|the\s+)?[\w'-]+(?:\s+[\w'-]+)?)$", _I)
_ZH_ANY_REJECTED = re.compile(r"^(?P<head>[^,，。]+?)[,，]\s*(?:而)?(?P<at>不是在|不在|不是)(?P<old>[^,，。]{1,12})$")
_RETRACTED = re.compile(r"^(?:please\s+)?(?:scrap|forget|ignore|disregard|drop)\s+(?:that\s+|the\s+|my\s+)?(?P<old>.+?)"
                        r"(?:\s+(?:figure|number|amount|one|bit|part))?$", _I)
_TRAILING_SYMBOLS = re.compile(r"[^\w%]+$")


def is_correction_cued(sentence: str) -> bool:
    """The sentence carries a correction cue ("sorry", "我之前说错了")."""
    return _CUED.search(sentence) is not None


def cued_correction(sentence: str) -> tuple[str, str, str] | None:
    """`(wrong, right, rest of the sentence)` for a correction inside a longer sentence that carries a cue.

    Mechanism (correction in a clause): a cue ("sorry", "wait", "更正", "说错了") anywhere in the sentence
    lets the frames be read on each clause, or two clauses together ("不是瑜伽，是普拉提"); a rejected
    alternative counts then whoever the head is ("the workshop is in Bergen, not Oslo"); a frame with
    only the right value ("it's the 9th", "变成5条了") leaves the wrong value to its shape
    (`value_shapes`); "scrap the €500 budget … €750" retracts a value for the next one of its shape.
    """
    if not _CUED.search(sentence):
        return None
    pieces = [p for p in _PIECE.findall(sentence.strip()) if p.strip()]
    for reading in _READINGS:  # a frame that names both values anywhere in the sentence before any looser one
        for i in range(len(pieces)):
            for width in (2, 1):
                if i + width > len(pieces) or width == 2 and _cue_only(pieces[i]):
                    continue
                if reading is _unnamed and i > 0 and not _cue_only(pieces[i - 1]):
                    continue  # "我不是39岁，是40岁": the value continues a statement with a subject of its own
                window = clean("".join(pieces[i:i + width]).strip(_CLAUSE_ENDS))
                found = reading(window, "".join(pieces[i + width:]))
                if found is not None and _checked(found[:2]):
                    rest = [p for p in pieces[:i] if not _cue_only(p)] + ([found[2]] if found[2] else []) + pieces[i + width:]
                    return found[0], found[1], clean(" ".join(p.strip() for p in rest))
    return None


_CLAUSE_ENDS = " ,，;；:：。.!！"
Reading = tuple[str, str, str]
"""(wrong value, right value, the statement the clause still makes for the rules, or "")."""


def _stated(window: str) -> str:
    """The statement inside an unnamed correction in the first person ("sorry, I'm actually 44" -> "I'm actually
    44"): it stays for the rules, which may know its slot; "it's the 9th" says nothing on its own."""
    zh = CJK.search(window) is not None
    body = (_ZH_CUE_ONLY.sub("", _ZH_APOLOGY.sub("", window)) if zh else _EN_CUE_ONLY.sub("", window)).strip()
    return body if re.match(r"(?:i'm|i am|我)", body, _I) else ""


def _checked(pair: tuple[str, str]) -> bool:
    return bool(pair[1]) and pair[0].lower() != pair[1].lower() and not _NOT_VALUE.match(pair[1])


def _named(window: str, after: str) -> Reading | None:
    pair = named_correction(window)
    if pair is None and CJK.search(window):
        m = _ZH_SUBJECT_FRAME.match(window)
        pair = (_value(m.group("old")), _value(m.group("new"))) if m else None
    return (*pair, "") if pair else None


def _rejected(window: str, after: str) -> Reading | None:
    zh = CJK.search(window) is not None
    m = (_ZH_ANY_REJECTED if zh else _EN_ANY_REJECTED).match(_EN_CUE_ONLY.sub("", window) if not zh else window)
    return _rejected_pair(m, zh) if m else None  # the head stays: "the workshop is in Ghent"


def _unnamed(window: str, after: str) -> Reading | None:
    m = (_ZH_UNNAMED if CJK.search(window) else _EN_UNNAMED).match(window)
    new = _bare(_value(m.group("new"))) if m else ""
    return ("", new, _stated(window)) if new and has_shape(new) else None


def _retracted(window: str, after: str) -> Reading | None:
    m = _RETRACTED.match(window) if not CJK.search(window) else None
    olds = [v.strip() for v in _SHAPED_VALUE.findall(m.group("old")) if has_shape(v.strip())] if m else []
    news = same_shape_values(after, olds[-1]) if olds else []
    return (olds[-1], news[0], "") if news else None


_READINGS = (_named, _rejected, _unnamed, _retracted)


_SHAPED_VALUE = re.compile(r"[£$€¥]\s?\d(?:[\d,.]*\d)?k?|\d+(?:\.\d+)?\s?[a-z]{0,12}", _I)


def _value(raw: str) -> str:
    """The value up to the first emoji or symbol ("猫🙈 刚才打太快了" -> "猫")."""
    return _TRAILING_SYMBOLS.sub("", clean(_SYMBOL.split(raw, 1)[0]))


_SYMBOL = re.compile(r"[^\w\s£$€¥%.,'’-]")


def _cue_only(piece: str) -> bool:
    text = clean(piece)
    zh = CJK.search(text) is not None
    return not text or not (_ZH_CUE_ONLY.sub("", _ZH_APOLOGY.sub("", text)) if zh else _EN_CUE_ONLY.sub("", text)).strip()


def parse_correction_note(content: str) -> tuple[str, str] | None:
    """`(wrong, right)` of a correction note written by `correction_drafts`, else None."""
    m = _NOTE.match(content)
    if m is None:
        return None
    return (m.group("old") or "", m.group("new")) if m.group("new") else (m.group("zold"), m.group("znew"))


def holds_value(content: str, value: str) -> bool:
    """The value appears in the content: as a substring in Chinese, as whole words otherwise (a Latin word inside
    Chinese text, "在Google工作", is whole: only Latin letters and digits bound it)."""
    if CJK.search(value):
        return value in content
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", content, _I) is not None


def corrected_content(content: str, old: str, new: str) -> str:
    """The content with the wrong value replaced by the right one."""
    if CJK.search(old):
        return content.replace(old, new)
    if _PROPER.fullmatch(new) and " " in new and _PROPER.fullmatch(old):
        # a multi-word name replaces the whole name the old value ends ("Volkswagen Golf" -> "Skoda Octavia")
        whole = re.compile(rf"(?<![A-Za-z0-9_])(?:[A-Z][\w-]*\s+)*{re.escape(old)}(?![A-Za-z0-9_])")
        if whole.search(content):
            return whole.sub(new.replace("\\", r"\\"), content)
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])", new.replace("\\", r"\\"), content, flags=_I)


_PROPER = re.compile(r"[A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*)*")


def latest_holding(memories: Iterable[MemoryRecord], old: str, new: str) -> MemoryRecord | None:
    """The most recently updated user memory that holds the wrong value and not yet the right one."""
    found = [m for m in memories if not m.type.is_assistant and holds_value(m.content, old)
             and not holds_value(m.content, new) and parse_correction_note(m.content) is None]
    return max(found, key=lambda m: (m.updated_at, m.memory_id), default=None)


def corrected_candidate(candidate: Candidate, target: MemoryRecord, old: str, new: str) -> Candidate:
    """The target memory restated with the right value, as a candidate of the target's type and slot; it keeps
    the sensitive marks of both the target and the correction (a corrected appointment is still the clinic's)."""
    attribute = target.slot.split(".", 1)[1] if "." in target.slot else None
    entities = tuple(new if e == old else e for e in target.entities)
    topic = corrected_content(target.topic, old, new) if target.topic else None
    return Candidate(type=target.type, attribute=attribute, content=corrected_content(target.content, old, new),
                     confidence=max(candidate.confidence, target.confidence), entities=entities,
                     keywords=target.keywords, topic=topic, negated=target.negated,
                     source_message_ids=candidate.source_message_ids,
                     sensitive=tuple(sorted(set(target.sensitive) | set(candidate.sensitive))))
