"""Real servers on loopback: uvicorn in a thread, on a free port, over a fresh data folder."""

from __future__ import annotations

import secrets
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn

from engram.access.app import server_app
from engram.access.auth import KeyRing
from engram.access.backend import EmbeddedBackend
from engram.access.guard import ASGIApp
from engram.access.http_app import Limits

MAX_BODY = 64 * 1024
MAX_BATCH = 20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """uvicorn serving an ASGI app on 127.0.0.1 in a background thread."""

    def __init__(self, app: ASGIApp) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass
class Deployment:
    """A running server with generated tenants and keys, and a way to call it."""

    url: str
    backend: EmbeddedBackend
    tenant_a: str
    tenant_b: str
    key_a: str
    key_b: str
    admin_key: str
    mcp_token: str
    clients: list[httpx.Client] = field(default_factory=list)

    def http(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        self.clients.append(client)
        return client

    def as_a(self) -> httpx.Client:
        return self.http(self.key_a)

    def as_b(self) -> httpx.Client:
        return self.http(self.key_b)


def turn(tenant: str, user: str, content: str, *, session: str = "s1", agent: str = "coach",
         message_id: str | None = None, role: str = "user") -> dict[str, str]:
    return {"tenant": tenant, "user": user, "agent": agent, "session": session, "role": role,
            "message_id": message_id or new_id("m"), "content": content}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """HTTP API + MCP at /mcp, with two tenant keys, an admin key and an MCP token, all generated."""
    tenants = new_id("tenantA"), new_id("tenantB")
    keys = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    admin, token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    ring = KeyRing.parse(f"{keys[0]}:{tenants[0]},{keys[1]}:{tenants[1]}", admin)
    backend = EmbeddedBackend.open(tmp_path_factory.mktemp("engram") / "data")
    app = server_app(backend, ring, "127.0.0.1", Limits(MAX_BODY, MAX_BATCH), with_mcp=True, mcp_token=token)
    with LiveServer(app) as live:
        deployment = Deployment(live.url, backend, *tenants, *keys, admin, token)
        yield deployment
        for client in deployment.clients:
            client.close()
    backend.close()


@pytest.fixture
def open_server(tmp_path: Path) -> Iterator[str]:
    """HTTP API + MCP with no key or token configured (open mode: loopback clients only)."""
    backend = EmbeddedBackend.open(tmp_path / "open")
    with LiveServer(server_app(backend, KeyRing(), "127.0.0.1", with_mcp=True)) as live:
        yield live.url
    backend.close()
