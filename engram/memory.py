"""`engram.Memory`: the in-process Python API, on whichever runtime ENGRAM_RUNTIME names.

    from engram import Memory

    m = Memory(data="./memory")                       # a data folder (embedded) -- or ENGRAM_RUNTIME=distributed
    m.record(user="ana", messages=[{"role": "user", "content": "I prefer green tea"}])
    # -> [Remembered(memory_id='…', memory='User prefers green tea', event='created', previous=None)]
    m.recall(user="ana", question="What should I drink?").context   # the memory block for your system prompt
    m.memories(user="ana")                            # what is remembered (MemoryRecord list)
    m.profile(user="ana").entries                     # the standing profile every recall starts with
    m.forget("ana", "3f2c")                           # ids or unique prefixes; or topic="tea", or everything=True

Tenant, agent and session have defaults (`default`, `assistant`, `default`);
pass them per call or to the constructor. Names, defaults and errors are those
of every other door (docs/api.md). It runs the same use cases as the
HTTP API and MCP server (`engram.access.service`) over the same runtime port
(`engram.runtime_port`), as the local, trusted caller.
"""

from __future__ import annotations

import functools
import os
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter, ValidationError

from engram.access.auth import LOCAL
from engram.access.errors import BadRequest, InvalidTurns, invalid_input, no_summary
from engram.access.models import (
    FeedbackRequest, FeedbackResult, ForgetBody, LineageStep, MemoryChange, ProfileResponse, RecallQuery, RecallResponse,
    SearchMatch,
)
from engram.access.service import AccessService, Refused, resolve_id, search_response
from engram.runtime_port import MemoryRuntime, open_runtime
from engram.schemas.base import Identifier, check_utf8
from engram.schemas.events import SummarySnapshotted
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import MemoryRecord

