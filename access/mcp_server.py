"""Engram as an MCP memory server (official `mcp` SDK), over stdio or streamable HTTP.

Tools: `memory_write`, `memory_read`, `memory_search`, `memory_delete` and
`memory_recall`. Each names its tenant, user and session, validated the same
way on write and read. A new user or session is normal (`user_known` /
`session_known` false in the answer); a read of one named thing (a memory id)
that does not exist is an error. Over HTTP every request needs `Authorization: Bearer`
with `ENGRAM_MCP_TOKEN` (or an API key, scoped to its tenant) once any is
configured; without one only loopback clients are served. Over stdio the
caller is the local user who started the process (optionally pinned to one
tenant).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from pydantic import Field

from engram.schemas.base import Identifier
from engram.schemas.inputs import TurnInput

from ._mcp_compat import Context, MCPServer, ToolError, http_app
from .auth import LOCAL, KeyRing, Principal, token_from_headers
from .errors import AccessError
from .guard import ASGIApp, Guard, Scope
from .metrics import Metrics
from .models import ForgetBody, RecallQuery
from .service import AccessService

PRINCIPAL_KEY = "engram.principal"
T = TypeVar("T")
Text = Annotated[str, Field(min_length=1, max_length=4000)]
Limit = Annotated[int, Field(ge=1, le=50)]

INSTRUCTIONS = (
    "Engram is the user's long-term memory. Write each chat message with memory_write; before answering, "
    "call memory_recall for the assembled memory context (inject it into your system prompt only when it is "
    "not empty). Use memory_search / memory_read to look things up and memory_delete when the user asks to "
    "forget. Always pass the same tenant, user and session ids."
)


class EngramMCP:
    """The MCP tools over one AccessService. `principal` is the stdio caller."""

    def __init__(self, access: AccessService, principal: Principal = LOCAL) -> None:
        self.access = access
        self.principal = principal
        self.server = MCPServer("engram", instructions=INSTRUCTIONS)
        for tool in (self.memory_write, self.memory_read, self.memory_search, self.memory_delete,
                     self.memory_recall):
            self.server.add_tool(tool, name=tool.__name__, description=tool.__doc__)

    def _who(self, ctx: Context | None) -> Principal:
        request = getattr(ctx.request_context, "request", None) if ctx is not None else None
        if request is None:
            return self.principal
        who = request.scope.get(PRINCIPAL_KEY)
        if not isinstance(who, Principal):
            raise ToolError("unauthorized: the request carried no verified credentials")
        return who

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args))
        except AccessError as refused:
            self.access.metrics.add(f"mcp.errors.{refused.code}")
            raise ToolError(f"{refused.code}: {refused.message}") from refused

    # -- tools (docstrings are what the model reads) -------------------------------------
    async def memory_write(self, tenant: Identifier, user: Identifier, agent: Identifier, session: Identifier,
                           content: Annotated[str, Field(min_length=1, max_length=32_000)],
                           role: Literal["user", "assistant"] = "user", message_id: Identifier | None = None,
                           ctx: Context | None = None) -> dict[str, Any]:
        """Record one chat message (user or assistant) in the user's memory. Engram extracts what is worth
        remembering; re-sending the same message_id stores nothing new."""
        turn = TurnInput(tenant=tenant, user=user, agent=agent, session=session, role=role, content=content,
                         message_id=message_id or str(uuid.uuid4()))
        result = await self._call(self.access.ingest, self._who(ctx), [turn])
        return {"message_id": turn.message_id, "stored": result.appended == 1,
                "memories_changed": result.events.get("MemoryChanged", 0)}

    async def memory_read(self, tenant: Identifier, user: Identifier, session: Identifier | None = None,
                          memory_id: Identifier | None = None, ctx: Context | None = None) -> dict[str, Any]:
        """Read what is remembered about the user: one memory by id (an unknown id is an error), or all
        active memories plus the latest summary of the session. A new user or session is not an error:
        `user_known` / `session_known` are then false."""
        who = self._who(ctx)
        if memory_id is not None:
            record = await self._call(self.access.memory, who, tenant, user, memory_id)
            return {"memory": _memory(record)}
        await self._call(who.check_tenant, tenant)
        user_known, session_known = await self._call(self.access.known, tenant, user, session)
        self.access.note_unknown("read", tenant, user, session, user_known, session_known)
        if not user_known:
            return {"memories": [], "session_summary": None, "user_known": False, "session_known": False}
        records = await self._call(self.access.memories, who, tenant, user, "active")
        summary = (await self._call(self.access.summary, who, tenant, user, session)
                   if session is not None and session_known else None)
        return {"memories": [_memory(r) for r in records],
                "session_summary": summary.sections.render() if summary is not None else None,
                "user_known": True, "session_known": session_known}

    async def memory_search(self, tenant: Identifier, user: Identifier, query: Text,
                            session: Identifier | None = None, limit: Limit = 10,
                            ctx: Context | None = None) -> dict[str, Any]:
        """Search the user's active memories by meaning and keywords; best matches first. A new user or
        session is not an error (no results, `user_known` false)."""
        found = await self._call(self.access.search, self._who(ctx), tenant, user, session, query, limit)
        return {"results": [{**_memory(h.record), "score": round(h.vector_score + h.keyword_score, 4)}
                            for h in found.hits],
                "user_known": found.user_known, "session_known": found.session_known}

    async def memory_delete(self, tenant: Identifier, user: Identifier, session: Identifier | None = None,
                            memory_id: Identifier | None = None,
                            topic_text: Annotated[str, Field(max_length=500)] = "",
                            everything: bool = False, ctx: Context | None = None) -> dict[str, Any]:
        """Forget: one memory by id, every memory about a topic text, or everything about the user
        (then also session summaries and recent messages). Returns how many memories were really deleted."""
        who = self._who(ctx)
        if sum((memory_id is not None, bool(topic_text.strip()), everything)) != 1:
            raise ToolError("invalid_request: give exactly one of memory_id, topic_text or everything=true")
        if memory_id is not None:
            result = await self._call(self.access.forget_one, who, tenant, user, memory_id)
        else:
            body = ForgetBody(tenant=tenant, user=user, topic_text=topic_text, everything=everything)
            result = await self._call(self.access.forget, who, body)
        return result.model_dump()

    async def memory_recall(self, tenant: Identifier, user: Identifier, agent: Identifier, session: Identifier,
                            question: Text, ctx: Context | None = None) -> dict[str, Any]:
        """The memory context for answering `question`: global cards, long-term memories, the session summary
        and recent messages, ready for the system prompt. An empty `context` means: inject nothing. A new
        session still gets the user's long-term memory (`session_known` false); a new user gets an empty
        context (`user_known` false)."""
        query = RecallQuery(tenant=tenant, user=user, agent=agent, session=session, question=question)
        response = await self._call(self.access.recall, self._who(ctx), query)
        return response.model_dump(include={"recall_id", "context", "injected", "items", "recent", "degraded",
                                            "user_known", "session_known"})


def _memory(record: Any) -> dict[str, Any]:
    return {"memory_id": record.memory_id, "type": record.type.value, "slot": record.slot,
            "content": record.content, "status": record.status, "pinned": record.pinned,
            "importance": record.importance, "updated_at": record.updated_at.isoformat()}


def mcp_keys(keys: KeyRing, token: str | None) -> KeyRing:
    """The credentials the MCP server accepts: its own token (all tenants) and the API keys."""
    admins = keys.admin_keys | ({token} if token else set())
    return KeyRing(keys.tenant_keys, frozenset(admins))


def authorizer(keys: KeyRing) -> Callable[[Scope], None]:
    """Checks every HTTP request and leaves the verified principal in the ASGI scope."""
    def authorize(scope: Scope) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        client = scope.get("client")
        scope[PRINCIPAL_KEY] = keys.principal(token_from_headers(headers), client[0] if client else None)
    return authorize


def create_mcp_http_app(mcp: EngramMCP, keys: KeyRing, host: str, max_body_bytes: int,
                        metrics: Metrics | None = None) -> ASGIApp:
    """The streamable-HTTP MCP app at /mcp, behind the Guard (auth, size limit, counters)."""
    app = http_app(mcp.server, host)
    return Guard(app, max_body_bytes, metrics or mcp.access.metrics, prefix="mcp", authorize=authorizer(keys))
