"""`engram serve` (HTTP API, optionally with MCP at /mcp) and `engram mcp` (stdio or HTTP)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from engram.access.errors import AccessError

DEFAULT_HOST = "127.0.0.1"


def _fail(error: AccessError) -> click.ClickException:
    return click.ClickException(error.message)


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
    from engram.access.app import build_server

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
@click.option("--tenant", default=None, help="stdio only: restrict this server to one tenant.")
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int, tenant: str | None) -> None:
    """Serve Engram as an MCP memory server (HTTP: ENGRAM_MCP_TOKEN or API keys as bearer tokens)."""
    from engram.access.app import build_mcp_http, run_mcp_stdio

    data = Path(ctx.obj["data"])
    try:
        if transport == "stdio":
            click.echo(f"engram mcp: stdio, data folder {data}" + (f", tenant {tenant}" if tenant else ""),
                       err=True)
            run_mcp_stdio(data, tenant, dict(os.environ))
            return
        app, notice = build_mcp_http(data, host, dict(os.environ))
    except AccessError as error:
        raise _fail(error) from None
    click.echo(notice, err=True)
    _run(app, host, port)


def register(group: click.Group) -> None:
    group.add_command(serve)
    group.add_command(mcp)


__all__ = ["mcp", "register", "serve"]
