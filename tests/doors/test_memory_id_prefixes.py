"""Memory ids behave the same on every door: a unique prefix of at least 4 characters is accepted, an
unknown id is a 404 / NotFound, a shorter prefix is refused as too short."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import ClientSession

from engram import Memory
from engram.access.errors import BadRequest, NotFound
from tests.access.conftest import Deployment, new_id, turn
from tests.access.test_mcp import _over_http, call, fails


def _user_with_a_memory(d: Deployment) -> tuple[str, str]:
    user = new_id("user")
    assert d.as_a().post("/v1/turns", json=turn(d.tenant_a, user, "I live in Porto")).status_code == 200
    [memory] = d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()
    return user, memory["memory_id"]


def test_http_reads_and_forgets_by_prefix_and_refuses_unknown_ids_and_short_prefixes(deployment: Deployment) -> None:
    d = deployment
    user, memory_id = _user_with_a_memory(d)
    scope = {"tenant": d.tenant_a, "user": user}
    http = d.as_a()
    assert http.get(f"/v1/memories/{memory_id[:6]}", params=scope).json()["memory_id"] == memory_id
    assert http.get(f"/v1/memories/{memory_id[:6]}/lineage", params=scope).status_code == 200
    unknown = http.post("/v1/forget", json={**scope, "memory_ids": ["ffffffff-0000"]})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_memory", unknown.text
    short = http.post("/v1/forget", json={**scope, "memory_ids": [memory_id[:3]]})
    assert short.status_code == 400 and short.json()["error"]["code"] == "prefix_too_short", short.text
    assert "too short" in short.json()["error"]["message"]
    assert http.get(f"/v1/memories/{memory_id[:2]}", params=scope).json()["error"]["code"] == "prefix_too_short"
    forgot = http.post("/v1/forget", json={**scope, "memory_ids": [memory_id[:5]]})
    assert forgot.status_code == 200 and forgot.json()["affected"] == 1, forgot.text
    assert http.get(f"/v1/memories/{memory_id[:6]}", params=scope).status_code == 404


def test_mcp_reads_and_deletes_by_prefix(deployment: Deployment) -> None:
    d = deployment
    user, memory_id = _user_with_a_memory(d)
    ids = {"tenant": d.tenant_a, "user": user}

    async def body(session: ClientSession) -> None:
        read = await call(session, "memory_read", **ids, memory_id=memory_id[:6])
        assert read["memory"]["memory_id"] == memory_id
        assert "too short" in await fails(session, "memory_read", **ids, memory_id=memory_id[:3])
        assert "unknown_memory" in await fails(session, "memory_delete", **ids, memory_id="ffffffff-0000")
        assert (await call(session, "memory_delete", **ids, memory_id=memory_id[:6]))["affected"] == 1

    _over_http(d, d.mcp_token, body)


def test_python_refuses_a_too_short_prefix_as_too_short(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        [remembered] = memory.record(user="ana", messages="I live in Porto")
        with pytest.raises(BadRequest, match="too short"):
            memory.forget(user="ana", memory_id=remembered.memory_id[:3])
        with pytest.raises(NotFound):
            memory.forget(user="ana", memory_id="ffffffff-0000")
        assert memory.forget(user="ana", memory_id=remembered.memory_id[:6])[0].event == "deleted"
