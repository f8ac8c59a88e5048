"""The `engram` command line (embedded runtime)."""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
import orjson

from engram.recall.service import RecallRequest
from engram.runtime.choice import runtime_kind
from engram.runtime.engine import EmbeddedRuntime

from . import render
from .govern import register as register_govern
from .ingest_file import ingest_file
from .serve import register as register_serve
from .sql import register as register_sql, replay_clickhouse

DEFAULT_DATA = Path.home() / ".engram"


def _runtime(ctx: click.Context) -> Any:
    """The runtime ENGRAM_RUNTIME names: EmbeddedRuntime, or DistributedRuntime (same methods the CLI uses)."""
    if _kind() == "embedded":
        return EmbeddedRuntime(ctx.obj["data"])
    try:
        from engram.distributed.facade import DistributedRuntime, Endpoints
    except ImportError as exc:
        raise click.ClickException(f"ENGRAM_RUNTIME=distributed needs the kafka, weaviate and clickhouse extras: "
                                   f"pip install 'engram[kafka,weaviate,clickhouse]' ({exc})")
    return DistributedRuntime(Endpoints.from_env(ctx.obj["data"]))


def _kind() -> str:
    try:
        return runtime_kind()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _emit_json(value: object) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


@click.group()
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), envvar="ENGRAM_DATA",
              default=DEFAULT_DATA, show_default=True, help="Data folder (or ENGRAM_DATA).")
@click.pass_context
def cli(ctx: click.Context, data: Path) -> None:
    """Engram: event-sourced long-term memory for AI agents."""
    ctx.ensure_object(dict)
    ctx.obj["data"] = data


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Distributed runtime: wait until the workers and projectors have applied the turns "
                   "(the embedded runtime always processes before returning).")
@click.pass_context
def ingest(ctx: click.Context, file: str, wait: bool) -> None:
    """Ingest a JSONL file of turns (one per line; '-' for stdin)."""
    options = {"wait": wait} if _kind() == "distributed" else {}
    with _runtime(ctx) as runtime:
        try:
            result = ingest_file(runtime, file, show_progress=sys.stderr.isatty(), **options)
        except TimeoutError as exc:
            raise click.ClickException(str(exc)) from exc
    for error in result.errors:
        click.echo(f"{file}:{error}", err=True)
    for warning in result.warnings:
        click.echo(f"{file}:{warning} (warning)", err=True)
    click.echo(render.ingest_summary(result))
    if result.errors:
        sys.exit(1)


def _require_user(runtime: Any, tenant: str, user: str) -> None:
    if not runtime.store.has_user(tenant, user):
        raise click.ClickException(f"no memory at all for tenant {tenant!r}, user {user!r} (unknown tenant or user)")


