"""`engram serve` (HTTP API, optionally with MCP at /mcp) and `engram mcp` (stdio or HTTP)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from engram.access.errors import AccessError

from .extras import missing_extra

DEFAULT_HOST = "127.0.0.1"


def _fail(error: AccessError) -> click.ClickException:
    return click.ClickException(error.message)


def _access_app(what: str, *names: str) -> tuple[Any, ...]:
    """The server builders, or the one-line install hint when the serve extra is missing."""
    try:
        from engram.access import app
    except ImportError as exc:
        raise missing_extra(what, "serve", exc) from None
    return tuple(getattr(app, name) for name in names)


def _run(app: object, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=os.environ.get("ENGRAM_LOG_LEVEL", "info"))  # type: ignore[arg-type]


@click.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True, envvar="ENGRAM_HOST",
              help="Bind address; anything but loopback needs API keys.")
@click.option("--port", default=8700, show_default=True, type=int, envvar="ENGRAM_PORT")
@click.option("--mcp/--no-mcp", "with_mcp", default=False, show_default=True,
              help="Also serve the MCP server (streamable HTTP) at /mcp in the same process.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, with_mcp: bool) -> None:
    """Serve the HTTP API under /v1 (keys: ENGRAM_API_KEYS, ENGRAM_ADMIN_KEYS)."""
    (build_server,) = _access_app("engram serve", "build_server")

    try:
        app, notice = build_server(Path(ctx.obj["data"]), host, with_mcp, dict(os.environ))
    except AccessError as error:
        raise _fail(error) from None
    click.echo(notice, err=True)
    _run(app, host, port)


@click.command()
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="HTTP transport only.")
@click.option("--port", default=8701, show_default=True, type=int, help="HTTP transport only.")
@click.option("--tenant", default=None, help="Pin this server to one tenant (tools need no tenant argument).")
@click.option("--user", default=None, help="Pin this server to one user (tools need no user argument).")
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int, tenant: str | None, user: str | None) -> None:
    """Serve Engram as an MCP memory server (HTTP: ENGRAM_MCP_TOKEN or API keys as bearer tokens)."""
    build_mcp_http, run_mcp_stdio = _access_app("engram mcp", "build_mcp_http", "run_mcp_stdio")

    data = Path(ctx.obj["data"])
    try:
        if transport == "stdio":
            click.echo(f"engram mcp: stdio, data folder {data}" + (f", tenant {tenant}" if tenant else "")
                       + (f", user {user}" if user else ""), err=True)
            run_mcp_stdio(data, tenant, dict(os.environ), user)
            return
        app, notice = build_mcp_http(data, host, dict(os.environ), tenant, user)
    except AccessError as error:
        raise _fail(error) from None
    click.echo(notice, err=True)
    _run(app, host, port)


def register(group: click.Group) -> None:
    group.add_command(serve)
    group.add_command(mcp)


__all__ = ["mcp", "register", "serve"]
