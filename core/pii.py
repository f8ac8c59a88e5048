"""Detection and redaction of personal data and secrets (never at rest in plain text).

`redact` runs on every candidate, every stored turn and every summarised
message, so it is built for the common case of "nothing to find": one cheap
pre-check per family of rules, and the heavier patterns only when it fires.

What it finds:

- numbers that *look* like personal data whatever introduces them: mainland
  mobiles (also dotted, spaced, dashed), international and local phone
  numbers, ID cards (GB 11643 checksum, groups may be spaced) and bank cards
  (Luhn), so ordinary long numbers are left alone;
- numbers *introduced* as personal data ("卡号", "card", "account", "ID",
  "phone number", ...), redacted whatever their checksum: a 19-digit salary
  card that fails Luhn is still a card when the user calls it one;
- e-mail addresses, also written `name (at) host (dot) com`;
- passwords and pass phrases after their label (`my pw is hunter2`, a quoted
  value is taken whole), API keys, tokens and PEM private keys.

Text is scanned in a width-folded copy (full-width digits, letters and
punctuation mapped to ASCII one character for one), so positions hold and
`１３８００１３８０００` is the phone number it looks like.

Audit digests: a hit carries a keyed HMAC-SHA256 of the span when a key is
given (a per-tenant secret, so a phone number cannot be recovered by hashing
every phone number), and no digest at all otherwise. An unkeyed hash of a
phone number is the phone number, so it is never produced.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from .text_caches import registered


@dataclass(frozen=True, slots=True)
class PiiHit:
    """One detected span: the rule that fired, its position and its keyed digest ("" without a key)."""

    rule: str
    start: int
    end: int
    digest: str = ""


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
ACCOUNT, PRIVATE_KEY = "pii.account", "pii.private_key"

PLACEHOLDERS: dict[str, str] = {
    PHONE: "[PHONE]",
    ID_CARD: "[ID_CARD]",
    BANK_CARD: "[BANK_CARD]",
    EMAIL: "[EMAIL]",
    PASSWORD: "[PASSWORD]",
    API_KEY: "[API_KEY]",
    ACCOUNT: "[ACCOUNT]",
    PRIVATE_KEY: "[PRIVATE_KEY]",
}
PLACEHOLDER_RE = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS.values()))
"""Matches any placeholder `redact` writes (to tell what is left after redaction)."""

# Priority when two hits overlap at the same start: lower wins.
_PRIORITY = {PRIVATE_KEY: 0, API_KEY: 1, PASSWORD: 2, EMAIL: 3, ID_CARD: 4, BANK_CARD: 5, ACCOUNT: 6, PHONE: 7}


def audit_digest(span: str, key: bytes | None) -> str:
    """HMAC-SHA256 of a span under a (per-tenant) secret; "" without a key, never a bare hash."""
    if not key:
        return ""
    return hmac.new(key, span.encode("utf-8"), hashlib.sha256).hexdigest()


# --- width folding: full-width forms -> ASCII, one character for one ----------
_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FOLD.update({0x3000: 0x20, 0x3002: 0x2E, 0x2014: 0x2D, 0x2013: 0x2D, 0x2212: 0x2D, 0x00A0: 0x20,
              0x2007: 0x20, 0x202F: 0x20, 0x2009: 0x20})
_NEEDS_FOLD = re.compile("[\uff01-\uff5e\u3000\u3002\u2013\u2014\u2212\u00a0\u2007\u2009\u202f]")


def fold_width(text: str) -> str:
    """`text` with full-width characters mapped to ASCII; same length, same positions."""
    return text.translate(_FOLD) if _NEEDS_FOLD.search(text) else text


# --- pre-checks: one pass each, most texts stop here -------------------------
_HAS_NUMBER = re.compile(r"[0-9][0-9 ().+-]{5,}[0-9]")
_SECRET_HINTS = (
    "密码", "口令", "密钥", "令牌", "秘钥", "暗号", "password", "passwd", "passcode", "passphrase",
    "pass phrase", "pwd", "pw", "pin", "token", "key", "secret", "sk-", "ghp_", "gho_", "ghu_", "ghs_",
    "ghr_", "github_pat_", "akia", "xox", "eyj", "aiza",
)
_EMAIL_HINTS = ("@", "(at)", "[at]", "{at}", "<at>", " at ")


def _has_hint(low: str, hints: tuple[str, ...]) -> bool:
    for hint in hints:
        if hint in low:
            return True
    return False


# --- numeric rules -----------------------------------------------------------
_SEP = r"[ .-]?"
_MOBILE = re.compile(
    r"(?<![\d+])(?:\+?86[ .-]?)?1[3-9]\d(?:\d{8}|[ .-]{1,2}\d{4}[ .-]{1,2}\d{4}|(?: ?\d){8})(?![\d])"
)
_INTL_PHONE = re.compile(
    r"(?<![A-Za-z0-9_+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?!\d)"
)
_LOCAL_PHONE = re.compile(
    r"(?<![\d-])(?:0\d{2,3}-\d{7,8}|\(\d{3}\) ?\d{3}[-.]\d{4}|\d{3}[-.]\d{3}[-.]\d{4})(?![\d-])"
)
_ID_CARD = re.compile(r"(?<![0-9A-Za-z])[1-9](?:[ -]?\d){16}[ -]?[0-9Xx](?![0-9A-Za-z])")
_CARD = re.compile(r"(?<![\d-])\d{4}(?:[ -]?\d){9,15}(?![\d-])")

# A number introduced as personal data is personal data, whatever its checksum.
_INTRO_LABELS: tuple[tuple[str, str], ...] = (
    (r"(?:银行卡|信用卡|储蓄卡|工资卡|借记卡)号?|卡号|card\s*(?:number|no\.?|num|#)?|iban", BANK_CARD),
    (r"身份证(?:号码|号)?|证件号(?:码)?|护照号(?:码)?|社保号|(?<![a-z])(?:id|ssn|passport)(?:\s*(?:card|number|no\.?|num|#))?(?![a-z])",
     ID_CARD),
    (r"账号|账户|帐号|帐户|户号|(?<![a-z])(?:account|acct)(?:\s*(?:number|no\.?|num|#))?", ACCOUNT),
    (r"手机(?:号码|号)?|电话(?:号码)?|联系方式|(?<![a-z])(?:phone|mobile|cell|tel|telephone|whatsapp|wechat)"
     r"(?:\s*(?:number|no\.?|num|#))?(?![a-z])", PHONE),
)
_INTRO = re.compile(
    "(?:" + "|".join(f"(?P<r{i}>{pattern})" for i, (pattern, _) in enumerate(_INTRO_LABELS)) + ")"
    + r"(?:\s*(?:是|为|：|:|=|is|was|are|#|-)){0,2}\s*(?P<v>\+?\d(?:[ .()-]{0,2}\d){5,30}[Xx]?)(?![0-9])",
    re.IGNORECASE,
)

# --- textual rules -----------------------------------------------------------
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_AT = r"\s*(?:\(at\)|\[at\]|\{at\}|<at>)\s*"
_DOT = r"\s*(?:\.|\(dot\)|\[dot\]|\{dot\}|<dot>)\s*|\s+dot\s+"
_OBFUSCATED_EMAIL = re.compile(
    rf"[A-Za-z0-9._%+-]+(?:{_AT})[A-Za-z0-9-]+(?:(?:{_DOT})[A-Za-z0-9-]+)*(?:{_DOT})[A-Za-z]{{2,}}(?![A-Za-z])"
    r"|[A-Za-z0-9._%+-]+\s+at\s+[A-Za-z0-9-]+(?:\s+dot\s+[A-Za-z0-9-]+)*\s+dot\s+[A-Za-z]{2,}(?![A-Za-z])",
    re.IGNORECASE,
)
_PW_LABEL = (
    r"(?:密码|口令|暗号|(?<![a-z])(?:password|passwd|passcode|pwd|pw|pin)(?![a-z]))"
)
_PW_SEP = r"\s*(?:(?:是|为|：|:|=|is\b|was\b)\s*){1,2}"
_QUOTED = r"\"(?P<q1>[^\"\n]{1,256})\"|“(?P<q2>[^”\n]{1,256})”|'(?P<q3>[^'\n]{1,256})'|‘(?P<q4>[^’\n]{1,256})’|「(?P<q5>[^」\n]{1,256})」"
_PASSWORD = re.compile(
    rf"{_PW_LABEL}{_PW_SEP}(?:{_QUOTED}|(?P<v>[^\s，。,;；\"'“”‘’]{{1,128}}))",
    re.IGNORECASE,
)
_PASSPHRASE = re.compile(
    r"(?:pass\s?phrase|secret\s+phrase|口令短语|助记词|seed\s+phrase|recovery\s+phrase)"
    rf"{_PW_SEP}(?:{_QUOTED}|(?P<v>[^\n，。,;；!?！？\"“”]{{1,256}}))",
    re.IGNORECASE,
)
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
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
_NOT_DIGIT = re.compile(r"[^0-9Xx]")

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


def _spaced_id_valid(span: str) -> bool:
    return id_card_valid(_NOT_DIGIT.sub("", span))


def _enough_digits(span: str) -> bool:
    return sum(ch.isdigit() for ch in span) >= 8


def _key_like(value: str) -> bool:
    return bool(_LETTER.search(value)) and bool(_DIGIT.search(value))


_Span = tuple[int, int, str]
_Check = Callable[[str], bool] | None

_NUMERIC_RULES: tuple[tuple[re.Pattern[str], str, _Check], ...] = (
    (_ID_CARD, ID_CARD, _spaced_id_valid),
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
    validated = {start for start, _, _ in out}
    for m in _INTRO.finditer(text):
        if m.start("v") in validated:  # a checksum-valid number already has its exact span
            continue
        rule = next(r for i, (_, r) in enumerate(_INTRO_LABELS) if m.group(f"r{i}") is not None)
        out.append((m.start("v"), m.end("v"), rule))


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


def _value_span(m: re.Match[str]) -> tuple[int, int]:
    for name in ("q1", "q2", "q3", "q4", "q5", "v"):
        if m.group(name) is not None:
            start, end = m.start(name), m.end(name)
            value = m.group(name)
            stripped = value.rstrip(" .")
            return start, start + len(stripped) if stripped else end
    return m.start(), m.end()


def _secret_spans(text: str, out: list[_Span]) -> None:
    for m in _KNOWN_KEY.finditer(text):
        out.append((m.start(), m.end(), API_KEY))
    for m in _LABELLED_KEY.finditer(text):
        if _key_like(m.group("v")):
            out.append((m.start("v"), m.end("v"), API_KEY))
    for pattern in (_PASSWORD, _PASSPHRASE):
        for m in pattern.finditer(text):
            start, end = _value_span(m)
            out.append((start, end, PASSWORD))


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
    if "-----BEGIN" in text:
        spans.extend((m.start(), m.end(), PRIVATE_KEY) for m in _PEM.finditer(text))
    if _HAS_NUMBER.search(text):
        _numeric_spans(text, spans)
    low = text.lower()
    if _has_hint(low, _EMAIL_HINTS):
        spans.extend((m.start(), m.end(), EMAIL) for m in _EMAIL.finditer(text))
        if "at" in low:
            spans.extend((m.start(), m.end(), EMAIL) for m in _OBFUSCATED_EMAIL.finditer(text))
    if _has_hint(low, _SECRET_HINTS):
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
    """A fresh list of `_find_pii(text)` (cached: a turn's text is scanned by the guard, the summary and the
    projection, and repeats are common)."""
    return list(_find_pii(text))


@registered
@lru_cache(maxsize=32768)
def _find_pii(text: str) -> tuple[tuple[int, int, str], ...]:
    """All `(start, end, rule)` spans of personal data in `text`, sorted, never overlapping.

    Positions are those of `text` itself (scanning happens on a width-folded
    copy of the same length). A secret glued to another ("…002X13800138000")
    may only be recognisable once its neighbour is gone, so found spans are
    masked (same length, so positions hold) and the text is scanned again
    until nothing new turns up.
    """
    folded = fold_width(text)
    spans = _scan(folded)
    if not spans:
        return ()
    found = _select(spans)
    for _ in range(3):
        extra = [s for s in _scan(_mask(folded, found)) if not _overlaps(s, found)]
        if not extra:
            break
        found = _select(found + extra)
    return tuple(found)


def _overlaps(span: _Span, spans: list[_Span]) -> bool:
    return any(span[0] < end and start < span[1] for start, end, _ in spans)


_NO_HITS: tuple[PiiHit, ...] = ()


def redact(text: str, key: bytes | None = None) -> Redaction:
    """Replace every detected span with its placeholder, e.g. `[PHONE]`.

    With a `key` (a per-tenant secret) each hit carries the HMAC of its span.
    """
    spans = find_pii(text)
    if not spans:
        return Redaction(text, _NO_HITS)
    parts: list[str] = []
    hits: list[PiiHit] = []
    pos = 0
    for start, end, rule in spans:
        parts.append(text[pos:start])
        parts.append(PLACEHOLDERS[rule])
        hits.append(PiiHit(rule, start, end, audit_digest(text[start:end], key)))
        pos = end
    parts.append(text[pos:])
    return Redaction("".join(parts), tuple(hits))


def redact_text(text: str) -> str:
    """Only the redacted text (what every projection stores in plain text)."""
    return redact(text).text if text else text


def contains_pii(text: str) -> bool:
    """True if `redact` would change `text`."""
    return bool(find_pii(text))
