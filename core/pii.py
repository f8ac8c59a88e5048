"""Detection and redaction of personal data and secrets (SPEC §3.4).

`redact` runs on every candidate and every summarised message, so it is built
for the common case of "nothing to find": one cheap pre-check per family of
rules, and the heavier patterns only when the pre-check fires. Numeric rules
validate what they match (GB 11643 checksum for ID cards, Luhn for bank cards)
so ordinary long numbers are left alone.

Each hit carries the SHA-256 of the matched original span, so audits can prove
what was removed without ever holding the secret itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PiiHit:
    """One detected span: the rule that fired, its position and a hash of it."""

    rule: str
    start: int
    end: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Redaction:
    """The text with every hit replaced by its placeholder, and the hits."""

    text: str
    hits: tuple[PiiHit, ...]

    @property
    def changed(self) -> bool:
        return bool(self.hits)


PHONE, ID_CARD, BANK_CARD = "pii.phone", "pii.id_card", "pii.bank_card"
EMAIL, PASSWORD, API_KEY = "pii.email", "pii.password", "pii.api_key"

PLACEHOLDERS: dict[str, str] = {
    PHONE: "[PHONE]",
    ID_CARD: "[ID_CARD]",
    BANK_CARD: "[BANK_CARD]",
    EMAIL: "[EMAIL]",
    PASSWORD: "[PASSWORD]",
    API_KEY: "[API_KEY]",
}
PLACEHOLDER_RE = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS.values()))
"""Matches any placeholder `redact` writes (to tell what is left after redaction)."""

# Priority when two hits overlap at the same start: lower wins.
_PRIORITY = {API_KEY: 0, PASSWORD: 1, EMAIL: 2, ID_CARD: 3, BANK_CARD: 4, PHONE: 5}

# --- pre-checks: one pass each, most texts stop here -------------------------
_HAS_NUMBER = re.compile(r"[0-9][0-9 ().+-]{5,}[0-9]")
_SECRET_HINTS = (
    "密码", "口令", "密钥", "令牌", "秘钥", "password", "passwd", "passcode", "pwd", "token",
    "key", "secret", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia",
    "xox", "eyj", "aiza",
)


def _has_secret_hint(text: str) -> bool:
    low = text.lower()
    for hint in _SECRET_HINTS:
        if hint in low:
            return True
    return False


# --- numeric rules -----------------------------------------------------------
_MOBILE = re.compile(r"(?<![\d+])(?:\+?86[ -]?)?1[3-9]\d(?:\d{8}|[ -]\d{4}[ -]\d{4})(?!\d)")
_INTL_PHONE = re.compile(
    r"(?<![A-Za-z0-9_+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?!\d)"
)
_LOCAL_PHONE = re.compile(
    r"(?<![\d-])(?:0\d{2,3}-\d{7,8}|\(\d{3}\) ?\d{3}-\d{4}|\d{3}-\d{3}-\d{4})(?![\d-])"
)
_ID_CARD = re.compile(r"(?<![0-9A-Za-z])[1-9]\d{16}[0-9Xx](?![0-9A-Za-z])")
_CARD = re.compile(r"(?<![\d-])\d{4}(?:[ -]?\d){9,15}(?![\d-])")

# --- textual rules -----------------------------------------------------------
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PASSWORD = re.compile(
    r"(?:密码|口令|(?<![a-z])(?:password|passwd|passcode|pwd)(?![a-z]))"
    r"\s*(?:是|为|：|:|=|is\b)\s*[\"'“‘]?(?P<v>[^\s，。,;；\"'”’]{1,128})",
    re.IGNORECASE,
)
_KNOWN_KEY = re.compile(
    r"(?<![A-Za-z_-])(?:[sS][kK]-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)
_LABELLED_KEY = re.compile(
    r"(?:(?<![a-z])(?:api[ _-]?key|access[ _-]?key|secret(?:[ _-]?key)?|token)(?![a-z])|密钥|秘钥|令牌)"
    r"\s*(?:是|为|：|:|=|is\b)?\s*[\"'“‘]?(?P<v>[A-Za-z0-9_\-./+=]{16,256})",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def id_card_valid(number: str) -> bool:
    """GB 11643-1999: 17 digits, a plausible birth date, and the mod-11 check code."""
    if len(number) != 18 or not number[:17].isdigit():
        return False
    month, day = int(number[10:12]), int(number[12:14])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return False
    total = sum(int(d) * w for d, w in zip(number, _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == number[17].upper()


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) check of a digit string."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _bank_card_valid(span: str) -> bool:
    digits = span.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn_valid(digits)


def _enough_digits(span: str) -> bool:
    return sum(ch.isdigit() for ch in span) >= 8


def _key_like(value: str) -> bool:
    return bool(_LETTER.search(value)) and bool(_DIGIT.search(value))


_Span = tuple[int, int, str]
_Check = Callable[[str], bool] | None

_NUMERIC_RULES: tuple[tuple[re.Pattern[str], str, _Check], ...] = (
    (_ID_CARD, ID_CARD, id_card_valid),
    (_MOBILE, PHONE, None),
    (_INTL_PHONE, PHONE, _enough_digits),
    (_LOCAL_PHONE, PHONE, None),
)


_DIGIT_GROUP = re.compile(r"\d+")


def _numeric_spans(text: str, out: list[_Span]) -> None:
    for pattern, rule, check in _NUMERIC_RULES:
        for m in pattern.finditer(text):
            if check is None or check(m.group()):
                out.append((m.start(), m.end(), rule))
    for m in _CARD.finditer(text):
        span = _card_span(m)
        if span is not None:
            out.append((span[0], span[1], BANK_CARD))


def _card_span(m: re.Match[str]) -> tuple[int, int] | None:
    """The whole match if it passes Luhn, else its longest run of whole digit groups that does.

    ("4111 1111 1111 1111 0": a card followed by an unrelated number.)
    """
    if _bank_card_valid(m.group()):
        return m.start(), m.end()
    groups = [(g.start(), g.end()) for g in _DIGIT_GROUP.finditer(m.group())]
    best: tuple[int, int] | None = None
    for i in range(len(groups)):
        for j in range(len(groups) - 1, i - 1, -1):
            start, end = groups[i][0], groups[j][1]
            if (best is None or end - start > best[1] - best[0]) and _bank_card_valid(m.group()[start:end]):
                best = (start, end)
                break
    return None if best is None else (m.start() + best[0], m.start() + best[1])


def _secret_spans(text: str, out: list[_Span]) -> None:
    for m in _KNOWN_KEY.finditer(text):
        out.append((m.start(), m.end(), API_KEY))
    for m in _LABELLED_KEY.finditer(text):
        if _key_like(m.group("v")):
            out.append((m.start("v"), m.end("v"), API_KEY))
    for m in _PASSWORD.finditer(text):
        out.append((m.start("v"), m.end("v"), PASSWORD))


def _select(spans: list[_Span]) -> list[_Span]:
    """Earliest first; overlapping spans merge into one (the earlier, longer rule names it).

    Merging, rather than dropping the later span, never leaves part of a secret behind.
    """
    spans.sort(key=lambda s: (s[0], s[0] - s[1], _PRIORITY[s[2]]))
    merged: list[_Span] = []
    for start, end, rule in spans:
        if merged and start < merged[-1][1]:
            first = merged[-1]
            merged[-1] = (first[0], max(first[1], end), first[2])
        else:
            merged.append((start, end, rule))
    return merged


def _scan(text: str) -> list[_Span]:
    spans: list[_Span] = []
    if _HAS_NUMBER.search(text):
        _numeric_spans(text, spans)
    if "@" in text:
        spans.extend((m.start(), m.end(), EMAIL) for m in _EMAIL.finditer(text))
    if _has_secret_hint(text):
        _secret_spans(text, spans)
    return spans


def _mask(text: str, spans: list[_Span]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end, _ in spans:
        parts.append(text[pos:start])
        parts.append("\x00" * (end - start))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def find_pii(text: str) -> list[tuple[int, int, str]]:
    """All `(start, end, rule)` spans of personal data in `text`, sorted, never overlapping.

    A secret glued to another ("…002X13800138000") may only be recognisable once
    its neighbour is gone, so found spans are masked (same length, so positions
    hold) and the text is scanned again until nothing new turns up.
    """
    spans = _scan(text)
    if not spans:
        return spans
    found = _select(spans)
    for _ in range(3):
        extra = [s for s in _scan(_mask(text, found)) if not _overlaps(s, found)]
        if not extra:
            break
        found = _select(found + extra)
    return found


def _overlaps(span: _Span, spans: list[_Span]) -> bool:
    return any(span[0] < end and start < span[1] for start, end, _ in spans)


_NO_HITS: tuple[PiiHit, ...] = ()


def redact(text: str) -> Redaction:
    """Replace every detected span with its placeholder, e.g. `[PHONE]`."""
    spans = find_pii(text)
    if not spans:
        return Redaction(text, _NO_HITS)
    parts: list[str] = []
    hits: list[PiiHit] = []
    pos = 0
    for start, end, rule in spans:
        parts.append(text[pos:start])
        parts.append(PLACEHOLDERS[rule])
        digest = hashlib.sha256(text[start:end].encode("utf-8")).hexdigest()
        hits.append(PiiHit(rule, start, end, digest))
        pos = end
    parts.append(text[pos:])
    return Redaction("".join(parts), tuple(hits))


def contains_pii(text: str) -> bool:
    """True if `redact` would change `text`."""
    return bool(find_pii(text))
