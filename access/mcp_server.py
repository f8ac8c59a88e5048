"""Engram as an MCP memory server (official `mcp` SDK), over stdio or streamable HTTP.

Tools: `memory_write`, `memory_recall`, `memory_search`, `memory_read`,
`memory_history`, `memory_correct`, `memory_pin`, `memory_unpin`,
`memory_delete` (forget), `memory_feedback` and `memory_profile`: the operations of every door,
with the same argument names and defaults (docs/api.md). Each names its
tenant and user, unless the server is pinned to them (`--tenant`, `--user`):
then the tools do not advertise those arguments (one given anyway must match the pin). A new user or session is normal (`user_known` /
`session_known` false in the answer); a read of one named thing (a memory id)
that does not exist is an error. Over HTTP every request needs `Authorization: Bearer`
with `ENGRAM_MCP_TOKEN` (or an API key, scoped to its tenant) once any is
configured; without one only loopback clients are served. Over stdio the
caller is the local user who started the process (optionally pinned to one
tenant).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias, TypeVar

import anyio
from pydantic import Field

from engram.schemas.base import Identifier, stable_id
from engram.schemas.inputs import TurnInput

from ._mcp_compat import (
    Context, MCPServer, ToolError, forbid_unknown_arguments, hide_arguments, http_app, plain_argument_errors,
)
from .auth import LOCAL, KeyRing, Principal, token_from_headers
from .errors import AccessError
from .guard import ASGIApp, Guard, Scope
from .metrics import Metrics
from .models import DEFAULT_AGENT, DEFAULT_SESSION, FeedbackRequest, ForgetBody, RecallQuery
from .service import AccessService

PRINCIPAL_KEY = "engram.principal"
T = TypeVar("T")

INSTRUCTIONS = (
    "Engram is the user's long-term memory. Write each chat message with memory_write; before answering, "
    "call memory_recall for the assembled memory context (inject it into your system prompt only when it is "
    "not empty). Use memory_search / memory_read to look things up, memory_correct / memory_pin when the user "
    "corrects or stresses a memory, and memory_delete when the user asks to "
    "forget. Pass the same tenant, user and session ids every time (tenant and user may be pinned by the "
    "server; session is optional)."
)


OptionalId: TypeAlias = Identifier | None  # noqa: UP040
TenantArg = Annotated[OptionalId, Field(description="Tenant id; leave it out when the server is pinned (--tenant).")]
UserArg = Annotated[OptionalId, Field(description="User id; leave it out when the server is pinned (--user).")]
AgentArg = Annotated[Identifier, Field(description="Id of the agent (assistant) talking to the user.")]
SessionArg = Annotated[Identifier, Field(description="Conversation id. A new session is normal: it gets the "
                                                     "user's long-term memory.")]
SessionFilterArg = Annotated[OptionalId, Field(description="Conversation id; optional: only reported back as "
                                                           "session_known (memory_read: adds its summary).")]
ContentArg = Annotated[str, Field(description="The message text, exactly as said.", min_length=1,
                                  max_length=32_000)]
RoleArg = Annotated[Literal["user", "assistant"], Field(description="Who said it: user or assistant.")]
MessageIdArg = Annotated[OptionalId, Field(description="Your id for the message; optional. Without one, the same "
                                                       "text in the same session by the same role is one message "
                                                       "(a retry stores nothing new).")]
MemoryIdArg = Annotated[str, Field(description="One memory's id, or a unique prefix of it (at least 4 characters).",
                                   min_length=1, max_length=128)]
OptionalMemoryIdArg = Annotated[str | None, Field(description="One memory's id, or a unique prefix of it (at least "
                                                              "4 characters).", max_length=128)]
MemoryIdsArg = Annotated[list[str], Field(description="Forget these memories (ids or unique prefixes).",
                                          max_length=1000)]
QuestionArg = Annotated[str, Field(description="What the user asks now.", min_length=1, max_length=4000)]
QueryArg = Annotated[str, Field(description="Words or a sentence to search the memories for.", min_length=1,
                                max_length=4000)]
LimitArg = Annotated[int, Field(description="At most this many results (1-100).", ge=1, le=100)]
DeadlineArg = Annotated[float | None, Field(description="Time limit in ms (default: the configured recall "
                                                        "deadline, 300).", gt=0, le=10_000)]
StatusArg = Annotated[Literal["active", "all"], Field(description="active memories, or all (also replaced, "
                                                                  "retired and archived ones).")]
TopicArg = Annotated[str, Field(description="Forget every memory about this topic.", max_length=500)]
EverythingArg = Annotated[bool, Field(description="Forget everything about the user (also session summaries "
                                                  "and recent messages).")]
DryRunArg = Annotated[bool, Field(description="Only show what would be forgotten; change nothing.")]
CorrectContentArg = Annotated[str, Field(description="The memory's right content, as the user states it.",
                                         min_length=1, max_length=2000)]
RecallIdArg = Annotated[str, Field(description="The recall_id of the memory_recall answer judged.", min_length=1,
                                   max_length=128)]
RatingArg = Annotated[Literal["none", "good", "bad"], Field(description="Was the recalled memory helpful?")]
ReasonArg = Annotated[str, Field(description="A short reason; optional.", max_length=500)]
RemarkArg = Annotated[str, Field(description="A free remark; optional.", max_length=2000)]
DeprecatedIdArg = Annotated[str | None, Field(description="Deprecated: use memory_ids.", max_length=128,
                                              json_schema_extra={"deprecated": True})]
DeprecatedTopicArg = Annotated[str, Field(description="Deprecated: use topic.", max_length=500,
                                          json_schema_extra={"deprecated": True})]
DeprecatedSessionArg = Annotated[OptionalId, Field(description="Deprecated and ignored: forget is per user.",
                                                   json_schema_extra={"deprecated": True})]
TOOLS = ("memory_write", "memory_recall", "memory_search", "memory_read", "memory_history", "memory_correct",
         "memory_pin", "memory_unpin", "memory_delete", "memory_feedback",
         "memory_profile")


class EngramMCP:
    """The MCP tools over one AccessService. `principal` is the stdio caller; `tenant`/`user` pin the server."""

    def __init__(self, access: AccessService, principal: Principal = LOCAL, tenant: str | None = None,
                 user: str | None = None) -> None:
        self.access = access
        self.principal = principal
        self.tenant = tenant or principal.tenant
        self.user = user
        self.server = MCPServer("engram", instructions=INSTRUCTIONS)
        pinned = [name for name, value in (("tenant", self.tenant), ("user", self.user)) if value is not None]
        for name in TOOLS:
            tool = getattr(self, name)
            self.server.add_tool(tool, name=name, description=tool.__doc__)
            hide_arguments(self.server, name, pinned)
            forbid_unknown_arguments(self.server, name)
            plain_argument_errors(self.server, name)

    def _who(self, ctx: Context | None) -> Principal:
        request = getattr(ctx.request_context, "request", None) if ctx is not None else None
        if request is None:
            return self.principal
        who = request.scope.get(PRINCIPAL_KEY)
        if not isinstance(who, Principal):
            raise ToolError("unauthorized: the request carried no verified credentials")
        return who

    def _scope(self, tenant: str | None, user: str | None) -> tuple[str, str]:
        """The tenant and user of a call: the pinned ones, or the ones given (which must match a pin)."""
        for name, given, pinned in (("tenant", tenant, self.tenant), ("user", user, self.user)):
            if pinned is not None and given is not None and given != pinned:
                raise ToolError(f"forbidden_{name}: this memory server serves {name} {pinned!r} only, "
                                f"not {given!r}")
            if given is None and pinned is None:
                raise ToolError(f"invalid_request: give the {name} id (this server is not pinned to one)")
        return str(tenant or self.tenant), str(user or self.user)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args))
        except AccessError as refused:
            self.access.metrics.add(f"mcp.errors.{refused.code}")
            message = refused.message
            if refused.code == "forbidden_tenant" and self.principal is not LOCAL:
                message = "this memory server is pinned to another tenant"
            raise ToolError(f"{refused.code}: {message}") from refused

    # -- tools (docstrings are what the model reads) -------------------------------------
    async def memory_write(self, content: ContentArg, agent: AgentArg = DEFAULT_AGENT, role: RoleArg = "user",
                           tenant: TenantArg = None, user: UserArg = None, session: SessionArg = DEFAULT_SESSION,
                           message_id: MessageIdArg = None, ctx: Context | None = None) -> dict[str, Any]:
        """Record one chat message (user or assistant) in the user's memory. Engram extracts what is worth
        remembering and answers with what it remembered (`remembered`: each memory changed, with its text)."""
        tenant_id, user_id = self._scope(tenant, user)
        turn = TurnInput(tenant=tenant_id, user=user_id, agent=agent, session=session, role=role,
                         content=content, message_id=message_id or stable_id("mcp", tenant_id, user_id, session,
                                                                             role, content))
        result, changes = await self._call(self.access.record, self._who(ctx), [turn])
        return {"message_id": turn.message_id, "stored": result.appended == 1,
                "memories_changed": len(changes),
                "remembered": [{"memory_id": c.memory_id, "change": c.change, "memory": c.after or c.before}
                               for c in changes]}

    async def memory_read(self, tenant: TenantArg = None, user: UserArg = None, session: SessionFilterArg = None,
                          memory_id: OptionalMemoryIdArg = None, status: StatusArg = "active",
                          ctx: Context | None = None) -> dict[str, Any]:
        """Read what is remembered about the user: one memory by id (an unknown id is an error), or all
        active memories (status all: also replaced, retired, archived) plus the latest summary of the
        session. A new user or session is not an error: `user_known` / `session_known` are then false."""
        who = self._who(ctx)
        tenant_id, user_id = self._scope(tenant, user)
        if memory_id is not None:
            record = await self._call(self.access.memory, who, tenant_id, user_id, memory_id)
            return {"memory": _memory(record)}
        await self._call(who.check_tenant, tenant_id)
        user_known, session_known = await self._call(self.access.known, tenant_id, user_id, session)
        self.access.note_unknown("read", tenant_id, user_id, session, user_known, session_known)
        if not user_known:
            return {"memories": [], "session_summary": None, "user_known": False, "session_known": False}
        records = await self._call(self.access.memories, who, tenant_id, user_id, status)
        summary = (await self._call(self.access.summary, who, tenant_id, user_id, session)
                   if session is not None and session_known else None)
        return {"memories": [_memory(r) for r in records],
                "session_summary": summary.sections.render() if summary is not None else None,
                "user_known": True, "session_known": session_known}

    async def memory_search(self, query: QueryArg, tenant: TenantArg = None, user: UserArg = None,
                            session: SessionFilterArg = None, limit: LimitArg = 10,
                            ctx: Context | None = None) -> dict[str, Any]:
        """Search the user's active memories by meaning and keywords; best matches first. A new user or
        session is not an error (no results, `user_known` false)."""
        tenant_id, user_id = self._scope(tenant, user)
        found = await self._call(self.access.search, self._who(ctx), tenant_id, user_id, session, query, limit)
        return {"results": [{**_memory(h.record), "score": round(h.vector_score + h.keyword_score, 4)}
                            for h in found.hits],
                "user_known": found.user_known, "session_known": found.session_known}

    async def memory_history(self, memory_id: MemoryIdArg, tenant: TenantArg = None, user: UserArg = None,
                             ctx: Context | None = None) -> dict[str, Any]:
        """How one memory came to be: every change (created, updated, replaced, ...) with its reason, back to
        the chat turns it came from."""
        who = self._who(ctx)
        tenant_id, user_id = self._scope(tenant, user)
        steps = await self._call(self.access.lineage, who, tenant_id, user_id, memory_id)
        try:  # the full id of a prefix; a forgotten memory has no row, its lineage was found by its full id
            full = await self._call(self.access.resolve, who, tenant_id, user_id, memory_id, "all")
        except ToolError:
            full = memory_id
        return {"memory_id": full, "steps": [step.model_dump(mode="json") for step in steps]}

    async def memory_correct(self, memory_id: MemoryIdArg, content: CorrectContentArg, tenant: TenantArg = None,
                             user: UserArg = None, ctx: Context | None = None) -> dict[str, Any]:
        """Replace a memory's content with what the user says is right. Returns what changed."""
        who = self._who(ctx)
        tenant_id, user_id = self._scope(tenant, user)
        result = await self._call(self.access.correct, who, tenant_id, user_id, memory_id, content)
        return result.model_dump()

    async def memory_pin(self, memory_id: MemoryIdArg, tenant: TenantArg = None, user: UserArg = None,
                         ctx: Context | None = None) -> dict[str, Any]:
        """Pin a memory: it never decays and is never evicted."""
        return await self._pin(memory_id, tenant, user, ctx, True)

    async def memory_unpin(self, memory_id: MemoryIdArg, tenant: TenantArg = None, user: UserArg = None,
                           ctx: Context | None = None) -> dict[str, Any]:
        """Unpin a memory: it decays again like any other."""
        return await self._pin(memory_id, tenant, user, ctx, False)

    async def _pin(self, memory_id: str, tenant: str | None, user: str | None, ctx: Context | None,
                   pinned: bool) -> dict[str, Any]:
        who = self._who(ctx)
        tenant_id, user_id = self._scope(tenant, user)
        result = await self._call(self.access.pin, who, tenant_id, user_id, memory_id, pinned)
        return result.model_dump()

    async def memory_delete(self, tenant: TenantArg = None, user: UserArg = None, memory_ids: MemoryIdsArg = [],  # noqa: B006
                            topic: TopicArg = "", everything: EverythingArg = False, dry_run: DryRunArg = False,
                            memory_id: DeprecatedIdArg = None, topic_text: DeprecatedTopicArg = "",
                            session: DeprecatedSessionArg = None, ctx: Context | None = None) -> dict[str, Any]:
        """Forget: memories by id, every memory about a topic, or everything about the user (then also
        session summaries and recent messages). Returns how many memories were really deleted (dry_run: would
        be, and nothing changes)."""
        who = self._who(ctx)
        tenant_id, user_id = self._scope(tenant, user)
        given_ids = [*memory_ids, *([memory_id] if memory_id is not None else [])]
        topic = topic or topic_text
        if sum((bool(given_ids), bool(topic.strip()), everything)) != 1:
            raise ToolError("invalid_request: give exactly one of memory_ids, topic or everything=true")
        body = ForgetBody(tenant=tenant_id, user=user_id, memory_ids=given_ids, topic=topic, everything=everything,
                          dry_run=dry_run)
        result = await self._call(self.access.forget, who, body)
        return result.model_dump()

    async def memory_recall(self, question: QuestionArg, agent: AgentArg = DEFAULT_AGENT, tenant: TenantArg = None,
                            user: UserArg = None, session: SessionArg = DEFAULT_SESSION,
                            deadline_ms: DeadlineArg = None, ctx: Context | None = None) -> dict[str, Any]:
        """The memory context for answering `question`: global cards, long-term memories, the session summary
        and recent messages, ready for the system prompt. An empty `context` means: inject nothing. A new
        session still gets the user's long-term memory (`session_known` false); a new user gets an empty
        context (`user_known` false)."""
        tenant_id, user_id = self._scope(tenant, user)
        query = RecallQuery(tenant=tenant_id, user=user_id, agent=agent, session=session, question=question,
                            deadline_ms=deadline_ms)
        response = await self._call(self.access.recall, self._who(ctx), query)
        return response.model_dump(include={"recall_id", "context", "tokens", "injected", "items", "recent",
                                            "degraded", "deadline_exceeded", "missed",
                                            "user_known", "session_known", "freshness"})

    async def memory_feedback(self, recall_id: RecallIdArg, rating: RatingArg, reason: ReasonArg = "",
                              remark: RemarkArg = "", tenant: TenantArg = None, user: UserArg = None,
                              ctx: Context | None = None) -> dict[str, Any]:
        """Tell Engram whether a recall helped (good) or not (bad), by its recall_id."""
        tenant_id, user_id = self._scope(tenant, user)
        body = FeedbackRequest(tenant=tenant_id, user=user_id, recall_id=recall_id, rating=rating,  # type: ignore[arg-type]
                               reason=reason, remark=remark)
        result = await self._call(self.access.feedback, self._who(ctx), body)
        return result.model_dump()


    async def memory_profile(self, tenant: TenantArg = None, user: UserArg = None,
                             ctx: Context | None = None) -> dict[str, Any]:
        """The user's standing profile, most important first: who they are, where they live, the people
        and pets around them, standing constraints and how they want to be answered. Every recall starts
        with it (a sensitive entry only when the question touches it). A new user is not an error
        (`user_known` false, no entries)."""
        tenant_id, user_id = self._scope(tenant, user)
        profile = await self._call(self.access.profile, self._who(ctx), tenant_id, user_id)
        return profile.model_dump(mode="json")


def _memory(record: Any) -> dict[str, Any]:
    return {"memory_id": record.memory_id, "type": record.type.value, "slot": record.slot,
            "content": record.content, "status": record.status, "pinned": record.pinned,
            "importance": record.importance, "updated_at": record.updated_at.isoformat()}


def mcp_keys(keys: KeyRing, token: str | None) -> KeyRing:
    """The credentials the MCP server accepts: its own token (all tenants) and the API keys.

    A token equal to a tenant's API key stays that tenant's key: it never becomes an all-tenant admin.
    """
    if token and token in keys.tenant_keys:
        return keys
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
