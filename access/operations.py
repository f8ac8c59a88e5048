"""Every operation of Engram on every door (Python, CLI, HTTP, MCP): names, arguments, defaults, errors.

This table is the one statement of the API. `docs/api.md` is generated from it
(`python -m engram.access.operations`), and `tests/access/test_operations.py`
walks it: each door must take exactly the arguments listed here, with these
defaults, so the doors cannot drift apart again.

The naming rule: the scope is `tenant`, `user`, `agent`, `session`; ids have
their long names (`memory_id`, `memory_ids`, `recall_id`, `message_id`); a
memory's text is `content`; forget by `topic`. Agent and session default to
`assistant` and `default` on every door. The tenant defaults to `default` on
the local doors (Python, CLI) and is required on the network doors (HTTP, and
MCP unless the server is pinned with `--tenant`), where it decides which key
may act.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .models import DEFAULT_AGENT, DEFAULT_SESSION, DEFAULT_TENANT


class _Marker:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


REQUIRED = _Marker("required")
OPTIONAL = _Marker("optional")
"""Optional without a fixed value to show (an empty list or mapping, filled in by the door)."""
PINNABLE = _Marker("required unless the server is pinned")
CONFIGURED = _Marker("default: the configured recall.deadline_ms, 300 ms")


@dataclass(frozen=True)
class Arg:
    name: str
    default: Any = REQUIRED

    def shown(self) -> str:
        if isinstance(self.default, _Marker):
            return f"`{self.name}`" if self.default is REQUIRED else f"`{self.name}` ({self.default.text})"
        return f"`{self.name}`={_literal(self.default)}"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Door:
    call: str
    """`Memory.recall`, `engram recall`, `POST /v1/recall`, `memory_recall`."""
    args: tuple[Arg, ...]
    deprecated: tuple[str, ...] = ()
    """Other names still accepted: deprecated ones of the first release (Python warns), the CLI's `--all`."""


@dataclass(frozen=True)
class Operation:
    name: str
    what: str
    python: Door | None
    cli: Door | None
    http: Door | None
    mcp: Door | None
    errors: str
    differences: dict[str, str] = field(default_factory=dict)
    """Arguments on purpose not alike on every door, and why."""

    def doors(self) -> dict[str, Door | None]:
        return {"Python": self.python, "CLI": self.cli, "HTTP": self.http, "MCP": self.mcp}


def A(name: str, default: Any = REQUIRED) -> Arg:  # noqa: N802 (reads as a table)
    return Arg(name, default)


# The scope arguments, door by door.
PY_TENANT, CLI_TENANT = A("tenant", DEFAULT_TENANT), A("tenant", DEFAULT_TENANT)
HTTP_TENANT, HTTP_USER = A("tenant"), A("user")
MCP_TENANT, MCP_USER = A("tenant", PINNABLE), A("user", PINNABLE)
AGENT, SESSION = A("agent", DEFAULT_AGENT), A("session", DEFAULT_SESSION)
USER, MEMORY_ID = A("user"), A("memory_id")
PY = (USER,)
CLI = (CLI_TENANT, USER)
HTTP_SCOPE = (HTTP_TENANT, HTTP_USER)
MCP_SCOPE = (MCP_TENANT, MCP_USER)

UNKNOWN_USER = "`unknown_user` (404)"
NAMED = (f"{UNKNOWN_USER}; `unknown_memory` (404); `prefix_too_short` (400: fewer than 4 characters); "
         "`ambiguous_id` (400: the prefix matches several)")
