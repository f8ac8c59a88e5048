"""Assembly: from a data folder and the environment to a running server (used by the CLI and tests)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import anyio

from .auth import LOCAL, KeyRing, Principal, check_bind, token_from_headers
from engram.runtime_port import MemoryRuntime, open_runtime

from .guard import ASGIApp, Guard, Receive, Scope, Send
from .http_app import Limits, create_app
from .mcp_server import EngramMCP, create_mcp_http_app, mcp_keys
from .mcp_stdio import run_stdio
from .metrics import Metrics
from .service import AccessService


class Dispatch:
    """Routes /mcp to the MCP app and everything else to the HTTP API; lifespan goes to MCP."""

    def __init__(self, api: ASGIApp, mcp: ASGIApp) -> None:
        self.api = api
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def server_app(backend: MemoryRuntime, keys: KeyRing, host: str, limits: Limits | None = None,
               with_mcp: bool = False, mcp_token: str | None = None) -> ASGIApp:
    """The HTTP API (and, with `with_mcp`, the MCP server at /mcp) over one back end."""
    limits = limits or Limits()
    metrics = Metrics()
    api = create_app(backend, keys, limits, metrics)
    guarded: ASGIApp = Guard(api, limits.max_body_bytes, metrics, authorize=pre_authorizer(keys))
    if not with_mcp:
        return guarded
    engram_mcp = EngramMCP(api.state.access)
    mcp = create_mcp_http_app(engram_mcp, mcp_keys(keys, mcp_token), host, limits.max_body_bytes, metrics)
    return Dispatch(guarded, mcp)


OPEN_PATHS = frozenset({"/v1/health", "/v1/openapi.json", "/v1/docs"})


def pre_authorizer(keys: KeyRing) -> Callable[[Scope], None]:
    """Refuse a request without a valid key (or, in open mode, from a remote client) before its body is read.

    The routes authenticate again (and check the tenant); this only keeps unauthenticated bodies out.
    """
    def authorize(scope: Scope) -> None:
        if scope.get("path", "") in OPEN_PATHS:
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        client = scope.get("client")
        keys.principal(token_from_headers(headers), client[0] if client else None)
    return authorize


def build_server(data: Path, host: str, with_mcp: bool, env: Mapping[str, str]) -> tuple[ASGIApp, str]:
    """`engram serve`: refuse an insecure bind before opening anything; return the app and the notice.

    The runtime is the one ENGRAM_RUNTIME names (`open_runtime`), never silently the embedded one.
    """
    keys = KeyRing.from_env(env)
    notice = check_bind(host, not keys.open, "engram serve")
    token = env.get("ENGRAM_MCP_TOKEN") or None
    backend = open_runtime(data, env, serving=True)
    app = server_app(backend, keys, host, Limits.from_env(env), with_mcp, token)
    return app, f"{notice} ({backend.name} runtime)" + (" (MCP at /mcp)" if with_mcp else "")


def build_mcp_http(data: Path, host: str, env: Mapping[str, str], tenant: str | None = None,
                   user: str | None = None) -> tuple[ASGIApp, str]:
    """`engram mcp --transport http`: the MCP server alone, at /mcp."""
    keys = mcp_keys(KeyRing.from_env(env), env.get("ENGRAM_MCP_TOKEN") or None)
    notice = check_bind(host, not keys.open, "engram mcp")
    backend = open_runtime(data, env, serving=True)
    access = AccessService(backend)
    app = create_mcp_http_app(EngramMCP(access, tenant=tenant, user=user), keys, host,
                              Limits.from_env(env).max_body_bytes)
    return app, f"{notice} ({backend.name} runtime)"


def run_mcp_stdio(data: Path, tenant: str | None = None, env: Mapping[str, str] | None = None,
                  user: str | None = None) -> None:
    """`engram mcp` over stdio: the caller is the local user (optionally pinned to one tenant and user)."""
    principal = Principal(f"stdio:{tenant}", tenant=tenant) if tenant else LOCAL
    backend = open_runtime(data, env, serving=True)
    try:
        anyio.run(run_stdio, EngramMCP(AccessService(backend), principal, tenant, user).server)
    finally:
        backend.close()
