"""The MCP server driven by the official `mcp` client in real sessions: streamable HTTP and stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .conftest import MAX_BODY, Deployment, free_port, new_id

try:  # mcp >= 2
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    def _http_transport(url: str, headers: dict[str, str]) -> Any:
        @asynccontextmanager
        async def connect() -> AsyncIterator[Any]:
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with streamable_http_client(url, http_client=http) as streams:
                    yield streams
        return connect()
except ImportError:  # mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client

    def _http_transport(url: str, headers: dict[str, str]) -> Any:
        return streamablehttp_client(url, headers=headers)

Session = Callable[[ClientSession], Awaitable[None]]


@asynccontextmanager
async def _session(transport: Any) -> AsyncIterator[ClientSession]:
    async with transport as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            yield session


def _over_http(d: Deployment, token: str, body: Session) -> None:
    async def run() -> None:
        async with _session(_http_transport(f"{d.url}/mcp", {"Authorization": f"Bearer {token}"})) as session:
            await body(session)
    anyio.run(run)


async def call(client: ClientSession, tool: str, /, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; return its JSON answer."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not _is_error(result), text
    return json.loads(text)  # type: ignore[no-any-return]


async def fails(client: ClientSession, tool: str, /, **arguments: Any) -> str:
    """Call a tool that must fail; return its error text."""
    result = await client.call_tool(tool, arguments)
    assert _is_error(result), result
    return str(result.content[0].text)  # type: ignore[union-attr]


def _is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def test_every_tool_works_over_streamable_http(deployment: Deployment) -> None:
    d = deployment
    ids = {"tenant": d.tenant_a, "user": new_id("user"), "session": "chat-1"}

    async def body(session: ClientSession) -> None:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == {"memory_write", "memory_read", "memory_search", "memory_delete", "memory_recall",
                         "memory_history", "memory_correct", "memory_pin", "memory_unpin", "memory_feedback",
                         "memory_profile"}
        written = await call(session, "memory_write", **ids, agent="assistant", content="I prefer green tea")
        assert written["stored"] and written["memories_changed"] == 1
        again = await call(session, "memory_write", **ids, agent="assistant", content="I prefer green tea",
                           message_id=written["message_id"])
        assert not again["stored"]
        await call(session, "memory_write", **ids, agent="assistant", content="I live in Porto")
        read = await call(session, "memory_read", **ids)
        assert {m["content"] for m in read["memories"]} == {"User prefers green tea", "User lives in Porto"}
        found = await call(session, "memory_search", **ids, query="tea")
        assert [r["content"] for r in found["results"]] == ["User prefers green tea"]
        one = await call(session, "memory_read", **ids, memory_id=found["results"][0]["memory_id"])
        assert one["memory"]["content"] == "User prefers green tea"
        profile = await call(session, "memory_profile", tenant=ids["tenant"], user=ids["user"])
        assert {e["content"] for e in profile["entries"]} == {"User prefers green tea", "User lives in Porto"}
        assert profile["user_known"] and all(e["memory_id"] and "domains" in e for e in profile["entries"])
        assert profile["version"] >= 1
        recalled = await call(session, "memory_recall", **ids, agent="assistant", question="Which tea do I like?")
        assert recalled["injected"] and "User prefers green tea" in recalled["context"]
        rated = await call(session, "memory_feedback", tenant=ids["tenant"], user=ids["user"],
                           recall_id=recalled["recall_id"], rating="good")
        assert rated["rating"] == 1
        scope = {"tenant": ids["tenant"], "user": ids["user"]}
        tea = found["results"][0]["memory_id"]
        assert (await call(session, "memory_pin", **scope, memory_id=tea[:8]))["changes"][0]["change"] == "pinned"
        assert (await call(session, "memory_unpin", **scope, memory_id=tea))["affected"] == 1
        corrected = await call(session, "memory_correct", **scope, memory_id=tea, content="User prefers jasmine tea")
        assert corrected["changes"][0]["after"] == "User prefers jasmine tea"
        history = await call(session, "memory_history", **scope, memory_id=tea[:8])
        assert history["memory_id"] == tea and [s["change"] for s in history["steps"]][0] == "created"
        assert "prefix_too_short" in await fails(session, "memory_history", **scope, memory_id=tea[:3])
        preview = await call(session, "memory_delete", **scope, topic="tea", dry_run=True)
        assert (preview["affected"], preview["dry_run"]) == (1, True)
        deleted = await call(session, "memory_delete", **ids, topic_text="tea")  # the deprecated name still works
        assert deleted["affected"] == 1
        everything = await call(session, "memory_delete", **ids, everything=True)
        assert everything["affected"] == 1
        empty = await call(session, "memory_recall", **ids, agent="assistant", question="Which tea do I like?")
        assert (empty["context"], empty["recent"]) == ("", [])

    _over_http(d, d.mcp_token, body)


def test_new_users_and_sessions_are_normal_but_an_unknown_memory_id_is_an_error(deployment: Deployment) -> None:
    d = deployment
    ids = {"tenant": d.tenant_a, "user": new_id("user"), "session": "known"}

    async def body(session: ClientSession) -> None:
        stranger = {**ids, "user": new_id("user")}
        nobody = await call(session, "memory_read", **stranger)
        assert (nobody["memories"], nobody["user_known"]) == ([], False)
        empty = await call(session, "memory_recall", **stranger, agent="a", question="tea?")
        assert (empty["context"], empty["user_known"]) == ("", False)
        await call(session, "memory_write", **ids, agent="a", content="I prefer green tea")
        new = {**ids, "session": "never-seen"}
        read = await call(session, "memory_read", **new)
        assert (len(read["memories"]), read["session_known"], read["session_summary"]) == (1, False, None)
        found = await call(session, "memory_search", **new, query="tea")
        assert [r["content"] for r in found["results"]] == ["User prefers green tea"] and not found["session_known"]
        recalled = await call(session, "memory_recall", **new, agent="a", question="Which tea do I like?")
        assert "User prefers green tea" in recalled["context"] and recalled["session_known"] is False
        assert recalled["recent"] == []
        assert len((await call(session, "memory_read", **ids))["memories"]) == 1, "nothing was deleted"
        assert "unknown_memory" in await fails(session, "memory_read", **ids, memory_id="nope")
        assert "exactly one" in await fails(session, "memory_delete", **ids)

    _over_http(d, d.mcp_token, body)


def test_ids_are_validated_the_same_on_write_and_read(deployment: Deployment) -> None:
    d = deployment

    async def body(session: ClientSession) -> None:
        for bad in ({"user": "has space"}, {"session": "a/b"}, {"tenant": ""}, {"session": "x" * 200}):
            ids = {"tenant": d.tenant_a, "user": "u1", "session": "s1", **bad}
            write = await fails(session, "memory_write", **ids, agent="a", content="I prefer green tea")
            read = await fails(session, "memory_read", **ids)
            field = next(iter(bad))
            assert f"memory_write: '{field}' " in write and f"memory_read: '{field}' " in read
            assert "validation error" not in write + read and "pydantic" not in write + read
        missing = await fails(session, "memory_read", tenant=d.tenant_a)
        assert "user" in missing
        assert "memory_write: 'content' is required" in await fails(session, "memory_write", tenant=d.tenant_a,
                                                                     user="u1")
        wrong = await fails(session, "memory_search", tenant=d.tenant_a, user="u1", query="tea", limit="many")
        assert "memory_search: 'limit' must be an integer" in wrong and "validation error" not in wrong
        assert "'limit' must be at most 100" in await fails(session, "memory_search", tenant=d.tenant_a, user="u1",
                                                           query="tea", limit=500)
        assert "'role' must be one of" in await fails(session, "memory_write", tenant=d.tenant_a, user="u1",
                                                     content="hi", role="robot")

    _over_http(d, d.mcp_token, body)


def test_a_tenant_api_key_works_as_mcp_bearer_token_but_only_for_its_tenant(deployment: Deployment) -> None:
    d = deployment
    ids = {"user": new_id("user"), "session": "s1"}

    async def body(session: ClientSession) -> None:
        await call(session, "memory_write", tenant=d.tenant_a, **ids, agent="a", content="I prefer green tea")
        refused = await fails(session, "memory_write", tenant=d.tenant_b, **ids, agent="a", content="I prefer tea")
        assert "forbidden_tenant" in refused
        assert "forbidden_tenant" in await fails(session, "memory_read", tenant=d.tenant_b, **ids)

    _over_http(d, d.key_a, body)
    scope = {"tenant": d.tenant_b, "user": ids["user"]}
    assert d.as_b().get("/v1/memories", params=scope).json() == [], "nothing reached tenant B"


def test_the_mcp_endpoint_needs_the_bearer_token_and_limits_request_size(deployment: Deployment) -> None:
    d = deployment
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer not-the-token"}):
        response = httpx.post(f"{d.url}/mcp", json=hello, headers={**headers, **auth})
        assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
    big = httpx.post(f"{d.url}/mcp", content=b"x" * (MAX_BODY + 1),
                     headers={**headers, "Authorization": f"Bearer {d.mcp_token}"})
    assert big.status_code == 413 and big.json()["error"]["code"] == "payload_too_large"
    ok = httpx.post(f"{d.url}/mcp", json=hello, headers={**headers, "Authorization": f"Bearer {d.mcp_token}"})
    assert ok.status_code == 200


def _stdio(data: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, cwd=str(data.parent),
                                 args=["-m", "engram.cli.main", "--data", str(data), "mcp", *extra])


def test_every_tool_works_over_stdio_and_a_pinned_tenant_is_enforced(tmp_path: Path) -> None:
    tenant, user = new_id("tenant"), new_id("user")
    ids = {"tenant": tenant, "user": user, "session": "s1"}

    async def run() -> None:
        async with _session(stdio_client(_stdio(tmp_path / "data", "--tenant", tenant))) as session:
            assert (await call(session, "memory_write", **ids, agent="a", content="My name is Ana Lima"))["stored"]
            assert (await call(session, "memory_read", **{**ids, "session": "s2"}))["session_known"] is False
            read = await call(session, "memory_read", **ids)
            assert [m["content"] for m in read["memories"]] == ["User's name is Ana Lima"]
            recalled = await call(session, "memory_recall", **ids, agent="a", question="What is my name?")
            assert "Ana Lima" in recalled["context"]
            other = await fails(session, "memory_write", **{**ids, "tenant": "someone-else"}, agent="a",
                                content="I prefer tea")
            assert "forbidden_tenant" in other
            assert (await call(session, "memory_delete", **ids, everything=True))["affected"] == 1

    anyio.run(run)


def test_without_a_token_mcp_serves_loopback_clients_only(open_server: str) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}}
    proxied = httpx.post(f"{open_server}/mcp", json=hello, headers={
        "Accept": "application/json, text/event-stream", "X-Forwarded-For": "198.51.100.7"})
    assert proxied.status_code == 403 and proxied.json()["error"]["code"] == "loopback_only"

    async def run() -> None:
        async with _session(_http_transport(f"{open_server}/mcp", {})) as session:
            ids = {"tenant": "t", "user": new_id("user"), "session": "s1"}
            assert (await call(session, "memory_write", **ids, agent="a", content="I prefer green tea"))["stored"]
            assert len((await call(session, "memory_read", **ids))["memories"]) == 1

    anyio.run(run)


def _engram_mcp(data: Path, *args: str, token: str | None = None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    if token:
        env["ENGRAM_MCP_TOKEN"] = token
    return subprocess.Popen([sys.executable, "-m", "engram.cli.main", "--data", str(data), "mcp", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_engram_mcp_over_http_needs_its_token_and_refuses_an_open_public_bind(tmp_path: Path) -> None:
    refused = _engram_mcp(tmp_path / "a", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port()))
    assert refused.wait(timeout=60) != 0 and "no API key configured" in refused.communicate()[1]
    token, port = new_id("token"), free_port()
    server = _engram_mcp(tmp_path / "b", "--transport", "http", "--port", str(port), token=token)
    try:
        assert "every request must carry one" in server.stderr.readline()  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(200):
            try:
                assert httpx.post(url, json={}).status_code == 401
                break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise AssertionError("engram mcp never answered")

        async def run() -> None:
            async with _session(_http_transport(url, {"Authorization": f"Bearer {token}"})) as session:
                ids = {"tenant": "t", "user": "u", "session": "s"}
                assert (await call(session, "memory_write", **ids, agent="a", content="I live in Porto"))["stored"]
                found = await call(session, "memory_search", **{**ids, "session": "x"}, query="Porto")
                assert found["session_known"] is False and found["results"][0]["content"] == "User lives in Porto"

        anyio.run(run)
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_memory_write_says_what_it_remembered_and_a_retry_without_message_id_stores_nothing(
        deployment: Deployment) -> None:
    d = deployment
    ids = {"tenant": d.tenant_a, "user": new_id("user")}

    async def body(session: ClientSession) -> None:
        first = await call(session, "memory_write", **ids, content="I prefer green tea")
        assert first["stored"] and [r["memory"] for r in first["remembered"]] == ["User prefers green tea"]
        retry = await call(session, "memory_write", **ids, content="I prefer green tea")
        assert (retry["stored"], retry["remembered"], retry["message_id"]) == (False, [], first["message_id"])
        unknown = await fails(session, "memory_write", **ids, content="hi there", colour="red")
        assert "'colour' is not an argument of this tool (extra arguments are refused)" in unknown
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for tool in tools.values():
            schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema")  # mcp 2.x / 1.x
            undescribed = [n for n, p in schema["properties"].items() if not p.get("description")]
            assert undescribed == [], (tool.name, undescribed)

    _over_http(d, d.mcp_token, body)


def test_a_pinned_tenant_and_user_need_no_ids_and_refuse_others(tmp_path: Path) -> None:
    async def run() -> None:
        params = _stdio(tmp_path / "data", "--tenant", "home", "--user", "ana")
        async with _session(stdio_client(params)) as session:
            assert (await call(session, "memory_write", content="I prefer green tea"))["stored"]
            recalled = await call(session, "memory_recall", question="Which tea do I like?", session="new")
            assert "User prefers green tea" in recalled["context"] and recalled["session_known"] is False
            for tool in (await session.list_tools()).tools:
                schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema")  # mcp 2.x / 1.x
                assert not {"tenant", "user"} & set(schema["properties"]), tool.name  # pinned: not asked for
            other = await fails(session, "memory_read", user="bob")
            assert "serves user 'ana' only" in other
            foreign = await fails(session, "memory_read", tenant="work")
            assert "serves tenant 'home' only" in foreign and "API key" not in foreign

    anyio.run(run)
