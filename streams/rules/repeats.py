"""What the user says again on purpose reinforces what is remembered, whatever the rules make of its words.

Mechanism (restatement marker): "reminder I'm lactose intolerant", "and again, metric please for everything",
"再强调一遍，我吃素的" wrap a clause the user has said before (`clauses.restated`). The rules read the clause as
usual; besides, it becomes a repeat note ("User repeated: metric please for everything"). Consolidation
never stores such a note: it reinforces the user's memory that shares the most search terms with the clause
(the latest on a tie), unless this same turn already reinforced or created that memory; with no memory
sharing a term, the note is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from engram.core.text import terms
from engram.schemas.memory import MemoryRecord, MemoryType as T

from .common import CJK, Draft

PREFIX_EN = "User repeated: "
PREFIX_ZH = "用户重申："
REPEAT_CONFIDENCE = 0.8


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
    """The user memory sharing the most search terms with the restated clause (the latest on a tie)."""
    wanted = set(terms(said))
    best: tuple[int, object, str] | None = None
    found: MemoryRecord | None = None
    for memory in memories:
        if memory.type.is_assistant:
            continue
        shared = len(wanted & set(terms(memory.content)))
        key = (shared, memory.updated_at, memory.memory_id)
        if shared and (best is None or key > best):  # type: ignore[operator]
            best, found = key, memory
    return found