@cli.command()
@click.option("--tenant", required=True)
@click.option("--user", required=True)
@click.option("--all", "include_all", is_flag=True, help="Include replaced and retired memories.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def memories(ctx: click.Context, tenant: str, user: str, include_all: bool, as_json: bool) -> None:
    """The current memories of one user."""
    with _runtime(ctx) as runtime:
        _require_user(runtime, tenant, user)
        statuses = ("active", "replaced", "retired", "archived") if include_all else ("active",)
        records = runtime.store.list_memories(tenant, user, statuses)
    if as_json:
        _emit_json([render.memory_dict(r) for r in records])
    else:
        click.echo(render.memory_table(records))


@cli.command()
@click.option("--tenant", required=True)
@click.option("--user", required=True)
@click.option("--agent", required=True)
@click.option("--session", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.argument("question")
@click.pass_context
def recall(ctx: click.Context, tenant: str, user: str, agent: str, session: str, as_json: bool,
           question: str) -> None:
    """Assemble the memory context for a question."""
    with _runtime(ctx) as runtime:
        _require_user(runtime, tenant, user)
        request = RecallRequest(tenant, user, agent, session, question, datetime.now(timezone.utc))
        result = runtime.recall(request)
    if as_json:
        _emit_json(render.recall_dict(result))
    else:
        click.echo(render.recall_text(result))


@cli.command()
@click.option("--tenant", required=True)
@click.option("--session", required=True)
@click.option("--user", default=None, help="Needed only if several users share the session id.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def summary(ctx: click.Context, tenant: str, session: str, user: str | None, as_json: bool) -> None:
    """The latest summary of a session."""
    with _runtime(ctx) as runtime:
        users = [user] if user else runtime.store.session_users(tenant, session)
        if not users:
            raise click.ClickException(f"unknown session {session!r} in tenant {tenant!r}")
        if len(users) > 1:
            raise click.ClickException(f"session {session!r} has several users ({', '.join(users)}): pass --user")
        snapshot = runtime.store.latest_summary(tenant, users[0], session)
    if snapshot is None:
        raise click.ClickException(f"session {session!r} has no summary yet (too few messages so far)")
    if as_json:
        _emit_json(snapshot.model_dump(mode="json"))
    else:
        click.echo(render.summary_text(snapshot))


@cli.command()
@click.option("--tenant", required=True)
@click.option("--user", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.argument("memory_id")
@click.pass_context
def history(ctx: click.Context, tenant: str, user: str, as_json: bool, memory_id: str) -> None:
    """How one memory came to be: its changes back to the L0 turns."""
    with _runtime(ctx) as runtime:
        _require_user(runtime, tenant, user)
        steps = runtime.lineage(tenant, user, memory_id)
    if not steps:
        raise click.ClickException(f"no memory {memory_id!r} for tenant {tenant!r}, user {user!r}")
    if as_json:
        _emit_json(steps)
    else:
        click.echo(render.lineage_text(steps))


@cli.command()
@click.option("--projection", type=click.Choice(["current", "clickhouse", "weaviate", "all"]), default="current",
              show_default=True, help="Which read model to drop and rebuild.")
@click.option("--kafka", "on_kafka", is_flag=True, help="Distributed runtime: rebuild a new generation from the "
              "beginning of the turns topic (ENGRAM_KAFKA_BOOTSTRAP, ENGRAM_KAFKA_PREFIX).")
@click.pass_context
def replay(ctx: click.Context, projection: str, on_kafka: bool = False) -> None:
    """Drop a projection and rebuild it from the log."""
    if on_kafka:
        return _worker.replay_on_kafka()
    if _kind() == "distributed":
        return _worker.replay_projections(projection)
    if projection in ("clickhouse", "all"):
        replay_clickhouse(ctx.obj["data"])
    if projection in ("weaviate", "all") and os.environ.get("ENGRAM_WEAVIATE_URL"):
        replay_weaviate(ctx.obj["data"])
    elif projection == "weaviate":
        raise click.ClickException("set ENGRAM_WEAVIATE_URL (and ENGRAM_WEAVIATE_GRPC_PORT) to rebuild Weaviate")
    if projection in ("clickhouse", "weaviate"):
        return
    with _runtime(ctx) as runtime:
        before = runtime.store.state_hash()
        total = runtime.log.count()
        with render.progress(total, "replaying", sys.stderr.isatty()) as bar:
            after = runtime.replay(progress=bar.update)
    click.echo(f"replayed {total} events\nstate hash before: {before}\nstate hash after:  {after}")
    click.echo("identical" if before == after else "changed (the projection had drifted from the log)")


def replay_weaviate(data: Path) -> None:
    """Rebuild the Weaviate current-memory collections from this data folder's log."""
    from engram.projections.rebuild import rebuild_store
    from engram.projections.weaviate_store import WeaviateStore

    with EmbeddedRuntime(data) as runtime:
        store = WeaviateStore.connect(os.environ["ENGRAM_WEAVIATE_URL"],
                                      int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")),
                                      runtime.ctx.embedder.model_id)
        try:
            total = runtime.log.count()
            with render.progress(total, "rebuilding weaviate", sys.stderr.isatty()) as bar:
                digest = rebuild_store(store, runtime.ctx.embedder, runtime.log.scan(), bar.update)
        finally:
            store.close()
        same = digest == runtime.store.state_hash()
    click.echo(f"weaviate rebuilt from {total} events; state hash {digest}")
    click.echo("identical to the embedded projection" if same else "differs from the embedded projection")


@cli.command()
def topology() -> None:
    """Print which processor reads and writes which topics."""
    from engram.streams.topology import describe

    click.echo(describe())


@cli.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Ingest a bundled Chinese + English sample; show memories, a summary and a recall."""
    source = ctx.get_parameter_source("data")
    data = ctx.obj["data"] if source not in (None, click.core.ParameterSource.DEFAULT) else Path(
        tempfile.mkdtemp(prefix="engram-demo-"))
    from .demo import run_demo

    run_demo(Path(data))


register_serve(cli)  # engram serve, engram mcp
from . import worker as _worker  # noqa: E402,F401  (engram worker: the distributed runtime)
register_sql(cli)  # engram sql
register_govern(cli)  # engram govern


def main() -> None:
    os.environ.setdefault("TQDM_DISABLE", "0")
    cli(obj={})


if __name__ == "__main__":
    main()
