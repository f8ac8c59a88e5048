"""The CLI commands that read memory or change it, through the runtime port (either runtime).

`engram memories | profile | recall | search | summary | history | correct | pin | unpin | forget` run the
same use cases as the HTTP API (`engram.access.service`) as the local, trusted caller. Memory ids
may be given as the short prefixes `engram memories` lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import click
import orjson

from engram.access.auth import LOCAL
from engram.access.errors import AccessError
from engram.access.models import ControlResult, ForgetBody
from engram.access.service import AccessService
from engram.memory import resolve_id
from engram.recall.service import RecallRequest
from engram.runtime_port import MemoryRuntime, open_runtime

from . import render

Scope = [click.option("--tenant", required=True, help="Tenant id."), click.option("--user", required=True,
                                                                                 help="User id.")]


def scoped(command: Any) -> Any:
    for option in reversed(Scope):
        command = option(command)
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)



CLI_RECALL_DEADLINE_MS = 10_000.0
"""A one-shot command opens its store connections cold (Weaviate, Kafka), so the chat path's deadline
(`recall.deadline_ms`, end to end for serving) would miss parts that are merely slow to connect."""

@contextmanager
def opened(ctx: click.Context, writes: bool = False) -> Iterator[AccessService]:
    """The access use cases over the runtime ENGRAM_RUNTIME names; refusals become one-line errors.

    A command that `writes` (correct, pin, forget) takes the data folder's serving lock, so it
    is refused while `engram serve`/`engram mcp` holds the folder (whose caches it would outdate).
    """
    with runtime_for(ctx, writes) as backend:
        yield AccessService(backend)


@contextmanager
def runtime_for(ctx: click.Context, writes: bool = False) -> Iterator[MemoryRuntime]:
    """The runtime port ENGRAM_RUNTIME names, for one command (`writes`: see `opened`); errors in one line."""
    try:
        backend = open_runtime(ctx.obj["data"], serving=writes)
    except AccessError as error:
        if error.code == "bad_runtime":
            raise click.UsageError(error.message) from None
        raise click.ClickException(error.message) from None
    try:
        yield backend
    except AccessError as error:
        raise click.ClickException(error.message) from None
    finally:
        backend.close()


def emit_json(value: object) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


def _resolve(access: AccessService, tenant: str, user: str, memory_id: str, status: str = "active") -> str:
    records = access.memories(LOCAL, tenant, user, "all" if status == "all" else "active")
    return resolve_id(memory_id, [r.memory_id for r in records])


def _report(result: ControlResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    click.echo(f"{result.affected} memor{'y' if result.affected == 1 else 'ies'} changed")
    for change in result.changes:
        text = change.after if change.after is not None else change.before
        click.echo(f"  {change.memory_id[:8]} {change.change}: {text}")


@click.command()
@scoped
@click.pass_context
def profile(ctx: click.Context, tenant: str, user: str, as_json: bool) -> None:
    """The user's standing profile: what every recall starts with (sensitive entries marked)."""
    with opened(ctx) as access:
        result = access.profile(LOCAL, tenant, user)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    for entry in result.entries:
        marks = ",".join(entry.domains) + (f" sensitive:{','.join(entry.sensitive)}" if entry.sensitive else "")
        click.echo(f"{entry.memory_id[:8]}  {entry.content}  [{marks}]{'  (pinned)' if entry.pinned else ''}")
    if not result.entries:
        click.echo("(no profile entries)")


@click.command()
@scoped
@click.option("--all", "include_all", is_flag=True, help="Include replaced and retired memories.")
@click.pass_context
def memories(ctx: click.Context, tenant: str, user: str, as_json: bool, include_all: bool) -> None:
    """The current memories of one user."""
    with opened(ctx) as access:
        records = access.memories(LOCAL, tenant, user, "all" if include_all else "active")
    if as_json:
        emit_json([render.memory_dict(r) for r in records])
    else:
        click.echo(render.memory_table(records))


@click.command()
@scoped
@click.option("--agent", required=True, help="Agent id.")
@click.option("--session", required=True, help="Session id (a new session gets long-term memory only).")
@click.option("--deadline-ms", type=float, default=None,
              help=f"Time limit in ms (default {CLI_RECALL_DEADLINE_MS:.0f}, or the configured one if longer).")
