"""Shared pieces of the rule extractor: drafts, sentence splitting, normalisation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engram.core.text import EN_STOPWORDS
from engram.schemas.memory import MemoryType


@dataclass(frozen=True, slots=True)
class Draft:
    """A candidate before it is bound to a turn (no message ids yet)."""

    type: MemoryType
    content: str
    confidence: float
    attribute: str | None = None
    topic: str | None = None
    negated: bool = False
    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_SPACE = re.compile(
    r"\s+(?=[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef])"
    r"|(?<=[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef])\s+"
)
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?\n])\s*|(?<=[.…])\s+")
_WS = re.compile(r"\s+")


def prepare(text: str) -> str:
    """NFKC (full-width letters and punctuation to ASCII), straight quotes, no emotive aside, single spaces."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return _WS.sub(" ", _EMOTIVE_ASIDE.sub("", text)).strip()


_INTERJECTIONS = (r"(?:so |very |kinda |a bit |真的?|好|太)?(?:sad|happy|sigh|ugh|lol|lmao|haha+|hehe|yay|jk|rip|oops|"
                  r"meh|ok|phew|whew|crying|smh|omg|哈+|呵+|嘿+|哭|笑|捂脸|叹气|唉|哎|呜+|狗头|手动狗头|破涕为笑|心累|无奈|"
                  r"开心|难过|伤心|尴尬|汗)")
_EMOTIVE_ASIDE = re.compile(r"\s*\((?:\s*" + _INTERJECTIONS + r"[\s!.,~]*)+\)", re.IGNORECASE)
"""A bracketed aside that only emotes ("(so sad)", "(lol)", "(哭)", "(手动狗头)"): a comment on the fact,
not part of it; a bracket that holds content ("(4)", "(Sarah)", "(gluten-free)") stays."""


def squeeze_cjk(text: str) -> str:
    """Drop the spaces beside CJK characters ("我是 Java 开发" -> "我是Java开发")."""
    return _CJK_SPACE.sub("", text)


def sentences(text: str) -> list[tuple[str, bool]]:
    """`(sentence, is_question)` pairs; terminators stay on the sentence."""
    out: list[tuple[str, bool]] = []
    for part in _SENTENCE_SPLIT.split(text):
        part = part.strip()
        if part:
            out.append((part, part.endswith("?")))
    return out


_TRIM = " \t,.;:!?~…\"'()[]{}<>-—*`“”‘’"
_EN_TOPIC_LEAD = re.compile(r"^(?:(?:the|a|an|my|some|any|all|to|more|much|really|also)\s+)+", re.I)
_EN_TOPIC_TAIL = re.compile(
    r"(?:\s+(?:anymore|any more|now|too|as well|a lot|a bit|so much|very much|the most|more|"
    r"these days|nowadays|again|at all|either|instead|though|lately|really))+$",
    re.I,
)
_ZH_TOPIC_TAIL = re.compile(r"(?:了|啦|的|呀|啊|哦|呢|(?<![酒网贴水氧书])吧|咯)+$")
"""Trailing particles; 吧 that ends a noun (酒吧, 网吧) is not one."""
_GENERIC_SUFFIX = re.compile(
    r"^(?P<core>[a-z0-9+#.\- ]*[a-z0-9+#])\s*(?:编程|语言|这门语言|开发|programming|language|lang)$"
)


def clean(value: str) -> str:
    """Trim punctuation and white space from both ends."""
    return value.strip(_TRIM)


def en_object(value: str) -> str:
    """An English object phrase without trailing fillers ("Go anymore" -> "Go")."""
    return clean(_EN_TOPIC_TAIL.sub("", clean(value)))


def zh_object(value: str) -> str:
    """A Chinese object phrase without trailing particles ("Java了" -> "Java")."""
    return clean(_ZH_TOPIC_TAIL.sub("", clean(value)))


def topic_of(value: str) -> str:
    """Normalised topic: lower case, no articles or fillers, generic suffixes dropped."""
    topic = _EN_TOPIC_LEAD.sub("", en_object(zh_object(value))).lower()
    topic = _WS.sub(" ", topic).strip()
    generic = _GENERIC_SUFFIX.match(topic)
    return generic.group("core").strip() if generic else topic


_LATIN_TERM = re.compile(r"[A-Za-z][A-Za-z0-9+#.'-]*[A-Za-z0-9+#]|[A-Za-z]")
_PROPER = re.compile(r"\b[A-Z][A-Za-z0-9+#'-]*[A-Za-z0-9+#]|\b[A-Z]\b")
_NOT_ENTITY = frozenset(
    {"I", "I'm", "I've", "I'd", "I'll", "User", "User's", "The", "A", "An", "My", "We", "It"}
)


def entities_in(value: str, prose: bool = False) -> tuple[str, ...]:
    """Named things: Latin terms inside Chinese text, capitalised words in English.

    In `prose` (whole sentences) a capital that only starts a sentence is not a name.
    """
    if CJK.search(value):
        found = _LATIN_TERM.findall(value)
    elif prose:
        found = [m.group() for m in _PROPER.finditer(value) if not _starts_sentence(value, m.start())]
    else:
        found = _PROPER.findall(value)
    return tuple(dict.fromkeys(e for e in found if e not in _NOT_ENTITY))


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \"'“‘(")
    return not before or before[-1] in ".!?:…"


_GENERIC_WORDS = frozenset(
    "user user's wants likes loves prefers enjoys longer doesn't has is was goal favorite".split()
)


def keywords_of(content: str, topic: str | None, limit: int = 8) -> tuple[str, ...]:
    """The topic plus the content's Latin words that are not stop words."""
    words: dict[str, None] = {}
    if topic:
        words[topic] = None
    for word in _LATIN_TERM.findall(content):
        low = word.lower().strip(".'-")
        if len(low) > 2 and low not in EN_STOPWORDS and low not in _GENERIC_WORDS:
            words[low] = None
        if len(words) >= limit:
            break
    return tuple(words)


def shorten(text: str, limit: int) -> str:
    """Cut at a word boundary to at most `limit` characters, marking the cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2 and not CJK.search(cut[space:]):
        cut = cut[:space]
    return cut.rstrip(_TRIM) + "…"


Rule = tuple["re.Pattern[str]", Callable[["re.Match[str]"], "Draft | None"]]


def first_draft(rules: Iterable[Rule], text: str) -> Draft | None:
    """The draft of the first rule that matches `text` and accepts the match."""
    for pattern, build in rules:
        m = pattern.search(text)
        if m is not None:
            draft = build(m)
            if draft is not None:
                return draft
    return None
