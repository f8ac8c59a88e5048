"""Memory extraction through a chat model, with the rule extractor as the fallback.

User and assistant turns have separate prompts and separate type whitelists.
Each answered item is validated with pydantic; items of a type outside the
role's whitelist, invalid items, and items not in the language of the turn
are dropped and counted (`LLMCall.dropped`). When the model fails after its
retry, the rule extractor's result is used and the failure is recorded.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engram.core.ports import Extraction, Extractor
from engram.core.text import char_jaccard, compact, has_cjk
from engram.schemas.events import TurnRecorded
from engram.schemas.memory import ASSISTANT_TYPES, SINGLE_VALUED_SLOTS, USER_TYPES, Candidate, MemoryType
from engram.streams.rule_extractor import RuleExtractor, speaker_of

from .client import Answer, ModelClient
from .parsing import json_items, load_json, normalise_keys
from .prompts import extraction_messages, memory_schema

MAX_ITEM_CHARS = 500
_TWIN_JACCARD = 0.8
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.'-]*")
ITEM_KEYS = ("memories", "memory", "items", "results", "data", "facts")
_ALIASES = {"memory_type": "type", "category": "type", "kind": "type", "text": "content", "memory": "content",
            "statement": "content", "fact": "content", "slot": "attribute", "subject": "topic",
            "negation": "negated", "is_negated": "negated", "negative": "negated"}
_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
_WORDS_OF_CONFIDENCE = {"high": 0.9, "medium": 0.7, "low": 0.5}


class AnsweredMemory(BaseModel):
    """One memory as a model may answer it: lenient about extras, strict about content."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    type: str
    content: str = Field(min_length=1, max_length=MAX_ITEM_CHARS)
    confidence: float = 0.8
    attribute: str | None = None
    topic: str | None = None
    negated: bool = False
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in _WORDS_OF_CONFIDENCE:
            return _WORDS_OF_CONFIDENCE[value.strip().lower()]
        return 0.8 if value is None else value

    @field_validator("confidence", mode="after")
    @classmethod
    def _clamp(cls, value: float) -> float:
        value = value / 100 if 1 < value <= 100 else value
        return min(1.0, max(0.0, value))

    @field_validator("topic", "attribute", mode="before")
    @classmethod
    def _one_string(cls, value: Any) -> Any:
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
        return value or None

    @field_validator("negated", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        return False if value is None else value

    @field_validator("entities", "keywords", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            return []
        return [str(v).strip() for v in value if str(v).strip()][:10]


class LLMExtractor:
    """Extractor port over a chat model; falls back to `fallback` (the rules) on failure."""

    name = "llm"

    def __init__(self, client: ModelClient, model: str, fallback: Extractor | None = None,
                 label_with_rules: bool = True) -> None:
        self.client = client
        self.model = model
        self.fallback = fallback or RuleExtractor()
        self.label_with_rules = label_with_rules

    def extract(self, turn: TurnRecorded) -> Extraction:
        messages = extraction_messages(turn.role, turn.content, self.client.prompt_budget)
        answer: Answer[tuple[Candidate, ...]] = self.client.ask(
            "extract", self.model, messages, lambda text: parse_memories(text, turn), schema=memory_schema(turn.role))
        if answer.value is not None:
            found = answer.value
            if self.label_with_rules:
                found = label_from_rules(found, self.fallback.extract(turn).candidates)
            return Extraction(found, "llm", _notes(answer), answer.calls)
        rules = self.fallback.extract(turn)
        note = f"model failed ({answer.error}); rule extractor used"
        return Extraction(rules.candidates, rules.extractor, (*rules.notes, note), answer.calls)


def warm_up(extractor: LLMExtractor) -> list[float]:
    """One extraction per role with a throwaway message, so the endpoint caches both prompts' prefix.

    A local server (llama.cpp) then processes only the new message of each
    later request; on a small CPU that is most of a cold request's time.
    Returns the latency of each warm-up call (ms).
    """
    latencies = []
    for role, text in (("user", "我是一名医生"), ("assistant", "确定采用方案A")):
        turn = TurnRecorded(event_id=f"warm-up-{role}", occurred_at=_EPOCH, tenant_id="-", user_id="-", agent_id="-",
                            session_id="-", message_id=f"warm-up-{role}", role=role, content=text)  # type: ignore[arg-type]
        latencies.append(sum(call.latency_ms for call in extractor.extract(turn).calls))
    return latencies


def parse_memories(text: str, turn: TurnRecorded) -> tuple[tuple[Candidate, ...], int]:
    """Candidates from an answer, and how many answered items were dropped."""
    items = json_items(load_json(text), ITEM_KEYS)
    allowed = ASSISTANT_TYPES if turn.role == "assistant" else USER_TYPES
    speaker = speaker_of(turn)
    kept: list[Candidate] = []
    for item in items:
        candidate = _candidate(item, allowed, turn, speaker)
        if candidate is not None and all(c.content != candidate.content for c in kept):
            kept.append(candidate)
    return tuple(kept), len(items) - len(kept)


def _candidate(item: Any, allowed: frozenset[MemoryType], turn: TurnRecorded, speaker: str) -> Candidate | None:
    try:
        answered = AnsweredMemory.model_validate(normalise_keys(item, _ALIASES))
    except ValidationError:
        return None
    memory_type = _memory_type(answered.type, "assistant" if turn.role == "assistant" else "user")
    if memory_type is None or memory_type not in allowed or not same_language(turn.content, answered.content):
        return None
    entities = tuple(answered.entities)
    if speaker and speaker not in entities:
        entities = (speaker, *entities)
    return Candidate(
        type=memory_type, attribute=_attribute(memory_type, answered.attribute), content=answered.content,
        confidence=answered.confidence, entities=entities, keywords=tuple(answered.keywords),
        topic=answered.topic or None, negated=answered.negated, source_message_ids=(turn.message_id,),
    )


def _memory_type(raw: str, role: str) -> MemoryType | None:
    """The type named, in any casing or spacing, with the role prefix optional ("Preference")."""
    name = re.sub(r"[\s-]+", "_", raw.strip()).lower()
    for candidate in (name, f"{role}_{name}"):
        try:
            return MemoryType(candidate)
        except ValueError:
            pass
    return None


def _attribute(memory_type: MemoryType, raw: str | None) -> str | None:
    """Keep an attribute only when it names a known single-valued slot."""
    if not raw:
        return None
    attribute = raw.strip().lower()
    return attribute if f"{memory_type.value}.{attribute}" in SINGLE_VALUED_SLOTS else None


def label_from_rules(answered: tuple[Candidate, ...], ruled: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
    """Fill a missing topic, negation, slot attribute, keywords or entities from the rule candidate
    saying the same thing.

    The model decides what is worth remembering; labels the rules also found
    let consolidation settle more relations by rule (fewer judge calls).
    """
    return tuple(_labelled(c, ruled) for c in answered) if ruled else answered


def _labelled(candidate: Candidate, ruled: tuple[Candidate, ...]) -> Candidate:
    if candidate.topic and candidate.attribute and candidate.keywords:
        return candidate
    twin = next((r for r in ruled if r.type == candidate.type and _same_statement(r.content, candidate.content)), None)
    if twin is None:
        return candidate
    update: dict[str, object] = {}
    if not candidate.topic and twin.topic:
        update.update(topic=twin.topic, negated=twin.negated)
    if not candidate.attribute and twin.attribute:
        update["attribute"] = twin.attribute
    if not candidate.keywords and twin.keywords:
        update["keywords"] = twin.keywords
    if len(candidate.entities) <= 1 and twin.entities:
        update["entities"] = tuple(dict.fromkeys((*candidate.entities, *twin.entities)))
    # rebuilt, not model_copy: a copy would keep the cached `slot` of the old attribute
    return Candidate(**{**candidate.model_dump(), **update}) if update else candidate


def _same_statement(a: str, b: str) -> bool:
    ca, cb = compact(a), compact(b)
    return bool(ca and cb) and (ca in cb or cb in ca or char_jaccard(a, b) >= _TWIN_JACCARD)


def same_language(source: str, content: str) -> bool:
    """False when the memory is a translation: no CJK from a Chinese turn (beyond words it
    quotes), or CJK from a turn that has none."""
    if has_cjk(content):
        return has_cjk(source)
    if not has_cjk(source):
        return True
    lowered = source.lower()
    return all(word.lower() in lowered for word in _LATIN_WORD.findall(content))


def _notes(answer: Answer[Any]) -> tuple[str, ...]:
    dropped = sum(call.dropped for call in answer.calls)
    return (f"{dropped} answered item(s) dropped by validation",) if dropped else ()