@click.argument("question")
@click.pass_context
def recall(ctx: click.Context, tenant: str, user: str, agent: str, session: str, as_json: bool,
           deadline_ms: float | None, question: str) -> None:
    """Assemble the memory context for a question."""
    with opened(ctx) as access:
        request = RecallRequest(tenant, user, agent, session, question, datetime.now(timezone.utc))
        limit = deadline_ms or max(CLI_RECALL_DEADLINE_MS, access.backend.config.recall.deadline_ms)
        result = access.backend.recall(request, limit)
    if result is None:
        raise click.ClickException("recall failed or ran out of time (see the log); nothing to inject")
    if as_json:
        emit_json(render.recall_dict(result))
    else:
        click.echo(render.recall_text(result))


@click.command()
@scoped
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@click.argument("query")
@click.pass_context
def search(ctx: click.Context, tenant: str, user: str, as_json: bool, limit: int, query: str) -> None:
    """Search one user's memories by meaning and keywords, best first."""
    with opened(ctx) as access:
        found = access.search(LOCAL, tenant, user, None, query, limit)
    if as_json:
        emit_json([{**render.memory_dict(h.record), "score": round(h.vector_score + h.keyword_score, 4)}
                   for h in found.hits])
    elif not found.user_known:
        click.echo("(new user: nothing is recorded for this user yet)")
    else:
        click.echo(render.memory_table([h.record for h in found.hits]))


@click.command()
@click.option("--tenant", required=True, help="Tenant id.")
@click.option("--session", required=True, help="Session id.")
@click.option("--user", default=None, help="Needed only if several users share the session id.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def summary(ctx: click.Context, tenant: str, session: str, user: str | None, as_json: bool) -> None:
    """The latest summary of a session."""
    with opened(ctx) as access:
        users = [user] if user else access.backend.read(lambda store: store.session_users(tenant, session))
        if not users:
            raise click.ClickException(f"unknown session {session!r} in tenant {tenant!r}")
        if len(users) > 1:
            raise click.ClickException(f"session {session!r} has several users ({', '.join(users)}): pass --user")
        snapshot = access.summary(LOCAL, tenant, users[0], session)
    if snapshot is None:
        raise click.ClickException(f"session {session!r} has no summary yet (too few messages so far)")
    if as_json:
        emit_json(snapshot.model_dump(mode="json"))
    else:
        click.echo(render.summary_text(snapshot))


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def history(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """How one memory came to be: its changes back to the L0 turns (an id or a unique prefix)."""
    with opened(ctx) as access:
        access.require_user(LOCAL, tenant, user)
        full = _resolve(access, tenant, user, memory_id, "all")
        steps = access.backend.lineage(tenant, user, full)
    if not steps:
        raise click.ClickException(f"no memory {memory_id!r} for tenant {tenant!r}, user {user!r}")
    if as_json:
        emit_json(steps)
    else:
        click.echo(render.lineage_text(steps))


@click.command()
@scoped
@click.argument("memory_id")
@click.argument("content")
@click.pass_context
def correct(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str, content: str) -> None:
    """Replace a memory's content with the right one."""
    with opened(ctx, writes=True) as access:
        _report(access.correct(LOCAL, tenant, user, _resolve(access, tenant, user, memory_id), content), as_json)


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def pin(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """Pin a memory: it never decays."""
    with opened(ctx, writes=True) as access:
        _report(access.pin(LOCAL, tenant, user, _resolve(access, tenant, user, memory_id), True), as_json)


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def unpin(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """Unpin a memory."""
    with opened(ctx, writes=True) as access:
        _report(access.pin(LOCAL, tenant, user, _resolve(access, tenant, user, memory_id), False), as_json)


@click.command()
@scoped
@click.argument("memory_ids", nargs=-1)
@click.option("--topic", default="", help="Forget every memory about this topic text.")
@click.option("--everything", is_flag=True, help="Forget everything about the user (also summaries and recent "
              "messages).")
@click.pass_context
def forget(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_ids: tuple[str, ...], topic: str,
           everything: bool) -> None:
    """Forget memories: by id (or prefix), by --topic, or --everything."""
    if sum((bool(memory_ids), bool(topic.strip()), everything)) != 1:
        raise click.UsageError("give memory ids, or --topic TEXT, or --everything (exactly one of them)")
    with opened(ctx, writes=True) as access:
        ids = [_resolve(access, tenant, user, m) for m in memory_ids]
        body = ForgetBody(tenant=tenant, user=user, memory_ids=ids, topic_text=topic, everything=everything)
        _report(access.forget(LOCAL, body), as_json)


COMMANDS = (memories, profile, recall, search, summary, history, correct, pin, unpin, forget)


def register(group: click.Group) -> None:
    for command in COMMANDS:
        group.add_command(command)


__all__ = ["correct", "forget", "history", "memories", "pin", "profile", "recall", "register", "search", "summary", "unpin"]
