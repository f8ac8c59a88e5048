"""Which memories a forget request reaches.

By id, everything, or a topic ("forget my daughter", "忘掉我女儿的事"). A topic
is matched the way recall matches a question, lexical and semantic:

- the command words are dropped first ("forget", "about", "my", "忘掉", "关于",
  "的事"...), so the topic is what is left ("daughter", "女儿");
- lexical: the memory (content, topic, entities, keywords) contains the topic
  compacted, or at least half of its search terms (`core.text.terms`:
  words, CJK bigrams);
- semantic: the cosine of the topic's and the memory's embeddings (the same
  embedder recall uses) reaches `RecallConfig.semantic_match_cosine`, the
  threshold at which recall takes a memory that shares no term with the
  question.

`dry_run` callers (the access layer) use the same function, so what a dry run
shows is exactly what the forget will erase.
"""

from __future__ import annotations

import re

from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.embedding import Embedder, cosine, embed_text
from engram.core.text import compact, contains_score
from engram.schemas.events import ForgetRequested
from engram.schemas.memory import MemoryRecord

TOPIC_MATCH = 0.5

_COMMAND_WORDS = re.compile(
    r"^\s*(?:please\s+|pls\s+)?(?:forget|erase|delete|remove|drop)\s+(?:about\s+|everything\s+about\s+|all\s+about\s+)?"
    r"|^\s*(?:请|请你|帮我)?(?:忘掉|忘记|忘了|删掉|删除|别再记得|不要记得)(?:关于)?"
    r"|(?:的事情|的事|的一切|相关的内容|相关的|相关)\s*$",
    re.IGNORECASE,
)
_LEADING_OWNER = re.compile(r"^\s*(?:(?:my|our|the|me|about)\b|我的|我们的|我|关于)\s*", re.IGNORECASE)


def topic_of(topic_text: str) -> str:
    """The topic a forget request names, without its command words."""
    text = _COMMAND_WORDS.sub("", topic_text.strip())
    text = _COMMAND_WORDS.sub("", text)
    for _ in range(3):
        stripped = _LEADING_OWNER.sub("", text)
        if stripped == text:
            break
        text = stripped
    return text.strip(" \t.,!?。，！？") or topic_text.strip()


def select_forget_targets(memories: list[MemoryRecord], request: ForgetRequested,
                          embedder: Embedder | None = None, config: EngramConfig = DEFAULT_CONFIG
                          ) -> list[MemoryRecord]:
    """Memories named by id, matching the topic text, or all of them; sorted by id."""
    if request.everything:
        chosen = memories
    elif request.memory_ids:
        wanted = set(request.memory_ids)
        chosen = [m for m in memories if m.memory_id in wanted]
    elif request.topic_text.strip():
        chosen = matching_topic(memories, request.topic_text, embedder, config)
    else:
        chosen = []
    return sorted(chosen, key=lambda m: m.memory_id)


def matching_topic(memories: list[MemoryRecord], topic_text: str, embedder: Embedder | None = None,
                   config: EngramConfig = DEFAULT_CONFIG) -> list[MemoryRecord]:
    """The memories about a topic, lexically or semantically (see the module docstring)."""
    topic = topic_of(topic_text)
    vector = embed_text(embedder, topic) if embedder is not None and memories else None
    threshold = config.recall.semantic_match_cosine
    out = []
    for memory in memories:
        if _lexical(memory, topic) or (
                vector is not None and embedder is not None
                and cosine(vector, embed_text(embedder, memory.content)) >= threshold):
            out.append(memory)
    return out


def _lexical(memory: MemoryRecord, topic: str) -> bool:
    needle = compact(topic)
    text = " ".join((memory.content, memory.topic or "", *memory.entities, *memory.keywords))
    if needle and needle in compact(text):
        return True
    return contains_score(topic, text) >= TOPIC_MATCH