INVALID = "`invalid_request` / 422 for a malformed argument"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "record", "Record chat turns; answer what they changed in memory",
        Door("Memory.record", (*PY, A("messages"), SESSION, AGENT, PY_TENANT)),
        Door("engram ingest", (A("file"), A("wait", True))),
        Door("POST /v1/turns", (*HTTP_SCOPE, AGENT, SESSION, A("message_id"), A("role", "user"), A("content"),
                                A("ts", None), A("parent_id", None), A("trace_id", None), A("metadata", OPTIONAL))),
        Door("memory_write", (A("content"), AGENT, A("role", "user"), *MCP_SCOPE, SESSION, A("message_id", None))),
        f"{INVALID}; `message_id_conflict` (409: a message id re-sent with other content; the other turns are "
        "recorded); `payload_too_large` (413)",
        {"message_id": "HTTP and the JSONL lines of `engram ingest` name each turn; Python gives a new id to a "
                       "message without one; MCP derives it from the text, so a retried tool call stores nothing",
         "file": "the CLI reads turns from a JSONL file (one `POST /v1/turns` body per line)"},
    ),
    Operation(
        "recall", "The memory context for the next LLM call (empty: inject nothing)",
        Door("Memory.recall", (*PY, A("question"), SESSION, AGENT, PY_TENANT, A("system_prompt", ""),
                               A("token_budget", None), A("deadline_ms", CONFIGURED))),
        Door("engram recall", (*CLI, AGENT, SESSION, A("deadline_ms", CONFIGURED), A("question"))),
        Door("POST /v1/recall", (*HTTP_SCOPE, AGENT, SESSION, A("question"), A("message_id", ""),
                                 A("memory_enabled", True), A("token_budget", None), A("limit", None),
                                 A("deadline_ms", CONFIGURED), A("system_prompt", ""))),
        Door("memory_recall", (A("question"), AGENT, *MCP_SCOPE, SESSION, A("deadline_ms", CONFIGURED))),
        f"{INVALID} (an empty question too). Never an error for a new user or session (`user_known` / "
        "`session_known` false) nor for a missed deadline (`degraded`, `missed`)",
    ),
    Operation(
        "search", "The user's memories by meaning and keywords, best first",
        Door("Memory.search", (*PY, A("query"), A("limit", 10), PY_TENANT)),
        Door("engram search", (*CLI, A("limit", 10), A("query"))),
        Door("POST /v1/search", (*HTTP_SCOPE, A("query"), A("session", None), A("limit", 10))),
        Door("memory_search", (A("query"), *MCP_SCOPE, A("session", None), A("limit", 10))),
        f"{INVALID} (an empty query, a limit outside 1-100). A new user: no results, `user_known` false",
    ),
    Operation(
        "memories", "What is remembered about a user (a new user has none: `[]`)",
        Door("Memory.memories", (*PY, A("status", "active"), PY_TENANT), deprecated=("include_all",)),
        Door("engram memories", (*CLI, A("status", "active")), deprecated=("include_all",)),
        Door("GET /v1/memories", (*HTTP_SCOPE, A("status", "active"))),
        Door("memory_read", (*MCP_SCOPE, A("session", None), A("memory_id", None), A("status", "active"))),
        INVALID,
        {"include_all": "the CLI's `--all` is a shorthand for `--status all`",
         "session": "MCP's memory_read also answers the session's summary when given a session"},
    ),
    Operation(
        "profile", "The user's standing profile: what every recall starts with, most important first",
        Door("Memory.profile", (*PY, PY_TENANT)),
        Door("engram profile", CLI),
        Door("GET /v1/profile", HTTP_SCOPE),
        Door("memory_profile", MCP_SCOPE),
        f"{INVALID}. A new user: no entries, `user_known` false",
    ),
    Operation(
        "memory", "One memory by id or unique prefix, in whatever status",
        Door("Memory.memory", (*PY, MEMORY_ID, PY_TENANT)),
        Door("engram memory", (*CLI, MEMORY_ID)),
        Door("GET /v1/memories/{memory_id}", (MEMORY_ID, *HTTP_SCOPE)),
        Door("memory_read", (*MCP_SCOPE, A("session", None), A("memory_id", None), A("status", "active"))),
        NAMED,
        {"memory_id": "MCP has one read tool: without a memory_id it lists the memories"},
    ),
    Operation(
        "history", "How a memory came to be: every change back to the turns it came from",
        Door("Memory.history", (*PY, MEMORY_ID, PY_TENANT)),
        Door("engram history", (*CLI, MEMORY_ID)),
        Door("GET /v1/memories/{memory_id}/lineage", (MEMORY_ID, *HTTP_SCOPE)),
        Door("memory_history", (MEMORY_ID, *MCP_SCOPE)),
        NAMED,
    ),
    Operation(
        "correct", "Replace a memory's content with what the user says is right",
        Door("Memory.correct", (*PY, MEMORY_ID, A("content"), PY_TENANT), deprecated=("text",)),
        Door("engram correct", (*CLI, MEMORY_ID, A("content"))),
        Door("POST /v1/memories/{memory_id}/correct", (MEMORY_ID, *HTTP_SCOPE, A("content"))),
        Door("memory_correct", (MEMORY_ID, A("content"), *MCP_SCOPE)),
        f"{NAMED}; only an active memory can be corrected",
    ),
    Operation(
        "pin", "Pin a memory: it never decays",
        Door("Memory.pin", (*PY, MEMORY_ID, PY_TENANT), deprecated=("pinned",)),
        Door("engram pin", (*CLI, MEMORY_ID)),
        Door("POST /v1/memories/{memory_id}/pin", (MEMORY_ID, *HTTP_SCOPE)),
        Door("memory_pin", (MEMORY_ID, *MCP_SCOPE)),
        NAMED,
    ),
    Operation(
        "unpin", "Unpin a memory: it decays again",
        Door("Memory.unpin", (*PY, MEMORY_ID, PY_TENANT)),
        Door("engram unpin", (*CLI, MEMORY_ID)),
        Door("POST /v1/memories/{memory_id}/unpin", (MEMORY_ID, *HTTP_SCOPE)),
        Door("memory_unpin", (MEMORY_ID, *MCP_SCOPE)),
        NAMED,
    ),
    Operation(
        "forget", "Forget memories by id, every memory about a topic, or everything about the user",
        Door("Memory.forget", (*PY, A("memory_ids", OPTIONAL), A("topic", ""), A("everything", False),
                               A("dry_run", False), PY_TENANT), deprecated=("memory_id",)),
        Door("engram forget", (*CLI, A("memory_ids", OPTIONAL), A("topic", ""), A("everything", False),
                               A("dry_run", False))),
        Door("POST /v1/forget", (*HTTP_SCOPE, A("memory_ids", OPTIONAL), A("topic", ""), A("everything", False),
                                 A("dry_run", False)), deprecated=("topic_text",)),
        Door("memory_delete", (*MCP_SCOPE, A("memory_ids", OPTIONAL), A("topic", ""), A("everything", False),
                               A("dry_run", False)), deprecated=("memory_id", "topic_text", "session")),
        f"{NAMED}; `invalid_request` unless exactly one of memory_ids, topic, everything is given. "
        "Forgetting everything also drops the user's summaries and recent window and destroys their keys",
    ),
    Operation(
        "forget one", "Forget one memory (the other doors: forget with one id)",
        None, None, Door("DELETE /v1/memories/{memory_id}", (MEMORY_ID, *HTTP_SCOPE)), None, NAMED,
    ),
    Operation(
        "summary", "The latest summary of a session",
        Door("Memory.summary", (*PY, A("session"), PY_TENANT)),
        Door("engram summary", (CLI_TENANT, A("session"), A("user", None))),
        Door("GET /v1/sessions/{session}/summary", (A("session"), *HTTP_SCOPE)),
        Door("memory_read", (*MCP_SCOPE, A("session", None), A("memory_id", None), A("status", "active"))),
        f"{UNKNOWN_USER}; `unknown_session` (404); `no_summary` (404: too few messages yet, or forgotten)",
        {"user": "the CLI finds the session's user when only one user has that session id",
         "session": "MCP answers the summary as `session_summary` of memory_read given a session"},
    ),
    Operation(
        "feedback", "A verdict on one recall: none/good/bad (0/1/2)",
        Door("Memory.feedback", (*PY, A("recall_id"), A("rating"), A("reason", ""), A("remark", ""), PY_TENANT)),
        Door("engram feedback", (*CLI, A("recall_id"), A("rating"), A("reason", ""), A("remark", ""))),
        Door("POST /v1/feedback", (*HTTP_SCOPE, A("recall_id"), A("rating"), A("reason", ""), A("remark", ""))),
        Door("memory_feedback", (A("recall_id"), A("rating"), A("reason", ""), A("remark", ""), *MCP_SCOPE)),
        f"{INVALID}; `unknown_recall` (404: no such recall for this user)",
    ),
    Operation(
        "cards", "List global memory cards (by folder, tag or bound agent)",
        None, None,
        Door("GET /v1/cards", (*HTTP_SCOPE, A("folder", None), A("tag", None), A("agent", None),
                               A("include_deleted", False))),
        None, UNKNOWN_USER,
        {"cards": "cards are written by the platform (its admin or settings page) over HTTP, not by the chat "
                  "agent; recall reads them on every door"},
    ),
    Operation(
        "card create", "Create a card (the server picks `card_id` when none is given)",
        None, None,
        Door("POST /v1/cards", (*HTTP_SCOPE, A("card_id", None), A("name", ""), A("profile", ""),
                                A("long_term_goal", ""), A("preferences", ""), A("preferred_language", ""),
                                A("answer_style", ""), A("extra_notes", ""), A("tags", OPTIONAL), A("folder", ""),
                                A("agent_ids", OPTIONAL), A("enabled", True))),
        None, f"{INVALID}; `card_exists` (409)",
    ),
    Operation(
        "card delete", "Delete a card (logically); `expected_version` guards against a concurrent change",
        None, None,
        Door("DELETE /v1/cards/{card_id}", (A("card_id"), *HTTP_SCOPE, A("expected_version", None))),
        None, "`not_found` (404); `version_conflict` (409)",
    ),
)
"""The operations. Card update, enable/disable and bind/unbind (HTTP only) are in the OpenAPI document."""


