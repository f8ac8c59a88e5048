"""The few names the MCP server needs, from mcp 2.x (`MCPServer`) or mcp 1.x (`FastMCP`)."""

from __future__ import annotations

import inspect
from typing import Any

try:  # mcp >= 2
    from mcp.server.mcpserver import Context, MCPServer  # type: ignore[import-not-found, unused-ignore]
    from mcp.server.mcpserver.exceptions import ToolError  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[no-redef, attr-defined, unused-ignore]
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef, attr-defined, unused-ignore]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, attr-defined, unused-ignore]

from .auth import is_loopback

__all__ = ["Context", "MCPServer", "ToolError", "forbid_unknown_arguments", "hide_arguments", "http_app", "plain_argument_errors",
           "plain_validation_message"]

_KINDS = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "a string",
          "list": "a list", "dict": "an object"}


def plain_validation_message(tool: str, error: Any) -> str:
    """A pydantic ValidationError on a tool's arguments in plain words: `tool: 'limit' must be an integer`."""
    return f"{tool}: " + "; ".join(_plain(item) for item in error.errors(include_url=False))


def _plain(item: dict[str, Any]) -> str:
    loc = item.get("loc") or ()
    name = f"'{loc[0]}'" if loc else "the arguments"
    kind, ctx = str(item.get("type", "")), item.get("ctx") or {}
    base = kind.split("_")[0]
    if kind == "missing":
        return f"{name} is required"
    if kind == "extra_forbidden":
        return f"{name} is not an argument of this tool (extra arguments are refused)"
    if kind.endswith(("_type", "_parsing")) and base in _KINDS:
        return f"{name} must be {_KINDS[base]}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most",
                 "less_than": "less than"}[kind]
        bound = next(iter(ctx.values()), "")
        return f"{name} must be {words} {bound}"
    if kind == "string_too_short":
        return f"{name} must not be empty" if ctx.get("min_length") == 1 else \
            f"{name} must be at least {ctx.get('min_length')} characters"
    if kind == "string_too_long":
        return f"{name} must be at most {ctx.get('max_length')} characters"
    if kind == "literal_error":
        return f"{name} must be one of {ctx.get('expected')}"
    message = str(item.get("msg", "is not valid"))
    if kind == "value_error":
        return f"{name} {message.removeprefix('Value error, ')}"
    return f"{name}: {message[:1].lower() + message[1:]}"


def plain_argument_errors(server: Any, name: str) -> bool:
    """Make the tool answer invalid arguments in plain words, not the SDK's pydantic text; False if not possible."""
    from pydantic import ValidationError

    tool = getattr(getattr(server, "_tool_manager", None), "_tools", {}).get(name)
    run = getattr(tool, "run", None)
    if run is None:
        return False

    async def plain_run(*args: Any, **kwargs: Any) -> Any:
        try:
            return await run(*args, **kwargs)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(plain_validation_message(name, cause)) from None
            raise

    object.__setattr__(tool, "run", plain_run)
    return True


def forbid_unknown_arguments(server: Any, name: str) -> bool:
    """Make the tool refuse arguments it does not declare (the SDK ignores them); False if not possible."""
    from pydantic import ConfigDict

    tool = getattr(getattr(server, "_tool_manager", None), "_tools", {}).get(name)
    metadata = getattr(tool, "fn_metadata", None)
    model = getattr(metadata, "arg_model", None)
    if model is None:
        return False
    strict = type(model.__name__, (model,), {"model_config": ConfigDict(**{**model.model_config, "extra": "forbid"}),
                                              "__module__": model.__module__})
    metadata.arg_model = strict  # type: ignore[union-attr]
    return True


def http_app(server: Any, host: str) -> Any:
    """The streamable-HTTP Starlette app at /mcp; `host` sets DNS-rebinding protection for loopback."""
    if "host" in inspect.signature(server.streamable_http_app).parameters:
        return server.streamable_http_app(host=host)
    server.settings.host = host  # mcp 1.x reads its settings (loopback protection was set at construction)
    if not is_loopback(host):
        server.settings.transport_security = None
    return server.streamable_http_app()


def hide_arguments(server: Any, name: str, names: list[str]) -> bool:
    """Leave the arguments `names` out of the tool's advertised schema; False if not possible.

    A server pinned to one tenant and user does this, so its tools do not ask a model for ids it must not
    choose. A client that passes one anyway is still checked against the pin (and told why if it differs).
    """
    tool = getattr(getattr(server, "_tool_manager", None), "_tools", {}).get(name)
    schema = getattr(tool, "parameters", None)
    if not isinstance(schema, dict):
        return False
    for hidden in names:
        schema.get("properties", {}).pop(hidden, None)
        if hidden in schema.get("required", []):
            schema["required"].remove(hidden)
    return True
