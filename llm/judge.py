"""The merge judge through a chat model, asked only for pairs the rules leave open.

Consolidation calls it after `judge_by_rules` returned None for a pair
(only when no merge rule decided). A failed call (after its retry) gives the rule default, `new`,
judged by "rule", and still carries the call records.
"""

from __future__ import annotations

import re
from typing import Literal, cast

from engram.core.ports import Judgement
from engram.schemas.memory import Candidate, MemoryRecord

from .client import ModelClient
from .parsing import AnswerError, load_json
from .prompts import JUDGE_SCHEMA, judge_messages

Relation = Literal["replace", "append", "same", "skip", "new", "conflict"]
RELATIONS: tuple[str, ...] = ("replace", "append", "same", "skip", "new", "conflict")
_MAX_REASON_CHARS = 300
_WORD = re.compile(r"[a-z]+")


class LLMJudge:
    """MergeJudge port over a chat model: returns a relation and the model's reason."""

    name = "llm"

    def __init__(self, client: ModelClient, model: str) -> None:
        self.client = client
        self.model = model

    def judge(self, candidate: Candidate, existing: MemoryRecord) -> Judgement:
        messages = judge_messages(candidate.type.value, existing, candidate.content)
        answer = self.client.ask("judge", self.model, messages, parse_relation, schema=JUDGE_SCHEMA)
        if answer.value is not None:
            relation, reason = answer.value
            return Judgement(cast(Relation, relation), reason, "llm", answer.calls)
        return Judgement("new", f"model judge failed ({answer.error}); kept as a separate memory",
                         "rule", answer.calls)


def parse_relation(text: str) -> tuple[tuple[str, str], int]:
    """(relation, reason) from `{"relation": ..., "reason": ...}`, or from a bare relation word."""
    try:
        value = load_json(text)
    except AnswerError:
        return (_bare_word(text), "model answered without a reason"), 0
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, dict):
        raise AnswerError("expected a JSON object with a relation")
    value = {str(k).strip().lower(): v for k, v in value.items()}
    relation = str(value.get("relation") or value.get("action") or value.get("decision") or "").strip().lower()
    if relation not in RELATIONS:
        raise AnswerError(f"unknown relation {relation[:30]!r}")
    reason = str(value.get("reason") or "judged by the model").strip()[:_MAX_REASON_CHARS]
    return (relation, reason), 0


def _bare_word(text: str) -> str:
    found = {word for word in _WORD.findall((text or "").lower()) if word in RELATIONS}
    if len(found) != 1:
        raise AnswerError(f"no relation in answer: {(text or '')[:60]!r}")
    return found.pop()
