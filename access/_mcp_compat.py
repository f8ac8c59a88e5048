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

__all__ = ["Context", "MCPServer", "ToolError", "forbid_unknown_arguments", "http_app"]


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
