"""Facts said in passing inside a request or a question ("Draft my farewell email - I'm leaving after
7 years at Brightwell").

Mechanism (request asides): a request or question sentence is cut into clauses
as usual; the clauses before the request part are statements (as before), and
so is every later clause that opens with a first-person subject and states
something rather than asking ("I'm the godfather", "I get anxious on long
drives"). A later clause that is itself a request, a question, a wish about the
answer ("I need it by …", "I want it short") or a conditional is not an aside.
The request part itself ("draft my retirement speech") is never a note, and
neither is a request put as a wish for a deliverable ("I'd like a summary in
200 words please", "I need a seating plan for the gala").
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_ASIDE = re.compile(r"^(?:i|i'm|i am|i've|i have|i'd been|we|we're|we've)\b", _I)
_NOT_ASIDE = re.compile(
    r"^(?:i|we)\s+(?:(?:really|just|also|still)\s+)*(?:need|want|would like|'d like|wonder|was wondering|hope|think|guess|"
    r"mean|don't know|do not know|have no idea|can't decide|am not sure|'m not sure|am wondering|'m wondering|"
    r"would|could|should|can|will|'ll|'d)\b"
    r"|\b(?:it|this|that|them|you|your)\b.*\b(?:by|before|until|in)\b.*$"
    r"|\bif\b|\?$",
    _I,
)


_WISH_REQUEST = re.compile(
    r"^(?:i'd like|i would like|i want|i need|i'd love|i'd appreciate|can i (?:get|have))\s+(?:a|an|the|some|your)?\s*"
    r"(?:[\w-]+\s+){0,2}(?:summary|list|version|answer|reply|response|draft|explanation|table|example|translation|outline|"
    r"overview|breakdown|recap|rewrite|checklist|template|estimate|quote|code snippet|snippet|diagram)s?\b"
    r"|^(?:i'd like|i would like|i want|i need)\b.*\bplease$", _I)


def is_wish_request(clause: str) -> bool:
    """ "I'd like a summary in 200 words please": a request for this answer, not a fact or a goal."""
    return _WISH_REQUEST.search(clause.strip()) is not None


def is_aside(clause: str) -> bool:
    """A first-person statement said beside a request ("I'm retiring after 30 years at the post office")."""
    text = clause.strip()
    return _ASIDE.match(text) is not None and _NOT_ASIDE.search(text) is None


def statements_around(clauses: list[str], before: list[str]) -> list[str]:
    """The statements of a request sentence: `before` (the clauses ahead of the request part) and the asides after it."""
    start = len(before)
    asides = [c for c in clauses[start + 1:] if is_aside(c)]
    return before + asides
