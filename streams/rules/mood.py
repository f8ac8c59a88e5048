"""What a sentence does besides stating a fact: hypotheticals, sarcasm, one-off requests.

These are sentence-level moods, checked before any fact rule runs, in both
languages (and across a code-switched sentence):

- hypothetical: a conditional or imagined premise ("If I were a pilot…",
  "Imagine I quit…", "如果我是校长…", "要是…就好了") - nothing in the
  sentence is a fact about the user;
- sarcasm: an ironic cue ("oh great", "yeah, because", "wow", "呵呵", "太好了")
  together with a hyperbolic positive ("just love", "absolutely adore",
  "可太喜欢", "最喜欢") - the stated liking is the opposite of what is meant;
- one-off: a need bound to the moment ("tonight", "today", "今晚", "明天") -
  a request, not a lasting goal.
"""

from __future__ import annotations

import re

from .irony import is_ironic

_I = re.IGNORECASE
_EN_HYPOTHETICAL = re.compile(
    r"^(?:(?:and|but|so|well|oh|honestly|hmm+|ok(?:ay)?)\b[,\s]*)*"
    r"(?:if|imagine|suppose|supposing|assuming|what if|in case|hypothetically|let's say|say i|were i)\b"
    r"|\b(?:if i were|if i was|if i had|if i could|i wish i(?: were|'d| had| could)?)\b",
    _I,
)
_ZH_HYPOTHETICAL = re.compile(r"(?:^|[,，\s])(?:如果|假如|要是|假设|万一|倘若|假使|若是|如果说)|就好了")
_EN_IRONY_CUE = re.compile(
    r"^(?:oh\s+)?(?:great|wow|sure|yeah right|oh joy|fantastic|wonderful|just great)\b"
    r"|\byeah,?\s+because\b|^because\b|/s\s*$|\bnot\b.*\blol\b",
    _I,
)
_EN_HYPERBOLE = re.compile(
    r"\b(?:just|totally|absolutely|really|so|simply|truly)\s+(?:love|adore|enjoy|like)\b"
    r"|\b(?:love|adore)\s+(?:it\s+)?when\b",
    _I,
)
_ZH_IRONY_CUE = re.compile(r"^(?:呵呵|呵|太好了|好极了|真棒|真好|哈哈+)|真是太棒了|太棒了呢|真开心呢|可真行")
_ZH_HYPERBOLE = re.compile(r"(?:可太|真是太|太|最|简直太|实在太)(?:喜欢|爱|享受)")
_EN_MOMENT = re.compile(
    r"\b(?:tonight|today|right now|this (?:morning|afternoon|evening|weekend)|tomorrow|for now|asap)\b", _I
)
_ZH_MOMENT = re.compile(r"今天|今晚|明天|待会|一会儿|马上|现在就|这周末|今早")
_HABITUAL = re.compile(r"\b(?:every|always|usually|each)\b|每天|每周|总是|一直|平时", _I)


def is_hypothetical(sentence: str) -> bool:
    """A conditional or imagined premise: the sentence states nothing about the user."""
    return bool(_EN_HYPOTHETICAL.search(sentence) or _ZH_HYPOTHETICAL.search(sentence))


def is_sarcastic(sentence: str) -> bool:
    """An ironic cue together with a hyperbolic positive, or praise for a nuisance (`irony`)."""
    en = _EN_IRONY_CUE.search(sentence) and _EN_HYPERBOLE.search(sentence)
    zh = _ZH_IRONY_CUE.search(sentence) and (_ZH_HYPERBOLE.search(sentence) or _EN_HYPERBOLE.search(sentence))
    return bool(en or zh) or is_ironic(sentence)


def is_momentary(sentence: str) -> bool:
    """A need bound to the moment ("tonight", "今晚"), unless it is said to recur."""
    moment = _EN_MOMENT.search(sentence) or _ZH_MOMENT.search(sentence)
    return bool(moment) and not _HABITUAL.search(sentence)
