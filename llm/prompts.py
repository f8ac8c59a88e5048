"""Prompt texts of the model adapters (Engram's own wording).

Each task has a fixed system prompt and a user message built from the data.
Answers are JSON objects, so endpoints with a JSON mode can enforce them, and
each task has a JSON schema (`memory_schema`, `JUDGE_SCHEMA`,
`SUMMARY_SCHEMA`) for endpoints that constrain output to one (llama.cpp,
vLLM, OpenAI): a small local model then cannot answer outside the shape.

`budget` (tokens for the whole prompt, from `ENGRAM_LLM_CONTEXT_TOKENS` less
the answer's tokens) keeps a prompt inside a small context window: a long
message is clipped at the end, a summary keeps the newest messages that fit.
The system prompts are ~450 tokens, so a 4k window leaves room for ~2,500.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engram.core.ports import SummaryMessage
from engram.core.text import estimate_tokens, has_cjk
from engram.schemas.memory import ASSISTANT_TYPES, USER_TYPES, MemoryRecord, SummarySections

CLIPPED = " …[clipped]"
_MESSAGE_OVERHEAD = 8  # chat-template tokens per message
_SUMMARY_ITEM_CHARS = 600

_SLOTS = (
    "user_profile: name | occupation | age | gender | language | company | education; "
    "user_fact: location | hometown | birthday; user_goal: current"
)

USER_FACTS = f"""You curate the long-term memory of a personal assistant.
Read ONE message written by the user and keep only what will still be true and useful in later conversations:
- user_profile: who they are (name, job, age, company, education, language); a short self-description
  ("我是…", "I'm a …") is a profile memory
- user_preference: lasting likes, dislikes and preferred ways of being helped (what the assistant should
  do from now on, in later conversations, is lasting)
- user_goal: goals and plans they intend to pursue
- user_constraint: limits and rules (time, budget, diet, health, what the assistant must or must not do)
- user_fact: other durable facts about their life (where they live, family, pets, events)
Leave out questions, small talk, greetings, thanks, one-off requests for this conversation, and anything
the user only asks about. Never guess and never add facts the message does not state.

Write every memory as one short third-person statement in THE SAME LANGUAGE AS THE MESSAGE: a Chinese
message gives Chinese memories ("用户喜欢Java"), an English one English memories ("User likes Java").
Never translate. Split a message stating several things into several memories.

Answer with one JSON object and nothing else:
{{"memories": [{{"content": "...", "type": "...", "attribute": null, "confidence": 0.9,
  "topic": "...", "negated": false, "entities": [], "keywords": []}}]}}
- type: exactly one of user_profile, user_preference, user_goal, user_constraint, user_fact
- attribute: only for single-valued facts ({_SLOTS}); otherwise null
- confidence: 0 to 1, how clearly the message states it
- topic: the short subject the statement is about, in the message's words ("Java", "香菜"), or null
- negated: true when the statement rejects the topic (dislikes it, no longer does it)
- entities / keywords: short names and terms from the message
When nothing qualifies answer {{"memories": []}}."""

ASSISTANT_DECISIONS = """You curate the long-term memory of a personal assistant.
Read ONE reply written by the assistant and keep only the conclusions that were settled in it:
- assistant_decision: a chosen option or solution ("确认采用微服务架构", "Use PostgreSQL for orders")
- assistant_constraint: an agreed limit or rule (budget, deadline, scope, style of answers)
- assistant_plan: an agreed next step, with its time or owner when given
- assistant_action: something the assistant states it has done
Leave out the reasoning, comparisons between options, pros and cons, explanations, examples, code,
pleasantries and suggestions that were not settled. One conclusion per memory, stated on its own.

Write each memory as one short statement in THE SAME LANGUAGE AS THE REPLY. Never translate.

Answer with one JSON object and nothing else:
{"memories": [{"content": "...", "type": "...", "confidence": 0.9, "topic": "...", "entities": [],
  "keywords": []}]}
- type: exactly one of assistant_decision, assistant_constraint, assistant_plan, assistant_action
- confidence: 0 to 1, how firmly the reply settles it
- topic: the short subject of the conclusion ("微服务架构", "budget"), or null
When nothing qualifies answer {"memories": []}."""

JUDGE = """You maintain the long-term memory of one user. Decide how a NEW memory relates to an EXISTING
memory of the same kind. Answer with exactly one relation:
- replace: same subject, and the new memory contradicts or updates the existing one (opposite stance,
  changed value, no longer true); the existing memory is retired