def markdown() -> str:
    """The operations table and the per-operation argument lists, as docs/api.md carries them."""
    lines = ["| operation | Python (`engram.Memory`) | CLI | HTTP | MCP tool |", "|---|---|---|---|---|"]
    for op in OPERATIONS:
        cells = [f"`{door.call}`" if door else "—" for door in op.doors().values()]
        lines.append(f"| **{op.name}** | " + " | ".join(cells) + " |")
    for op in OPERATIONS:
        lines += ["", f"### {op.name}", "", f"{op.what}.", ""]
        for surface, door in op.doors().items():
            if door is None:
                continue
            args = ", ".join(arg.shown() for arg in door.args)
            old = f" — also accepted: {', '.join(f'`{d}`' for d in door.deprecated)}" \
                if door.deprecated else ""
            lines.append(f"- {surface} `{door.call}`: {args}{old}")
        lines.append(f"- Errors: {op.errors}.")
        for arg, why in op.differences.items():
            lines.append(f"- Differs on purpose (`{arg}`): {why}.")
    return "\n".join(lines) + "\n"


START, END = "<!-- operations table: generated by `python -m engram.access.operations` -->", "<!-- end of table -->"
DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def with_table(doc: str) -> str:
    """docs/api.md with its generated part replaced by the current table."""
    head, _, rest = doc.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{markdown()}{END}{tail}"


def main() -> None:
    DOC.write_text(with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
