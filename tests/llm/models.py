"""Scripted "models" for the scripted server: deterministic responders for each task.

- `echo_extractor`: answers extraction requests with what the rule extractor
  finds in the message (optionally without topic/negation: a "bare" model
  whose answers leave more merge decisions to the judge);
- `stance_judge`: replace when two memories share a subject with opposite
  stances, append when they share a subject, new otherwise;
- `section_summarizer`: a valid five-section answer built from the new messages.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from engram.schemas.events import TurnRecorded
from engram.streams.rule_extractor import RuleExtractor

from .scripted_server import Reply, Request

_RULES = RuleExtractor()
_NEGATION = re.compile(r"不|没|别|no longer|don't|do not|doesn't|does not|not |never|anymore|dislike", re.I)
_FILLER = {"user", "users", "likes", "like", "loves", "love", "prefers", "prefer", "no", "longer", "not", "does",
           "doesn", "anymore", "the", "is", "a", "an", "of", "to", "and"}
_CJK_FILLER = {"用户", "户喜", "喜欢", "户不", "不喜", "欢了", "户是", "是一"}


def memories(*items: dict[str, object]) -> Reply:
    """An extraction answer holding `items`."""
    return Reply.json({"memories": list(items)})


def turn_text(request: Request) -> tuple[str, str]:
    """(role, message) of an extraction request, read back from the adapter's prompt."""
    role = "assistant" if "assistant_decision" in request.system else "user"
    _, _, text = request.prompt.partition(":\n")
    return role, text


def echo_extractor(bare: bool = False):  # type: ignore[no-untyped-def]
    """A responder that extracts like the rules; `bare` drops topic and negation from its answers."""

    def respond(request: Request) -> Reply:
        role, text = turn_text(request)
        turn = TurnRecorded(event_id="scripted", occurred_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                            tenant_id="t", user_id="u", agent_id="a", session_id="s", message_id="m",
                            role=role, content=text)  # type: ignore[arg-type]
        items = []
        for c in _RULES.extract(turn).candidates:
            item: dict[str, object] = {"type": c.type.value, "attribute": c.attribute, "content": c.content,
                                       "confidence": c.confidence}
            if not bare:
                item.update(topic=c.topic, negated=c.negated, entities=list(c.entities),
                            keywords=list(c.keywords))
            items.append(item)
        return memories(*items)

    return respond


def judge_pair(request: Request) -> tuple[str, str]:
    """(existing, new) memory texts of a judge request."""
    body = json.loads(request.prompt)
    return body["existing_memory"], body["new_memory"]


def _subject(text: str) -> set[str]:
    words = {w for w in re.findall(r"[a-z][a-z+#]+", text.lower()) if w not in _FILLER}
    cjk = re.sub(r"[^\u4e00-\u9fff]", "", text)
    return words | {cjk[i:i + 2] for i in range(len(cjk) - 1)} - _CJK_FILLER


def stance_judge(request: Request) -> Reply:
    existing, new = judge_pair(request)
    shared = _subject(existing) & _subject(new)
    if shared and bool(_NEGATION.search(existing)) != bool(_NEGATION.search(new)):
        return Reply.json({"relation": "replace", "reason": f"opposite stance on {sorted(shared)[0]}"})
    if shared:
        return Reply.json({"relation": "append", "reason": f"more about {sorted(shared)[0]}"})
    return Reply.json({"relation": "new", "reason": "different subjects"})


def section_summarizer(request: Request) -> Reply:
    lines = request.prompt.split("New messages:\n", 1)[-1].splitlines()
    user = [line.split(": ", 1)[1] for line in lines if line.startswith("user: ")]
    return Reply.json({
        "current_topic": user[-1:], "confirmed_facts": user[:3], "todo_items": [],
        "user_constraints": [], "open_questions": [],
    })
