"""The `engram` command line, on the runtime ENGRAM_RUNTIME names (embedded by default).

The memory commands (memories, recall, search, summary, history, correct, pin, unpin, forget) live in
`controls` and go through the runtime port; `--data` is accepted before or after the subcommand.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import click

import engram

from engram.runtime.choice import runtime_kind
from engram.runtime.engine import EmbeddedRuntime

from . import render
from .controls import locked_folder, register as register_controls, runtime_for
from .govern import register as register_govern
from .ingest_file import ingest_file
from .serve import register as register_serve
from .sql import register as register_sql, replay_clickhouse

DEFAULT_DATA = Path.home() / ".engram"


def _kind() -> str:
    try:
        return runtime_kind()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


@click.group()
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), envvar="ENGRAM_DATA",
              default=DEFAULT_DATA, show_default=True, help="Data folder (or ENGRAM_DATA).")
@click.version_option(engram.__version__, "--version", prog_name="engram")
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
    with runtime_for(ctx, writes=True) as runtime:
        try:
            result = ingest_file(runtime, file, show_progress=sys.stderr.isatty(), wait=wait)
        except TimeoutError as exc:
            raise click.ClickException(str(exc)) from exc
    for error in result.errors:
        click.echo(f"{file}:{error}", err=True)
    for warning in result.warnings:
        click.echo(f"{file}:{warning} (warning)", err=True)
    click.echo(render.ingest_summary(result))
    if result.errors:
        sys.exit(1)


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
    if _kind() == "distributed" and projection in ("clickhouse", "all"):
        return _worker.replay_projections(projection)
    if _kind() == "distributed":
        projection = "current"  # Weaviate is the distributed runtime's current-memory projection
    if projection in ("clickhouse", "all"):
        replay_clickhouse(ctx.obj["data"])
    if projection in ("weaviate", "all") and os.environ.get("ENGRAM_WEAVIATE_URL"):
        replay_weaviate(ctx.obj["data"])
    elif projection == "weaviate":
        raise click.ClickException("set ENGRAM_WEAVIATE_URL (and ENGRAM_WEAVIATE_GRPC_PORT) to rebuild Weaviate")
    if projection in ("clickhouse", "weaviate"):
        return
    with runtime_for(ctx, writes=True) as runtime:
        before = runtime.read(lambda store: store.state_hash())
        counted = Counter[str]()

        with render.progress(None, "replaying", sys.stderr.isatty()) as bar:
            def tick(n: int) -> None:
                counted["events"] += n
                bar.update(n)

            after = runtime.replay(progress=tick)
    what = "events" if runtime.name == "embedded" else "Kafka records"
    click.echo(f"replayed {counted['events']} {what}\nstate hash before: {before}\nstate hash after:  {after}")
    click.echo("identical" if before == after else "changed (the projection had drifted from the log)")


def replay_weaviate(data: Path) -> None:
    """Rebuild the Weaviate current-memory collections from this data folder's log."""
    from engram.projections.rebuild import rebuild_store
    from engram.projections.weaviate_store import WeaviateStore

    with locked_folder(data), EmbeddedRuntime(data) as runtime:
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


register_controls(cli)  # engram memories, recall, search, summary, history, correct, pin, unpin, forget
register_serve(cli)  # engram serve, engram mcp
from . import worker as _worker  # noqa: E402,F401  (engram worker: the distributed runtime)
register_sql(cli)  # engram sql
register_govern(cli)  # engram govern


def _set_data(ctx: click.Context, _: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.ensure_object(dict)
        ctx.obj["data"] = value
        root = ctx.find_root()
        root.ensure_object(dict)
        root.obj["data"] = value


def _data_after_subcommand(group: click.Group) -> None:
    """`engram memories --data DIR ...` works as well as `engram --data DIR memories ...`."""
    for command in group.commands.values():
        if not any(p.name == "data" for p in command.params):
            command.params.append(click.Option(
                ["--data"], type=click.Path(file_okay=False, path_type=Path), default=None, expose_value=False,
                is_eager=True, callback=_set_data, help="Data folder (also accepted before the subcommand)."))


_data_after_subcommand(cli)


def main() -> None:
    os.environ.setdefault("TQDM_DISABLE", "0")
    cli(obj={})


if __name__ == "__main__":
    main()
