"""Pure text utilities shared by extraction, merge, recall and the embedder.

Chinese has no spaces, so "terms" are CJK character bigrams (plus single
characters for one-character runs) and Latin words; both are lower-cased and
NFKC-normalised first.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from .text_caches import registered

_CJK_RANGES = (
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x3040, 0x30FF), (0xAC00, 0xD7AF),
)
_CJK_CLASS = "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _CJK_RANGES)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_TOKEN_RE = re.compile(f"[a-z0-9][a-z0-9+#._'-]*|[{_CJK_CLASS}]+")
_PUNCT_RE = re.compile(r"[\s\W_]+", re.UNICODE)

EN_STOPWORDS = frozenset(
    """a an the and or but if then so to of in on at by for with from as is are was were be
    been being am do does did have has had i me my mine you your yours we our us he she it its
    they them their this that these those what which who whom whose when where why how there
    here not no yes just very can could would should will shall may might must about into over
    than too also any some all more most such only own same s t don didn doesn isn wasn ok okay
    really much many up out get got go going like one""".split()
)


def is_cjk_char(ch: str) -> bool:
    code = ord(ch)
    for lo, hi in _CJK_RANGES:
        if lo <= code <= hi:
            return True
    return False


VERBATIM_PREFIXES = ("User said: ", "用户说：")
"""How a note kept in the user's own words opens (`streams.rules.standing`)."""
VERBATIM_FRAME = re.compile(r"^\s*(?:User said:\s*|用户说[:：]\s*)")
"""That opening as read back (any spacing, either colon)."""


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


@registered
@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """NFKC, lower case, punctuation and white space folded to single spaces."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return _PUNCT_RE.sub(" ", folded).strip()


def compact(text: str) -> str:
    """`normalize` without any spaces: for containment and character sets."""
    return normalize(text).replace(" ", "")


@registered
@lru_cache(maxsize=65536)
def terms(text: str) -> tuple[str, ...]:
    """Search terms: Latin words (minus stop words) and CJK bigrams."""
    out: list[str] = []
    for run in _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower()):
        if is_cjk_char(run[0]):
            out.extend(_cjk_terms(run))
        else:
            word = run.strip("._'-")
            if word and word not in EN_STOPWORDS:
                out.append(_stem(word))
    return tuple(out)


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _stem(word: str) -> str:
    """A tiny English suffix stripper so like/likes/liked/liking meet."""
    if len(word) < 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def char_bigrams(text: str) -> frozenset[str]:
    flat = compact(text)
    if len(flat) < 2:
        return frozenset({flat}) if flat else frozenset()
    return frozenset(flat[i : i + 2] for i in range(len(flat) - 1))


def char_jaccard(a: str, b: str) -> float:
    """Character-set Jaccard of the normalised texts (cheap relatedness)."""
    sa, sb = set(compact(a)), set(compact(b))
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def bigram_overlap(query: str, text: str) -> float:
    """Share of the query's character bigrams that occur in the text."""
    q = char_bigrams(query)
    if not q:
        return 0.0
    return len(q & char_bigrams(text)) / len(q)


def contains_score(query: str, text: str) -> float:
    """Share of the query's terms that the text contains (1.0 if it contains them all)."""
    q_terms = set(terms(query))
    if not q_terms:
        return 0.0
    t_terms = set(terms(text))
    return len(q_terms & t_terms) / len(q_terms)


def estimate_tokens(text: str) -> int:
    """The one token estimate of Engram (recall's budget, the response's `tokens`, the benchmarks).

    One token per CJK character (Han, kana, Hangul: a tokenizer spends about one on each, often less),
    one per 4 other characters, rounded up. It is never below `len(text) / 4`, the count a caller
    checking a context by characters applies, and it overestimates rather than underestimates.
    """
    cjk = len(_CJK_RE.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def clip_tokens(text: str, limit: int) -> str:
    """`text` cut to at most `limit` estimated tokens (the ellipsis included), at a space where one is near."""
    if estimate_tokens(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits with the ellipsis
        mid = (low + high + 1) // 2
        low, high = (mid, high) if estimate_tokens(text[:mid]) + 1 <= limit else (low, mid - 1)
    cut = text[:low]
    space = cut.rfind(" ")
    return (cut[:space] if space > low * 0.7 else cut).rstrip() + "…"


# C0 controls except tab and line feed, DEL, C1 controls; zero-width space, word joiner, BOM;
# bidi embeddings, overrides and isolates (the "Trojan Source" characters). Zero-width (non-)joiners
# stay (emoji sequences and Indic/Persian scripts need them), so do the LRM/RLM marks. Lone
# surrogates (a JSON "\ud800" escape) cannot be stored as UTF-8 and go too.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u2060\ufeff\u202a-\u202e\u2066-\u2069\ud800-\udfff]+")


def has_visible(text: str) -> bool:
    """Whether `text` shows anything: a character that is neither white space (Z*) nor a control,
    format or unassigned one (C*) -- joiners and direction marks alone show nothing."""
    return any(unicodedata.category(ch)[0] not in "CZ" for ch in text)


def strip_control(text: str) -> str:
    """`text` without control and invisible formatting characters; CR LF and lone CR become LF."""
    if text.isprintable():  # the common case, and fast: no control, format or surrogate character at all
        return text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_RE.sub("", text)
