"""Clause-level repairs that keep every fact of a long turn.

Mechanisms:

- verb-first clause: in a list of facts about the user, a clause that opens
  with a bare verb and a possessive ("walk my dog every morning", "run our
  family shop") has dropped its "I"; the subject is put back. Words that open
  clauses without being verbs (prepositions, conjunctions, adverbs) never count.
- reminder frame: a statement wrapped in a reminder ("Just a reminder that I
  still hate cilantro", "As I said, I'm vegan", "再说一遍，我不喝酒") is the
  statement itself, so it reinforces the memory it repeats instead of being
  lost in the wrapper.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_VERB_FIRST = re.compile(r"^(?P<v>[a-z]{3,})\s+(?:my|our)\s+\w", _I)
_NOT_VERB = frozenset(
    """about above across after against along among around at before behind below beside between beyond but by
    despite down during except for from inside into like near off onto out outside over past since than through
    throughout till toward towards under until upon with within without and also then just only even still
    plus both all including especially mostly mainly not never always sometimes usually often because though
    although while whereas unless once where when what which who whose how why thanks thank tell ask see
    love miss hope wish""".split()
)
_EN_REMINDER = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:(?:just|again|once again|quick|friendly)\s+)*(?:a\s+)?(?:(?:friendly|quick)\s+)?"
    r"(?:reminder|remember|recall|note)(?:\s*[:,-]\s*|\s+that\s+)"
    r"|(?:^|(?<=[.!?]\s))(?:as|like)\s+i\s+(?:said|mentioned|told you|wrote)(?:\s+(?:before|earlier|last time|already))?\s*[,:]?\s*"
    r"|(?:^|(?<=[.!?]\s))i\s+(?:already\s+)?(?:told you|said|mentioned)(?:\s+(?:before|earlier|last time))?\s*(?:[,:]\s*|\s+that\s+)"
    r"|(?:^|(?<=[.!?]\s))again\s*,\s*",
    _I,
)
_ZH_REMINDER = re.compile(r"(?:^|(?<=[。！？]))(?:再说一遍|再说一次|再强调一下|再强调一遍|再提醒一下|提醒一下|我说过了?|之前说过了?|跟你说过了?|我之前说过)[,，:：]?\s*")


def verb_first(clause: str) -> str | None:
    """ "walk my dog every morning" -> "I walk my dog every morning"; None when it does not open with a verb."""
    m = _VERB_FIRST.match(clause)
    if m is None or m.group("v").lower() in _NOT_VERB:
        return None
    return "I " + clause[:1].lower() + clause[1:]


def unwrap_reminders(text: str) -> str:
    """The turn with reminder frames taken off the statements they wrap."""
    if not _EN_REMINDER.search(text) and not _ZH_REMINDER.search(text):
        return text
    text = _ZH_REMINDER.sub("", _EN_REMINDER.sub("", text))
    return text[:1].upper() + text[1:] if text[:1] == "i" else text
