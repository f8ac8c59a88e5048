"""What the user says again on purpose reinforces what is remembered, whatever the rules make of its words.

Mechanism (restatement marker): "reminder I can't have shellfish", "and again, Celsius for all the recipes",
"再强调一遍，我吃素的" wrap a clause the user has said before (`clauses.restated`). The rules read the clause as
usual; besides, it becomes a repeat note ("User repeated: Celsius for all the recipes"). Consolidation
never stores such a note: it reinforces the user's memory that says the clause again (`restated_memory`),
unless this same turn already reinforced or created that memory. A marker is no proof that the clause was said
before: with no memory restating it, the clause is noted in the user's words like any other statement
(`ordinary_note`), unless the rules already noted something of it in this turn.

Mechanism (real restatement): a memory restates the clause when both have the same polarity - a negator on one
side only ("我不吃猪肉" / "我吃猪肉") makes another fact - and either one holds the other once the verbatim
prefix and the subject are dropped, or the memory holds more than half of the clause's search terms. One shared
word ("开会", "dentist") is not enough: a one-off meeting restates no standing one.
"""

from __future__ import annotations

from collections.abc import Iterable

from engram.core.text import terms
from engram.schemas.memory import MemoryRecord, MemoryType as T

from ..merge_rules import bare, comparable, has_negator, opposite_polarity

from .common import CJK, Draft

PREFIX_EN = "User repeated: "
PREFIX_ZH = "用户重申："
REPEAT_CONFIDENCE = 0.8
ORDINARY_CONFIDENCE = 0.45
"""A clause kept in the user's words: as sure as any statement no specific rule read."""
_FILLERS = frozenset(terms("please pls again thanks thank remember"))
"""Words of the marker's politeness, not of the fact ("no hills please")."""


def repeat_note(clause: str) -> Draft:
    """The repeat note of one restated clause."""
    prefix = PREFIX_ZH if CJK.search(clause) else PREFIX_EN
    return Draft(T.USER_FACT, prefix + clause, REPEAT_CONFIDENCE, None, None, False, ())


def parse_repeat_note(content: str) -> str | None:
    """The restated clause of a repeat note, else None."""
    for prefix in (PREFIX_EN, PREFIX_ZH):
        if content.startswith(prefix):
            return content[len(prefix):]
    return None


def restated_memory(memories: Iterable[MemoryRecord], said: str) -> MemoryRecord | None:
    """The user memory that restates the clause (the most search terms shared, then the latest), else None."""
    wanted = set(terms(bare(said))) - _FILLERS
    best: tuple[int, object, str] | None = None
    found: MemoryRecord | None = None
    for memory in memories:
        if memory.type.is_assistant or not restates_clause(said, wanted, memory.content):
            continue
        key = (len(wanted & set(terms(memory.content))), memory.updated_at, memory.memory_id)
        if best is None or key > best:  # type: ignore[operator]
            best, found = key, memory
    return found


def restates_clause(said: str, wanted: set[str], content: str) -> bool:
    """The memory says the clause again: same polarity, and one holds the other or it holds most of its terms."""
    if opposite_polarity(said, content):
        return False
    a, b = comparable(said), comparable(content)
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    if len(shorter) >= 2 and shorter in longer and 2 * len(shorter) >= len(longer):
        return True
    return bool(wanted) and 2 * len(wanted & set(terms(content))) > len(wanted)


def shares_terms(said: str, content: str) -> bool:
    """The content has a search term of the clause (not counting politeness)."""
    return bool((set(terms(bare(said))) - _FILLERS) & set(terms(content)))


def ordinary_note(said: str) -> tuple[str, bool]:
    """The clause as a note in the user's own words, and whether it denies something."""
    prefix = "用户说：" if CJK.search(said) else "User said: "
    return prefix + said, has_negator(said)