- append: same subject, the new memory adds compatible detail; both are kept
- same: both say the same thing (the more specific wording is kept)
- skip: the new memory is noise or adds nothing worth keeping
- new: different subjects; both are kept independently
Answer with one JSON object and nothing else: {"relation": "...", "reason": "one short sentence"}"""

SUMMARY = """You keep a running summary of one chat session. You get the previous summary and ONLY the
messages that came after it. Update the summary: keep items that still hold, add what the new messages
settle, drop what they contradict, and remove open questions that were answered. Do not re-explain,
do not add analysis, and write in the language of the conversation.

Answer with one JSON object with exactly these five keys, each a list of short strings:
{"current_topic": [], "confirmed_facts": [], "todo_items": [], "user_constraints": [], "open_questions": []}
- current_topic: what the conversation is about now (one item)
- confirmed_facts: facts and decisions both sides have settled
- todo_items: things someone still has to do
- user_constraints: limits and rules the user has set
- open_questions: questions still without an answer"""


def _example(label: str, message: str, *memories: dict[str, object]) -> list[dict[str, str]]:
    answer = json.dumps({"memories": list(memories)}, ensure_ascii=False)
    return [{"role": "user", "content": _framed(label, message)}, {"role": "assistant", "content": answer}]


def language_of(text: str) -> str:
    """The language to write memories in, named for the model: small models translate unless told."""
    if has_cjk(text):
        return "Chinese"
    return "English" if sum(ch.isascii() for ch in text) >= 0.9 * len(text) else "the language of the message"


def _framed(label: str, content: str) -> str:
    return f"{label} (write the memories in {language_of(content)}):\n{content}"


def _m(kind: str, content: str, topic: str, attribute: str | None = None, negated: bool = False) -> dict[str, object]:
    return {"content": content, "type": kind, "attribute": attribute, "topic": topic, "negated": negated}


# Worked examples, sent as earlier turns of the conversation: small models copy a demonstrated answer
# (split statements, third person, questions left out, `[]` for nothing) far better than a described one.
# Pure questions and small talk never reach the model (the turn filter skips them first).
USER_EXAMPLES = [
    *_example("User message", "我叫小王，在上海做会计，养了两只狗。打算明年考研，不过只有周末有空复习。",
              _m("user_profile", "用户叫小王", "小王", "name"), _m("user_profile", "用户是会计", "会计", "occupation"),
              _m("user_fact", "用户住在上海", "上海", "location"), _m("user_fact", "用户养了两只狗", "狗"),
              _m("user_goal", "用户打算明年考研", "考研", "current"),
              _m("user_constraint", "用户只有周末有空复习", "复习时间")),
    *_example("User message", "I love hiking but I don't drink coffee anymore. From now on, please reply in "
              "bullet points. Can you suggest a good tea?",
              _m("user_preference", "User loves hiking", "hiking"),
              _m("user_preference", "User no longer drinks coffee", "coffee", negated=True),
              _m("user_preference", "User wants replies in bullet points from now on", "reply format")),
    *_example("User message", "我是一名高中老师", _m("user_profile", "用户是高中老师", "高中老师", "occupation")),
    *_example("User message", "I'm a pilot", _m("user_profile", "User is a pilot", "pilot", "occupation")),
]
ASSISTANT_EXAMPLES = [
    *_example("Assistant reply", "两种方案各有利弊：A 成本低，B 更稳定。考虑到你们的规模，最终定下来用方案 B，"
              "上线时间不晚于 6 月底，我今天先把部署文档整理好。",
              _m("assistant_decision", "确定采用方案B", "方案B"), _m("assistant_constraint", "上线时间不晚于6月底", "上线时间"),
              _m("assistant_plan", "今天整理部署文档", "部署文档")),
    *_example("Assistant reply", "You could use cron, systemd timers or a task queue; each has trade-offs."),
]


def extraction_messages(role: str, content: str, budget: int | None = None) -> list[dict[str, str]]:
    """System prompt for the role's memory types, worked examples, then the message (clipped to `budget`)."""
    if role == "assistant":
        system, examples, label = ASSISTANT_DECISIONS, ASSISTANT_EXAMPLES, "Assistant reply"
    else:
        system, examples, label = USER_FACTS, USER_EXAMPLES, "User message"
    if budget is not None:
        fixed = sum(estimate_tokens(m["content"]) + _MESSAGE_OVERHEAD for m in (
            {"content": system}, *examples)) + estimate_tokens(_framed(label, "")) + 2 * _MESSAGE_OVERHEAD
        content = clip_to_tokens(content, budget - fixed)
    return [{"role": "system", "content": system}, *examples, {"role": "user", "content": _framed(label, content)}]


