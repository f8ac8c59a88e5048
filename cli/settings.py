"""`engram config`: the effective settings and where each value came from (default, file, env)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import orjson

from engram.core.config_file import CONFIG_ENV, ConfigError, candidates, config_path, effective

SECRET = ("KEY", "TOKEN", "PASSWORD", "SECRET")


def _shown(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode() if not isinstance(value, str) else value


def _environment() -> dict[str, str]:
    """The ENGRAM_* variables that are set (secrets masked): runtime, endpoints, keys, the LLM path."""
    return {name: ("***" if any(part in name for part in SECRET) else value)
            for name, value in sorted(os.environ.items()) if name.startswith("ENGRAM_") and value}


@click.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective settings and where each came from (default, the config file, or env)."""
    data = Path(ctx.obj["data"])
    try:
        path = config_path(data)
        settings = effective(data)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(orjson.dumps({
            "file": str(path) if path else None, "looked_in": [str(p) for p in candidates(data)],
            "settings": [{"key": s.key, "value": s.value, "source": s.source, "origin": s.origin}
                         for s in settings],
            "environment": _environment()}, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())
        return
    if path is not None:
        click.echo(f"config file: {path}")
    else:
        looked = ", ".join(str(p) for p in candidates(data))
        click.echo(f"config file: none (looked for {looked}; or set {CONFIG_ENV})")
    width = max(len(s.key) for s in settings)
    for s in settings:
        origin = f" ({s.origin})" if s.source == "env" else ""
        click.echo(f"{s.key:<{width}} = {_shown(s.value)}  [{s.source}{origin}]")
    variables = _environment()
    if variables:
        click.echo("\nenvironment (runtime, endpoints, keys, the LLM path; see docs/configuration.md):")
        for name, value in variables.items():
            click.echo(f"  {name}={value}")


def register(group: click.Group) -> None:
    group.add_command(config)


__all__ = ["config", "register"]
