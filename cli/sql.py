"""`engram sql FILE`: run analyst SQL on the configured ClickHouse; and the ClickHouse replay.

By default the query runs on the chDB engine of the data folder, first
brought up to date from the event log (so it works whatever ENGRAM_ANALYTICS
was during ingest). With `--dsn` / ENGRAM_CLICKHOUSE_DSN it runs on that
ClickHouse (a server, or another chDB directory) as it is.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any

import click
import orjson

from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import (
    DATABASE_ENV, DEFAULT_DATABASE, DSN_ENV, ClickHouseTarget, chdb_target, configured_target,
)
from engram.projections.clickhouse_shared import exclusive, lock_path, shared_connection
from engram.projections.clickhouse_queries import (
    QueryResult, bind, parse_params, resolve_query, run_query, shipped_queries,
)
from engram.projections.clickhouse_runtime import LogAnalytics, log_source
from engram.runtime.choice import runtime_kind
from engram.runtime.engine import EmbeddedRuntime
from engram.runtime.erasure import open_cipher
from engram.runtime.log import EventLog, open_database

from . import render
from .controls import locked_folder
from .extras import missing_extra

MAX_CELL = 80
WAIT_ENV = "ENGRAM_SQL_WAIT"  # seconds `engram sql` waits for a chDB folder another process holds
DEFAULT_WAIT = 15.0


@click.command("sql")
@click.argument("file")
@click.option("--param", "-p", "params", multiple=True, metavar="NAME=VALUE",
              help="A query parameter, e.g. --param memory_id=… (repeatable).")
@click.option("--dsn", envvar=DSN_ENV, default=None,
              help=f"ClickHouse to query (or {DSN_ENV}); default: the data folder's chDB.")
@click.option("--database", envvar=DATABASE_ENV, default=DEFAULT_DATABASE, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array of objects.")
@click.pass_context
def sql(ctx: click.Context, file: str, params: tuple[str, ...], dsn: str | None, database: str,
        as_json: bool) -> None:
    """Run an analyst query: a .sql FILE or a shipped query name (e.g. memory_lineage)."""
    try:
        path = resolve_query(file)
        values = parse_params(params)
        text = path.read_text(encoding="utf-8")
        bind(text, values)
        distributed = runtime_kind() == "distributed"
    except KeyError as exc:
        raise click.UsageError(str(exc.args[0])) from exc
    except (FileNotFoundError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    _require_clickhouse(chdb=not dsn)
    wait = _wait_seconds()
    if distributed:  # the projector worker keeps it current; a chDB directory is shared under its lock
        target = configured_target(ctx.obj["data"], dsn, database)
        try:
            with shared_connection(target, create_database=False, timeout=wait) as conn:
                result = _run(conn.client, path, text, values)
        except TimeoutError as exc:
            raise click.ClickException(_busy(target.chdb_path if target.is_chdb else target.dsn, wait)) from None
    else:
        with _opened(ctx.obj["data"], dsn, database, wait) as projector:
            result = _run(projector.client, path, text, values)
    click.echo(_json(result) if as_json else _table(result))


def _run(client: Any, path: Path, text: str, values: dict[str, str]) -> QueryResult:
    try:
        return run_query(client, text, values)
    except Exception as exc:
        raise click.ClickException(f"{path.name}: {exc}") from exc


def _require_clickhouse(chdb: bool) -> None:
    """The install hint, in one line, when the clickhouse extra is missing."""
    try:
        import clickhouse_connect  # noqa: F401
        if chdb:
            import chdb as _chdb  # noqa: F401
    except ImportError as exc:
        raise missing_extra("engram sql", "clickhouse", exc) from None


def _wait_seconds() -> float:
    raw = os.environ.get(WAIT_ENV, "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_WAIT
    except ValueError:
        raise click.UsageError(f"{WAIT_ENV} must be a number of seconds, not {raw!r}") from None


def _busy(where: str, wait: float) -> str:
    return (f"the ClickHouse engine at {where} is held by another Engram process (a running `engram serve` "
            f"or worker?); waited {wait:g}s ({WAIT_ENV}). Stop it, or query a ClickHouse server with --dsn")


@contextmanager
def _opened(data: Path, dsn: str | None, database: str, wait: float) -> Iterator[ClickHouseProjector]:
    """`_open`, waiting up to `wait` seconds while another process holds the data folder's chDB."""
    target = None if dsn else chdb_target(data, database)
    where = target.chdb_path if target is not None else str(dsn)
    deadline = time.monotonic() + wait
    try:
        with exclusive(lock_path(target) if target is not None else None, wait):
            while True:
                try:
                    with _native_stderr_silenced(target is not None):
                        projector = _open(data, dsn, database)
                    break
                except Exception as exc:
                    if target is None or not _engine_held(exc) or time.monotonic() >= deadline:
                        if target is not None and _engine_held(exc):
                            raise click.ClickException(_busy(where, wait)) from None
                        raise
                    time.sleep(0.25)
            try:
                yield projector
            finally:
                projector.close()
    except TimeoutError:
        raise click.ClickException(_busy(where, wait)) from None


