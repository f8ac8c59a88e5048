"""The CLI commands that read memory or change it, through the runtime port (either runtime).

`engram memories | memory | recall | search | summary | history | correct | pin | unpin | forget |
feedback | profile` run the same use cases as the HTTP API (`engram.access.service`) as the local, trusted
caller, with the same argument names and defaults (docs/api.md); `--json` prints what the HTTP API
answers. Memory ids may be given as the short prefixes `engram memories` lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import orjson

from pydantic import ValidationError

from engram.access.auth import LOCAL
from engram.access.errors import AccessError, no_summary
from engram.access.models import (
    DEFAULT_AGENT, DEFAULT_SESSION, DEFAULT_TENANT, ControlResult, FeedbackRequest, ForgetBody, RecallQuery,
)
from engram.access.service import MAX_LIMIT, AccessService, StatusFilter, search_response
from engram.runtime.choice import runtime_kind
from engram.runtime.folder_lock import folder_locked
from engram.runtime_port import DataDirBusy, MemoryRuntime, open_runtime

from . import render

TENANT_OPTION = click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="Tenant id.")
USER_OPTION = click.option("--user", required=True, help="User id.")


def scoped(command: Any) -> Any:
    """--tenant (default `default`, as in Python), --user and --json."""
    command = USER_OPTION(command)
    command = TENANT_OPTION(command)
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (the HTTP API's response).")(command)


@contextmanager
def opened(ctx: click.Context, writes: bool = False) -> Iterator[AccessService]:
    """The access use cases over the runtime ENGRAM_RUNTIME names; refusals become one-line errors.

    Every command takes an embedded data folder's lock, reads too (a recall logs its observation, and
    opening the runtime may finish a forget): beside `engram serve`, `engram mcp` or another command it
    is refused, naming that process, instead of writing beside it. `writes` is kept for the callers.
    """
    with runtime_for(ctx, writes) as backend:
        yield AccessService(backend)


@contextmanager
def runtime_for(ctx: click.Context, writes: bool = False) -> Iterator[MemoryRuntime]:
    """The runtime port ENGRAM_RUNTIME names, for one command (`writes`: see `opened`); errors in one line.

    A command that only reads never creates the data folder: a mistyped `--data` is an error, not an
    empty new memory.
    """
    data = Path(ctx.obj["data"])
    if not writes and _embedded() and not (data / "engram.db").is_file():
        raise click.ClickException(f"no Engram data in {data} (a mistyped --data or ENGRAM_DATA? `engram ingest` "
                                   "creates it)")
    try:
        backend = open_runtime(ctx.obj["data"], serving=writes)
    except AccessError as error:
        if error.code == "bad_runtime":
            raise click.UsageError(error.message) from None
        raise click.ClickException(error.message) from None
    try:
        yield backend
    except AccessError as error:
        raise click.ClickException(f"{error.message} ({error.code})") from None
    except ValidationError as error:
        raise click.ClickException(plain_errors(error)) from None
    finally:
        backend.close()


def _embedded() -> bool:
    try:
        return runtime_kind() == "embedded"
    except ValueError:
        return False  # open_runtime says what is wrong with ENGRAM_RUNTIME


def plain_errors(error: ValidationError) -> str:
    """A validation error in one line: `question: String should have at least 1 character`."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in error.errors())


@contextmanager
def locked_folder(data: Path | str) -> Iterator[None]:
    """Hold the data folder's lock (runtime/folder_lock.py) for a command that opens the runtime itself."""
    try:
        with folder_locked(Path(data)):
            yield
    except DataDirBusy as busy:
        raise click.ClickException(busy.message) from None


def emit_json(value: object) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


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
    if result.version:
        click.echo(f"(profile version {result.version})")


@click.command()
@scoped
@click.option("--status", type=click.Choice(["active", "all"]), default="active", show_default=True,
              help="all: also replaced, retired and archived memories.")