def clip_to_tokens(text: str, tokens: int) -> str:
    """`text` cut so its estimated tokens stay within `tokens` (unchanged when it fits)."""
    if estimate_tokens(text) <= tokens:
        return text
    room = max(0, tokens - estimate_tokens(CLIPPED))
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + CLIPPED


def _nullable(kind: str) -> dict[str, Any]:
    return {"anyOf": [{"type": kind}, {"type": "null"}]}


def memory_schema(role: str) -> dict[str, Any]:
    """The JSON schema of an extraction answer for `role`: `{"memories": [...]}` of that role's types.

    Entities and keywords are left out: on a small local model they double
    the answer's tokens, and the extractor takes them from the rule candidate
    saying the same thing (`label_from_rules`).
    """
    allowed = ASSISTANT_TYPES if role == "assistant" else USER_TYPES
    item: dict[str, Any] = {
        "type": "object",
        "properties": {  # content first: a small model classifies a statement it has written better
            "content": {"type": "string", "minLength": 1, "maxLength": 200},
            "type": {"type": "string", "enum": sorted(t.value for t in allowed)},
            "topic": _nullable("string"),
            "negated": {"type": "boolean"},
            "confidence": {"type": "number"},
            "attribute": _nullable("string"),
        },
        "required": ["content", "type", "topic", "negated"],
        "additionalProperties": False,
    }
    return {"type": "object", "properties": {"memories": {"type": "array", "items": item, "maxItems": 8}},
            "required": ["memories"], "additionalProperties": False}


JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relation": {"type": "string", "enum": ["replace", "append", "same", "skip", "new"]},
                   "reason": {"type": "string", "maxLength": 200}},
    "required": ["relation", "reason"], "additionalProperties": False,
}

_SECTION = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 8}
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: _SECTION for name in ("current_topic", "confirmed_facts", "todo_items",
                                               "user_constraints", "open_questions")},
    "required": ["current_topic", "confirmed_facts", "todo_items", "user_constraints", "open_questions"],
    "additionalProperties": False,
}


def judge_messages(memory_type: str, existing: MemoryRecord, new_content: str) -> list[dict[str, str]]:
    body = json.dumps({"memory_type": memory_type, "existing_memory": existing.content,
                       "new_memory": new_content}, ensure_ascii=False)
    return [{"role": "system", "content": JUDGE}, {"role": "user", "content": body}]


def summary_messages(previous: SummarySections | None, new_messages: Sequence[SummaryMessage],
                     budget: int | None = None) -> list[dict[str, str]]:
    """The previous sections and the new messages; within `budget`, the newest messages that fit."""
    before = json.dumps((previous or SummarySections()).model_dump(mode="json"), ensure_ascii=False)
    head = f"Previous summary:\n{before}\n\nNew messages:\n"
    lines = [f"{m.role}: {m.content}" for m in new_messages]
    if budget is not None:
        lines = _newest_that_fit(lines, budget - estimate_tokens(SUMMARY) - estimate_tokens(head)
                                 - 3 * _MESSAGE_OVERHEAD)
    return [{"role": "system", "content": SUMMARY}, {"role": "user", "content": head + "\n".join(lines)}]


def _newest_that_fit(lines: list[str], tokens: int) -> list[str]:
    clipped = [line if len(line) <= _SUMMARY_ITEM_CHARS else line[:_SUMMARY_ITEM_CHARS] + CLIPPED for line in lines]
    if sum(estimate_tokens(line) + 1 for line in clipped) <= tokens:
        return clipped
    kept: list[str] = []
    for line in reversed(clipped):
        cost = estimate_tokens(line) + 1
        if cost > tokens:
            break
        kept.append(line)
        tokens -= cost
    return kept[::-1] or [clip_to_tokens(clipped[-1], max(tokens, 0))]
