"""Deterministic Chinese and English extraction rules (the embedded default extractor).

`extract_drafts(role, text)` is a pure function of its arguments, so its
result is cached: repeated messages ("我不吃葱" said in three sessions) cost
one dictionary lookup.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.core.pii import find_pii
from engram.core.text_caches import registered
from engram.schemas.memory import MemoryType, Role

from . import en_turn, zh
from .assistant import assistant_drafts
from .conditions import as_constraint
from .corrections import correction_drafts
from .clauses import collapse_repeats, restated, unwrap_reminders
from .common import CJK, Draft, entities_in, keywords_of, prepare, sentences, shorten
from .irony import ironic_turn
from .mention import mention_drafts
from .narrative import attachments
from .repeats import repeat_note
from .tense import is_plan
from .local_talk import local_talk_notes
from .answer_style import answer_style_notes
from .kin import kin_notes
from .standing import standing_notes

__all__ = ["Draft", "extract_drafts", "FALLBACK_CONFIDENCE"]

FALLBACK_CONFIDENCE = 0.45
"""Confidence of a statement kept verbatim because no specific rule matched it."""

MAX_FALLBACK_CHARS = 400
_LATIN_LETTERS = re.compile(r"[A-Za-z]")


def extract_drafts(role: Role, text: str, decision_signal: bool = True) -> tuple[Draft, ...]:
    """Drafts for one message. Assistant text yields nothing without a decision signal.

    The cache is keyed by the prepared text, and the signal only counts for
    assistant text, so the extract processor (the whole turn, signal False for
    a user) and the summarizer (the same sentence, default signal) share entries.
    """
    prepared = prepare(text)
    if not prepared or (role == "assistant" and not decision_signal):
        return ()
    return _drafts(role, prepared)


@registered
@lru_cache(maxsize=16384)
def _drafts(role: Role, prepared: str) -> tuple[Draft, ...]:
    if role == "assistant":
        drafts = assistant_drafts(prepared)
    else:
        drafts = _user_drafts(prepared)
    return tuple(_with_keywords(d) for d in drafts)


def _user_drafts(text: str) -> list[Draft]:
    """Each run of the turn read by the rules of its own language (code-switching).

    Described attachments ("[image: …]") are taken out first and noted on their own (`narrative.attachments`).
    """
    text = collapse_repeats(text)
    repeats = [repeat_note(clause) for clause in restated(text)]
    text, drafts = attachments(unwrap_reminders(text))
    text, corrections = correction_drafts(text)
    carried = False
    for run, chinese in script_runs(text):
        leftovers: list[str] = []
        if chinese:
            drafts.extend(zh.user_drafts(run, leftovers, carried))
        else:
            drafts.extend(en_turn.user_drafts(run, leftovers))
        drafts.extend(_fallback(leftover, chinese) for leftover in leftovers)
        carried = carried or bool(_SELF_MARK.search(run))
    if not drafts and not corrections and not CJK.search(text) and _clean(text) \
            and not ironic_turn([s for s, _ in sentences(text)]):
        drafts = mention_drafts(text)  # a turn with nothing about the user may still name what it answers
    if _clean(text) and not ironic_turn([s for s, _ in sentences(text)]):
        drafts.extend(standing_notes(text, drafts))  # standing facts of shapes the rules above do not read
        drafts.extend(kin_notes(text, drafts))  # the people and pets named with their relation to the user
        drafts.extend(local_talk_notes(text, drafts))  # the place whose weather the user talks of as their own
        drafts.extend(answer_style_notes(text, drafts))  # how to answer, asked for in general (even as a question)
    drafts.extend(corrections)  # after the statements, so a correction finds the right value already noted
    drafts.extend(repeats)  # last: a repeat reinforces only what this turn did not already
    return [as_constraint(d) for d in drafts if not _CREDENTIAL.search(d.content) and not _HANDLE.search(d.content)
            and not (d.attribute == "contact" and _CONTACT_NUMBER.search(d.content) and not find_pii(d.content))]


def _clean(text: str) -> bool:
    """No credential, handle or personal data anywhere in the whole turn.

    A mention keeps only some clauses of a turn, so the filter on its content alone would miss a value whose
    label was in a dropped clause ("Router wifi password: Maple8842 Cabin").
    """
    return not _CREDENTIAL.search(text) and not _HANDLE.search(text) and not find_pii(text)


_CREDENTIAL = re.compile(
    r"密码|口令|密钥|秘钥|令牌|验证码|(?<![a-z])(?:password|passwd|passcode|pwd|pin code|api key|api token|"
    r"access token|secret key|private key|recovery code|passphrase|pass phrase|"
    r"(?:door|gate|alarm|lock|entry|access|security|garage|wifi|wi-fi) code)s?(?![a-z])",
    re.IGNORECASE,
)
"""A careful note-taker never writes a credential down, however it is phrased
("my password for the billing dashboard is …"); the guard's redaction is the second line."""
_HANDLE = re.compile(
    r"(?:微信号|微信|QQ号|QQ|用户名|账号|账户)(?:是|为|:)|(?<![a-z])(?:wechat|whatsapp|telegram|skype|signal|discord|"
    r"instagram|twitter|username|user name|handle)(?:\s+(?:id|handle|number|name|account))?(?:\s+(?:is|are)|\s*:)",
    re.IGNORECASE,
)
"""Account handles: no detector redacts them, so they are left out like the numbers the guard masks."""