_IDENTIFIER: TypeAdapter[str] = TypeAdapter(Identifier)
Message = str | Mapping[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_DATA = Path.home() / ".engram"


Convert = Callable[[tuple[Any, ...], dict[str, Any], Any], tuple[tuple[Any, ...], dict[str, Any]]]


def _one_more_id(args: tuple[Any, ...], kw: dict[str, Any], memory_id: Any) -> tuple[tuple[Any, ...],
                                                                                     dict[str, Any]]:
    """`forget(user="ana", memory_id=...)` of the first release as `forget("ana", ...)`: `user` moves too."""
    if len(args) < 2 and "user" in kw:
        args = (*args, kw.pop("user"))
    return (*args, memory_id), kw


def renamed(old: str, instead: str, convert: Convert) -> Callable[[F], F]:
    """Accept the keyword `old` (a name of the first release), warn, and call with what `convert` makes of it.

    The method's own signature (what `inspect` and docs/api.md show) has only the current names.
    """
    def decorate(method: F) -> F:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                warnings.warn(f"the argument {old!r} is deprecated: use {instead}", DeprecationWarning,
                              stacklevel=2)
                args, kwargs = convert(args, kwargs, kwargs.pop(old))
            return method(*args, **kwargs)
        call.deprecated = (*getattr(method, "deprecated", ()), old)  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return decorate



@dataclass(frozen=True)
class Remembered:
    """One change to what is remembered: `event` is created, updated, replaced, deleted, pinned, …

    `memory_id` is the memory's id, named as on every other surface (HTTP, MCP, the CLI's --json).
    """

    memory_id: str
    memory: str
    event: str
    previous: str | None = None

    @property
    def id(self) -> str:
        """Deprecated: the old name of `memory_id` (kept for code written against the first release)."""
        warnings.warn("Remembered.id is deprecated: use Remembered.memory_id", DeprecationWarning, stacklevel=2)
        return self.memory_id


class Memory:
    """Long-term memory for your agent's users, in this process (or on a distributed deployment)."""

    def __init__(self, data: str | Path | None = None, *, tenant: str = "default", agent: str = "assistant",
                 session: str = "default", runtime: MemoryRuntime | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        folder = Path(data) if data is not None else Path(os.environ.get("ENGRAM_DATA") or DEFAULT_DATA)
        self.runtime = runtime or open_runtime(folder.expanduser(), env, serving=True)
        self.access = AccessService(self.runtime)
        self.tenant, self.agent, self.session = tenant, agent, session

    # -- write ---------------------------------------------------------------------
    def record(self, user: str, messages: Message | Sequence[Message], *, session: str | None = None,
               agent: str | None = None, tenant: str | None = None) -> list[Remembered]:
        """Record chat messages (a string, a {"role", "content"} dict, or a list of them); return what changed.

        A dict may carry `message_id`: sending the same id again records nothing (safe retries).
        Each message is validated on its own: when some are invalid the valid ones are still recorded
        and InvalidTurns (a BadRequest) names each invalid one by its position (`details["turns"]`);
        its `remembered` lists what the valid ones changed.
        """
        items = [messages] if isinstance(messages, (str, Mapping)) else list(messages)
        turns = [self._turn(user, item, session, agent, tenant) for item in items]
        if not turns:
            return []
        try:
            _, changes = self.access.record(LOCAL, turns)
        except InvalidTurns as invalid:
            invalid.remembered = [_remembered(c) for c in invalid.changes]  # type: ignore[attr-defined]
            raise
        return [_remembered(c) for c in changes]

    def _turn(self, user: str, item: Message, session: str | None, agent: str | None,
              tenant: str | None) -> dict[str, Any] | Refused:
        """The turn as the HTTP API takes it (validated with the others by the access service)."""
        body: Mapping[str, Any] = {"role": "user", "content": item} if isinstance(item, str) else item
        if not isinstance(body, Mapping):
            return Refused(f"a message is a string or a dict, not {type(body).__name__}")
        unknown = set(body) - {"role", "content", "message_id", "ts", "metadata"}
        if unknown:
            return Refused(f"a message has role, content and optionally message_id, ts, metadata; "
                           f"not {', '.join(sorted(unknown))}")
        return {"tenant": tenant or self.tenant, "user": user, "agent": agent or self.agent,
                "session": session or self.session, "role": body.get("role", "user"), "content": body.get("content"),
                "message_id": body.get("message_id") or str(uuid.uuid4()),
                **{k: body[k] for k in ("ts", "metadata") if k in body}}

    # -- read -----------------------------------------------------------------------
    def recall(self, user: str, question: str, *, session: str | None = None, agent: str | None = None,
               tenant: str | None = None, system_prompt: str = "", token_budget: int | None = None,
               deadline_ms: float | None = None) -> RecallResponse:
        """The memory context for the next LLM call: `.context` (empty: inject nothing), `.messages`, `.items`.

        A new session gets the user's long-term memory (`session_known` false); a new user an empty context.
        `deadline_ms` defaults to the configured recall deadline (`recall.deadline_ms`, 300 ms).
        """
        with validated():
            query = RecallQuery(tenant=tenant or self.tenant, user=user, agent=agent or self.agent,
                                session=session or self.session, question=question, system_prompt=system_prompt,
                                token_budget=token_budget, deadline_ms=deadline_ms)
        return self.access.recall(LOCAL, query)

    @renamed("include_all", 'status="all"', lambda args, kw, value: (args, {**kw, "status": "all" if value
                                                                                 else "active"}))
    def memories(self, user: str, *, status: Literal["active", "all"] = "active",
                 tenant: str | None = None) -> list[MemoryRecord]:
        """What is remembered about the user: active memories, or with `status="all"` also replaced,
        retired and archived ones. A new user has none (`[]`)."""
        check_inputs({"tenant": tenant, "user": user})
        return self.access.memories(LOCAL, tenant or self.tenant, user, status)

    def memory(self, user: str, memory_id: str, *, tenant: str | None = None) -> MemoryRecord:
        """One memory by id (or a unique id prefix), in whatever status; NotFound if the user has none such."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id})
        return self.access.memory(LOCAL, t, user, memory_id)

    def profile(self, user: str, *, tenant: str | None = None) -> ProfileResponse:
        """The user's standing profile (`.entries`, most important first): what every recall starts with."""
        return self.access.profile(LOCAL, tenant or self.tenant, user)

    def search(self, user: str, query: str, *, limit: int = 10, tenant: str | None = None) -> list[SearchMatch]:
        """The user's memories matching `query` by meaning and keywords, best first (`limit` 1-100)."""
        check_inputs({"tenant": tenant, "user": user}, {"query": query})
        found = self.access.search(LOCAL, tenant or self.tenant, user, None, query, limit)
        return search_response(found).results

    def history(self, user: str, memory_id: str, *, tenant: str | None = None) -> list[LineageStep]:
        """How one memory came to be: every change, back to the turns it came from."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id})
        return self.access.lineage(LOCAL, t, user, memory_id)

    def summary(self, user: str, session: str, *, tenant: str | None = None) -> SummarySnapshotted:
        """The latest summary of one of the user's sessions; NotFound while it has none."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user, "session": session})
        snapshot = self.access.summary(LOCAL, t, user, session)
        if snapshot is None:
            raise no_summary(session)
        return snapshot

    def feedback(self, user: str, recall_id: str, rating: int | str, *, reason: str = "", remark: str = "",
                 tenant: str | None = None) -> FeedbackResult:
        """A verdict on one recall (its `recall_id`): 0/"none", 1/"good" or 2/"bad"."""
        with validated():
            body = FeedbackRequest(tenant=tenant or self.tenant, user=user, recall_id=recall_id,
                                   rating=rating, reason=reason, remark=remark)  # type: ignore[arg-type]
        return self.access.feedback(LOCAL, body)

    # -- user controls ---------------------------------------------------------------------
    @renamed("memory_id", "the ids as positional arguments", lambda args, kw, value: _one_more_id(args, kw, value))
    def forget(self, user: str, *memory_ids: str, topic: str = "", everything: bool = False, dry_run: bool = False,
               tenant: str | None = None) -> list[Remembered]:
        """Forget memories by id (or unique id prefix), every memory about a `topic`, or `everything`.

        `dry_run` returns what would be forgotten and changes nothing.
        """
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"topic": topic, **{f"memory_ids.{i}": m
                                                                      for i, m in enumerate(memory_ids)}})
        if sum((bool(memory_ids), bool(topic.strip()), everything)) != 1:
            raise BadRequest("give exactly one of: memory ids, topic or everything=True")
        result = self.access.forget(LOCAL, ForgetBody(tenant=t, user=user, memory_ids=list(memory_ids), topic=topic,
                                                      everything=everything, dry_run=dry_run))
        return [Remembered(c.memory_id, c.before or c.after or "", c.change, None) for c in result.changes]

    @renamed("text", "content", lambda args, kw, value: (args, {**kw, "content": value}))
    def correct(self, user: str, memory_id: str, content: str, *, tenant: str | None = None) -> list[Remembered]:
        """Replace a memory's content with what the user says is right."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id, "content": content})
        result = self.access.correct(LOCAL, t, user, memory_id, content)
        return [Remembered(c.memory_id, c.after or "", c.change, c.before) for c in result.changes]

    @renamed("pinned", "unpin()", lambda args, kw, value: (args, {**kw, "_pinned": bool(value)}))
    def pin(self, user: str, memory_id: str, *, tenant: str | None = None, _pinned: bool = True) -> list[Remembered]:
        """Pin a memory: it never decays."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id})
        result = self.access.pin(LOCAL, t, user, memory_id, _pinned)
        return [Remembered(c.memory_id, c.after or "", c.change, None) for c in result.changes]

    def unpin(self, user: str, memory_id: str, *, tenant: str | None = None) -> list[Remembered]:
        """Unpin a memory: it decays again like any other."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id})
        result = self.access.pin(LOCAL, t, user, memory_id, False)
        return [Remembered(c.memory_id, c.after or "", c.change, None) for c in result.changes]

    def resolve(self, user: str, memory_id: str, *, tenant: str | None = None,
                status: Literal["active", "all"] = "active") -> str:
        """A full memory id from an id or a unique prefix of one (as the CLI lists them)."""
        t = tenant or self.tenant
        check_inputs({"tenant": t, "user": user}, {"memory_id": memory_id})
        return self.access.resolve(LOCAL, t, user, memory_id, status)

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remembered(change: MemoryChange) -> Remembered:
    return Remembered(change.memory_id, change.after if change.after is not None else (change.before or ""),
                      change.change, change.before if change.before != change.after else None)


@contextmanager
def validated() -> Iterator[None]:
    """Invalid input raises BadRequest `invalid_request` naming the fields, not pydantic's raw error."""
    try:
        yield
    except ValidationError as exc:
        raise invalid_input(exc.errors()) from None


def check_inputs(ids: Mapping[str, str | None], texts: Mapping[str, str | None] | None = None) -> None:
    """Ids are identifiers and texts valid UTF-8, as the HTTP API checks them (BadRequest otherwise)."""
    for name, value in ids.items():
        if value is not None:
            try:
                _IDENTIFIER.validate_python(value)
            except ValidationError as exc:
                raise invalid_input([{**e, "loc": (name,)} for e in exc.errors()]) from None
    for name, value in (texts or {}).items():
        if value is not None:
            try:
                check_utf8(value)
            except ValueError as exc:
                raise invalid_input([{"loc": (name,), "msg": str(exc)}]) from None


__all__ = ["Memory", "Remembered", "resolve_id"]