@click.option("--all", "include_all", is_flag=True, help="The same as --status all.")
@click.pass_context
def memories(ctx: click.Context, tenant: str, user: str, as_json: bool, status: StatusFilter,
             include_all: bool) -> None:
    """The memories of one user (a new user has none)."""
    with opened(ctx) as access:
        records = access.memories(LOCAL, tenant, user, "all" if include_all else status)
        known = bool(records) or access.known(tenant, user, None)[0]
    if as_json:
        emit_json([render.memory_dict(r) for r in records])
    elif not known:
        click.echo(f"(no memories: nothing is recorded for user {user!r} in tenant {tenant!r})")
    else:
        click.echo(render.memory_table(records))


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def memory(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """One memory, by id or a unique prefix (in whatever status)."""
    with opened(ctx) as access:
        record = access.memory(LOCAL, tenant, user, memory_id)
    if as_json:
        emit_json(render.memory_dict(record))
    else:
        click.echo(render.memory_table([record]))


@click.command()
@scoped
@click.option("--agent", default=DEFAULT_AGENT, show_default=True, help="Agent id.")
@click.option("--session", default=DEFAULT_SESSION, show_default=True,
              help="Session id (a new session gets long-term memory only).")
@click.option("--deadline-ms", type=click.FloatRange(min=0, min_open=True, max=10_000), default=None,
              help="Time limit in ms (default: the configured recall.deadline_ms, 300).")
@click.argument("question")
@click.pass_context
def recall(ctx: click.Context, tenant: str, user: str, agent: str, session: str, as_json: bool,
           deadline_ms: float | None, question: str) -> None:
    """Assemble the memory context for a question."""
    with opened(ctx) as access:
        query = RecallQuery(tenant=tenant, user=user, agent=agent, session=session, question=question,
                            deadline_ms=deadline_ms)
        warm_up(access, query)
        response = access.recall(LOCAL, query)
    if as_json:
        emit_json(response.model_dump(mode="json"))
    else:
        click.echo(render.recall_response_text(response))


def warm_up(access: AccessService, query: RecallQuery) -> None:
    """Open the store's connections before the deadline starts, as a server has them open before a request:
    a one-shot command would otherwise spend the deadline connecting (Weaviate, Kafka) and miss parts."""
    access.backend.ping()
    access.known(query.tenant, query.user, query.session)
    access.search(LOCAL, query.tenant, query.user, None, query.question, 1)


@click.command()
@scoped
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, MAX_LIMIT))
@click.argument("query")
@click.pass_context
def search(ctx: click.Context, tenant: str, user: str, as_json: bool, limit: int, query: str) -> None:
    """Search one user's memories by meaning and keywords, best first."""
    with opened(ctx) as access:
        found = access.search(LOCAL, tenant, user, None, query, limit)
    if as_json:
        emit_json(search_response(found).model_dump(mode="json"))
    elif not found.user_known:
        click.echo("(new user: nothing is recorded for this user yet)")
    else:
        click.echo(render.memory_table([h.record for h in found.hits]))


@click.command()
@TENANT_OPTION
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
        raise click.ClickException(no_summary(session).message)
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
        steps = access.lineage(LOCAL, tenant, user, memory_id)
    if as_json:
        emit_json([step.model_dump(mode="json") for step in steps])
    else:
        click.echo(render.lineage_text([step.model_dump(mode="json") for step in steps]))


@click.command()
@scoped
@click.argument("memory_id")
@click.argument("content")
@click.pass_context
def correct(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str, content: str) -> None:
    """Replace a memory's content with the right one."""
    with opened(ctx, writes=True) as access:
        _report(access.correct(LOCAL, tenant, user, memory_id, content), as_json)


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def pin(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """Pin a memory: it never decays."""
    with opened(ctx, writes=True) as access:
        _report(access.pin(LOCAL, tenant, user, memory_id, True), as_json)


@click.command()
@scoped
@click.argument("memory_id")
@click.pass_context
def unpin(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """Unpin a memory."""
    with opened(ctx, writes=True) as access:
        _report(access.pin(LOCAL, tenant, user, memory_id, False), as_json)


@click.command()
@scoped
@click.argument("memory_ids", nargs=-1)
@click.option("--topic", default="", help="Forget every memory about this topic.")
@click.option("--everything", is_flag=True, help="Forget everything about the user (also summaries and recent "
              "messages).")
@click.option("--dry-run", is_flag=True, help="Only show what would be forgotten; change nothing.")
@click.pass_context
def forget(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_ids: tuple[str, ...], topic: str,
           everything: bool, dry_run: bool) -> None:
    """Forget memories: by id (or prefix), by --topic, or --everything."""
    if sum((bool(memory_ids), bool(topic.strip()), everything)) != 1:
        raise click.UsageError("give memory ids, or --topic TEXT, or --everything (exactly one of them)")
    with opened(ctx, writes=not dry_run) as access:
        body = ForgetBody(tenant=tenant, user=user, memory_ids=list(memory_ids), topic=topic, everything=everything,
                          dry_run=dry_run)
        _report(access.forget(LOCAL, body), as_json)


@click.command()
@TENANT_OPTION
@USER_OPTION
@click.argument("recall_id")
@click.argument("rating", type=click.Choice(["0", "1", "2", "none", "good", "bad"]))
@click.option("--reason", default="", help="A short reason (at most 500 characters).")
@click.option("--remark", default="", help="A free remark.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the HTTP API's response).")
@click.pass_context
def feedback(ctx: click.Context, tenant: str, user: str, recall_id: str, rating: str, reason: str, remark: str,
             as_json: bool) -> None:
    """A good/bad verdict on one recall (its recall_id, from `engram recall --json`)."""
    with opened(ctx) as access:
        body = FeedbackRequest.model_validate({"tenant": tenant, "user": user, "recall_id": recall_id,
                                               "rating": int(rating) if rating.isdigit() else rating,
                                               "reason": reason, "remark": remark})
        result = access.feedback(LOCAL, body)
    if as_json:
        emit_json(result.model_dump(mode="json"))
    else:
        click.echo(f"feedback {result.feedback_id} recorded: rating {result.rating} on recall {result.recall_id}")


COMMANDS = (memories, memory, recall, search, summary, history, correct, pin, unpin, forget, feedback, profile)


def register(group: click.Group) -> None:
    for command in COMMANDS:
        group.add_command(command)


__all__ = ["correct", "feedback", "forget", "history", "memories", "memory", "pin", "profile", "recall", "register", "search",
           "summary", "unpin"]
