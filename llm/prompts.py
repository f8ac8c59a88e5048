"""Prompt texts of the model adapters (Engram's own wording).

Each task has a fixed system prompt and a user message built from the data.
Answers are JSON objects, so endpoints with a JSON mode can enforce them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from engram.core.ports import SummaryMessage
from engram.schemas.memory import MemoryRecord, SummarySections

_SLOTS = (
    "user_profile: name | occupation | age | gender | language | company | education; "
    "user_fact: location | hometown | birthday; user_goal: current"
)

USER_FACTS = f"""You curate the long-term memory of a personal assistant.
Read ONE message written by the user and keep only what will still be true and useful in later conversations:
- user_profile: who they are (name, job, age, company, education, language)
- user_preference: lasting likes, dislikes and preferred ways of being helped
- user_goal: goals and plans they intend to pursue
- user_constraint: limits and rules (time, budget, diet, health, what the assistant must or must not do)
- user_fact: other durable facts about their life (where they live, family, pets, events)
Leave out questions, small talk, greetings, thanks, one-off requests for this conversation, and anything
the user only asks about. Never guess and never add facts the message does not state.

Write every memory as one short third-person statement in THE SAME LANGUAGE AS THE MESSAGE: a Chinese
message gives Chinese memories ("用户喜欢Java"), an English one English memories ("User likes Java").
Never translate. Split a message stating several things into several memories.

Answer with one JSON object and nothing else:
{{"memories": [{{"type": "...", "attribute": null, "content": "...", "confidence": 0.9,
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
{"memories": [{"type": "...", "content": "...", "confidence": 0.9, "topic": "...", "entities": [],
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


def extraction_messages(role: str, content: str) -> list[dict[str, str]]:
    """System prompt for the role's memory types, then the message itself."""
    if role == "assistant":
        return [{"role": "system", "content": ASSISTANT_DECISIONS},
                {"role": "user", "content": f"Assistant reply:\n{content}"}]
    return [{"role": "system", "content": USER_FACTS},
            {"role": "user", "content": f"User message:\n{content}"}]


def judge_messages(memory_type: str, existing: MemoryRecord, new_content: str) -> list[dict[str, str]]:
    body = json.dumps({"memory_type": memory_type, "existing_memory": existing.content,
                       "new_memory": new_content}, ensure_ascii=False)
    return [{"role": "system", "content": JUDGE}, {"role": "user", "content": body}]


def summary_messages(previous: SummarySections | None,
                     new_messages: Sequence[SummaryMessage]) -> list[dict[str, str]]:
    before = (previous or SummarySections()).model_dump(mode="json")
    lines = "\n".join(f"{m.role}: {m.content}" for m in new_messages)
    body = (f"Previous summary:\n{json.dumps(before, ensure_ascii=False)}\n\n"
            f"New messages:\n{lines}")
    return [{"role": "system", "content": SUMMARY}, {"role": "user", "content": body}]
