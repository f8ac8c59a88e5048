"""`engram.Memory`: the in-process Python API, on whichever runtime ENGRAM_RUNTIME names.

    from engram import Memory

    m = Memory(data="./memory")                       # a data folder (embedded) -- or ENGRAM_RUNTIME=distributed
    m.record(user="ana", messages=[{"role": "user", "content": "I prefer green tea"}])
    # -> [Remembered(memory_id='…', memory='User prefers green tea', event='created', previous=None)]
    m.recall(user="ana", question="What should I drink?").context   # the memory block for your system prompt
    m.memories(user="ana")                            # what is remembered (MemoryRecord list)
    m.profile(user="ana").entries                     # the standing profile every recall starts with
    m.forget(user="ana", memory_id="…")               # or topic="tea", or everything=True

Tenant, agent and session have defaults (`default`, `assistant`, `default`);
pass them per call or to the constructor. It runs the same use cases as the
HTTP API and MCP server (`engram.access.service`) over the same runtime port
(`engram.runtime_port`), as the local, trusted caller.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engram.access.auth import LOCAL
from engram.access.errors import BadRequest, NotFound
from engram.access.models import ForgetBody, LineageStep, ProfileResponse, RecallQuery, RecallResponse, SearchMatch
from engram.access.service import AccessService, search_response
from engram.runtime_port import MemoryRuntime, open_runtime
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import MemoryRecord

Message = str | Mapping[str, Any]
DEFAULT_DATA = Path.home() / ".engram"


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
        """
        items = [messages] if isinstance(messages, (str, Mapping)) else list(messages)
        turns = [self._turn(user, item, session, agent, tenant) for item in items]
        if not turns:
            return []
        _, changes = self.access.record(LOCAL, turns)
        return [Remembered(c.memory_id, c.after if c.after is not None else (c.before or ""), c.change,
                           c.before if c.before != c.after else None) for c in changes]

    def _turn(self, user: str, item: Message, session: str | None, agent: str | None,
              tenant: str | None) -> TurnInput:
        body: Mapping[str, Any] = {"role": "user", "content": item} if isinstance(item, str) else item
        unknown = set(body) - {"role", "content", "message_id", "ts", "metadata"}
        if unknown:
            raise BadRequest(f"a message has role, content and optionally message_id, ts, metadata; "
                             f"not {', '.join(sorted(unknown))}")
        return TurnInput.model_validate({
            "tenant": tenant or self.tenant, "user": user, "agent": agent or self.agent,
            "session": session or self.session, "role": body.get("role", "user"), "content": body.get("content"),
            "message_id": body.get("message_id") or str(uuid.uuid4()),
            **{k: body[k] for k in ("ts", "metadata") if k in body}})

    # -- read -----------------------------------------------------------------------
    def recall(self, user: str, question: str, *, session: str | None = None, agent: str | None = None,
               tenant: str | None = None, system_prompt: str = "", token_budget: int | None = None,
               deadline_ms: float | None = None) -> RecallResponse:
        """The memory context for the next LLM call: `.context` (empty: inject nothing), `.messages`, `.items`.

        A new session gets the user's long-term memory (`session_known` false); a new user an empty context.
        """
        query = RecallQuery(tenant=tenant or self.tenant, user=user, agent=agent or self.agent,
                            session=session or self.session, question=question, system_prompt=system_prompt,
                            token_budget=token_budget, deadline_ms=deadline_ms)
        return self.access.recall(LOCAL, query)

    def memories(self, user: str, *, tenant: str | None = None, include_all: bool = False) -> list[MemoryRecord]:
        """What is remembered about the user (active memories; `include_all` adds replaced and retired ones)."""
        try:
            return self.access.memories(LOCAL, tenant or self.tenant, user, "all" if include_all else "active")
        except NotFound as missing:
            if missing.code == "unknown_user":
                return []
            raise

    def profile(self, user: str, *, tenant: str | None = None) -> ProfileResponse:
        """The user's standing profile (`.entries`, most important first): what every recall starts with."""
        return self.access.profile(LOCAL, tenant or self.tenant, user)

    def search(self, user: str, query: str, *, limit: int = 10, tenant: str | None = None) -> list[SearchMatch]:
        """The user's memories matching `query` by meaning and keywords, best first."""
        found = self.access.search(LOCAL, tenant or self.tenant, user, None, query, limit)
        return search_response(found).results

    def history(self, user: str, memory_id: str, *, tenant: str | None = None) -> list[LineageStep]:
        """How one memory came to be: every change, back to the turns it came from."""
        t = tenant or self.tenant
        return self.access.lineage(LOCAL, t, user, self.resolve(user, memory_id, tenant=t, status="all"))

    # -- user controls ---------------------------------------------------------------------
    def forget(self, user: str, memory_id: str | None = None, *, topic: str = "", everything: bool = False,
               tenant: str | None = None) -> list[Remembered]:
        """Forget one memory (id or unique id prefix), every memory about a topic, or everything."""
        t = tenant or self.tenant
        if sum((memory_id is not None, bool(topic.strip()), everything)) != 1:
            raise BadRequest("give exactly one of memory_id, topic or everything=True")
        ids = [self.resolve(user, memory_id, tenant=t)] if memory_id is not None else []
        result = self.access.forget(LOCAL, ForgetBody(tenant=t, user=user, memory_ids=ids, topic_text=topic,
                                                      everything=everything))
        return [Remembered(c.memory_id, c.before or c.after or "", c.change, None) for c in result.changes]

    def correct(self, user: str, memory_id: str, text: str, *, tenant: str | None = None) -> list[Remembered]:
        """Replace a memory's content with what the user says is right."""
        t = tenant or self.tenant
        result = self.access.correct(LOCAL, t, user, self.resolve(user, memory_id, tenant=t), text)
        return [Remembered(c.memory_id, c.after or "", c.change, c.before) for c in result.changes]

    def pin(self, user: str, memory_id: str, pinned: bool = True, *, tenant: str | None = None) -> list[Remembered]:
        """Pin a memory (never decays) or unpin it."""
        t = tenant or self.tenant
        result = self.access.pin(LOCAL, t, user, self.resolve(user, memory_id, tenant=t), pinned)
        return [Remembered(c.memory_id, c.after or "", c.change, None) for c in result.changes]

    def resolve(self, user: str, memory_id: str, *, tenant: str | None = None,
                status: Literal["active", "all"] = "active") -> str:
        """A full memory id from an id or a unique prefix of one (as the CLI lists them)."""
        t = tenant or self.tenant
        records = self.memories(user, tenant=t, include_all=status == "all")
        return resolve_id(memory_id, [r.memory_id for r in records])

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_id(given: str, known: Sequence[str]) -> str:
    """`given` itself if known, else the one known id it starts; NotFound / BadRequest otherwise."""
    if given in known:
        return given
    matches = [k for k in known if k.startswith(given)] if len(given) >= 4 else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise BadRequest(f"memory id prefix {given!r} matches {len(matches)} memories: give more of it",
                         "ambiguous_id")
    raise NotFound(f"no active memory {given!r} for this user", "unknown_memory")


__all__ = ["Memory", "Remembered", "resolve_id"]
