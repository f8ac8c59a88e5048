"""Which memories a forget request reaches."""

from __future__ import annotations

from engram.core.text import compact, contains_score
from engram.schemas.events import ForgetRequested
from engram.schemas.memory import MemoryRecord

TOPIC_MATCH = 0.5


def select_forget_targets(memories: list[MemoryRecord], request: ForgetRequested) -> list[MemoryRecord]:
    """Memories named by id, matching the topic text, or all of them; sorted by id."""
    if request.everything:
        chosen = memories
    elif request.memory_ids:
        wanted = set(request.memory_ids)
        chosen = [m for m in memories if m.memory_id in wanted]
    elif request.topic_text.strip():
        chosen = [m for m in memories if _about(m, request.topic_text)]
    else:
        chosen = []
    return sorted(chosen, key=lambda m: m.memory_id)


def _about(memory: MemoryRecord, topic_text: str) -> bool:
    needle = compact(topic_text)
    if needle and (needle in compact(memory.content) or (memory.topic and needle in compact(memory.topic))):
        return True
    return contains_score(topic_text, memory.content) >= TOPIC_MATCH