_NEGATED_NOTE = re.compile(r"^User\s+(?:is|was|has|does|did|can|will)?\s*(?:not|no longer|never)\b|^User (?:doesn't|didn't|can't|won't|isn't)\b"
                           r"|^用户(?:已经|现在|目前)?(?:不再|不|没有|没|从不|再也不)")
"""A note kept verbatim that denies something ("User is not tutoring anymore") has a negative stance."""
_CONTACT_NUMBER = re.compile(r"\d(?:[ .()/-]?\d){4,}")
"""A contact note never keeps a number too short for the guard's phone detectors (the guard redacts the rest)."""
_SELF_MARK = re.compile(r"我|\b(?:I|I'm|my|we)\b", re.IGNORECASE)
_PIECE = re.compile(r".+?(?:[，；。！？!?;\n]+|(?<!\d),|,(?!\d)|\.(?=\s)|:(?!\d|//)\s*(?=\S)|$)\s*", re.DOTALL)
"""Pieces end at clause punctuation (full-width commas are ASCII after NFKC), never inside "1,200"."""
_EN_OPENING = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|if|as|can|could|please|imagine)\b", re.IGNORECASE)
_GREETING_BEFORE_CJK = re.compile(r"^\s*(?:hi|hello|hey|hiya|hallo)\b[\W_]*(?=[\u4e00-\u9fff])", re.IGNORECASE)
_ZH_PRONOUN_ONLY = re.compile(r"^[我们的\s]+$")


def script_runs(text: str) -> list[tuple[str, bool]]:
    """The turn cut into runs of one language each: `(text, is_chinese)`, in order.

    A clause is Chinese when it has Chinese characters and either opens with
    one or has few Latin letters ("我是一名 sound engineer"), unless it opens
    with an English subject ("I'm from 成都") or its only Chinese is a pronoun
    ("我 moved to Boise", read as English with 我 as "I").
    """
    runs: list[tuple[str, bool]] = []
    for piece in _PIECE.findall(text):
        piece = _GREETING_BEFORE_CJK.sub("", piece)  # "Hi 我是 Nora": the greeting does not make the clause English
        chinese = _is_chinese(piece)
        if not chinese and CJK.search(piece):
            piece = _english_pronouns(piece)
        if runs and runs[-1][1] == chinese:
            runs[-1] = (runs[-1][0] + piece, chinese)
        else:
            runs.append((piece, chinese))
    return [(run.strip(), chinese) for run, chinese in runs if run.strip()]


def _is_chinese(piece: str) -> bool:
    cjk = CJK.findall(piece)
    if not cjk:
        return False
    stripped = piece.strip()
    if _EN_OPENING.match(stripped):
        return False
    if _ZH_PRONOUN_ONLY.match("".join(cjk)) and len(_LATIN_LETTERS.findall(piece)) >= 4:
        return False
    return CJK.match(stripped) is not None or len(_LATIN_LETTERS.findall(piece)) <= 2 * len(cjk)


def _english_pronouns(piece: str) -> str:
    return re.sub(r"我们\s*", "we ", re.sub(r"我的\s*", "my ", re.sub(r"我\s*", "I ", piece)))


def _with_keywords(d: Draft) -> Draft:
    keywords = keywords_of(d.content, d.topic)
    return Draft(d.type, d.content, d.confidence, d.attribute, d.topic, d.negated, d.entities, keywords)


def _fallback(leftover: str, chinese: bool) -> Draft:
    content = shorten(leftover, MAX_FALLBACK_CHARS)
    kind = MemoryType.USER_GOAL if is_plan(leftover) else MemoryType.USER_FACT  # a plan, not a current fact
    negated = _NEGATED_NOTE.search(content) is not None
    return Draft(kind, content, FALLBACK_CONFIDENCE, None, None, negated, entities_in(content, prose=True))