@contextmanager
def _native_stderr_silenced(enabled: bool) -> Iterator[None]:
    """chDB prints its own copy of an open failure on fd 2; the raised error says it, once, instead."""
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _engine_held(exc: BaseException) -> bool:
    """chDB's failure to open a directory whose engine another process has open."""
    return "Unable to open the chdb engine" in str(exc) or "Error initializing EmbeddedServer" in str(exc)


def _open(data: Path, dsn: str | None, database: str) -> ClickHouseProjector:
    """The given ClickHouse as it is, or the data folder's chDB caught up from the log."""
    if dsn:
        return ClickHouseProjector.open(ClickHouseTarget(dsn=dsn, database=database), create=False)
    db = _log_database(data)
    try:
        projector = ClickHouseProjector.open(chdb_target(data, database))
        try:
            # the log's sealed text opens with the key store beside it (read-only: no new key store made)
            LogAnalytics(projector, EventLog(db, open_cipher(data, enabled=False)), log_source(data)).catch_up()
        except Exception:
            projector.close()
            raise
    finally:
        db.close()
    return projector


def _log_database(data: Path) -> sqlite3.Connection:
    if not (Path(data) / "engram.db").is_file():
        raise click.ClickException(f"no Engram data in {data} (ingest something first, or pass --data)")
    return open_database(Path(data) / "engram.db")


def _cell(value: Any) -> str:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value).replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _table(result: QueryResult) -> str:
    if not result.rows:
        return "(no rows)"
    cells = [list(result.columns)] + [[_cell(v) for v in row] for row in result.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(result.columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [f"({len(result.rows)} rows)"])


def _json(result: QueryResult) -> str:
    return orjson.dumps(result.as_dicts(), default=str, option=orjson.OPT_INDENT_2).decode()


def replay_clickhouse(data: Path) -> None:
    """`engram replay --projection clickhouse`: drop the analytics and rebuild them from the log.

    Rebuilds the configured ClickHouse (ENGRAM_CLICKHOUSE_DSN, else the data
    folder's chDB). The hash before is taken after catching up, so "identical"
    means the incrementally written analytics equal a from-scratch rebuild.
    """
    _log_database(data).close()
    with locked_folder(data), EmbeddedRuntime(data, analytics="off") as runtime:
        runtime.pump()
        analytics = LogAnalytics.open(data, runtime.log)
        try:
            total = runtime.log.count()
            analytics.catch_up()
            before = analytics.state_hash()
            with render.progress(total, "replaying clickhouse", sys.stderr.isatty()) as bar:
                after = analytics.rebuild(progress=bar.update)
            where = analytics.projector.conn.target.describe()
        finally:
            analytics.close()
    click.echo(f"replayed {total} events into ClickHouse {where}\n"
               f"analytics state hash before: {before}\nanalytics state hash after:  {after}")
    click.echo("identical" if before == after else "changed (the analytics had drifted from the log)")


def register(group: click.Group) -> None:
    """Add `engram sql` to the CLI."""
    if "Shipped queries" not in (sql.help or ""):
        sql.help = (sql.help or "") + "\n\nShipped queries: " + ", ".join(shipped_queries())
    group.add_command(sql)
