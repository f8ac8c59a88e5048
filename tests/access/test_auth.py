"""Auth and isolation: keys scoped to one tenant, admin keys, open mode on loopback only."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.access.auth import KeyRing, check_bind, is_loopback
from engram.access.backend import DataDirBusy, EmbeddedBackend
from engram.access.errors import AccessError, BadRequest

from .conftest import Deployment, free_port, new_id, turn


@dataclass
class Victim:
    """Data of tenant B that tenant A's key must neither read nor change."""

    user: str
    memory_id: str
    card_id: str
    recall_id: str


@pytest.fixture(scope="module")
def victim(deployment: Deployment) -> Victim:
    d, user = deployment, new_id("user")
    facts = ["I prefer green tea in the morning", "My name is Bea Costa"]
    d.as_b().post("/v1/turns", json={"turns": [turn(d.tenant_b, user, f) for f in facts]}).raise_for_status()
    memory_id = d.as_b().get("/v1/memories", params={"tenant": d.tenant_b, "user": user}).json()[0]["memory_id"]
    card = d.as_b().post("/v1/cards", json={"tenant": d.tenant_b, "user": user, "name": "Bea", "tags": ["tea"]})
    recall = d.as_b().post("/v1/recall", json={"tenant": d.tenant_b, "user": user, "agent": "coach",
                                              "session": "s1", "question": "tea?"})
    return Victim(user, memory_id, card.json()["card_id"], recall.json()["recall_id"])


def _requests(t: str, v: Victim) -> list[tuple[str, str, dict[str, Any]]]:
    """Every tenant-scoped endpoint, aimed at tenant `t` and the victim's ids."""
    scope = {"tenant": t, "user": v.user}
    return [
        ("POST", "/v1/turns", {"json": turn(t, v.user, "I now prefer black coffee")}),
        ("POST", "/v1/turns", {"json": {"turns": [turn(t, v.user, "I now prefer black coffee")]}}),
        ("POST", "/v1/recall", {"json": {**scope, "agent": "coach", "session": "s1", "question": "tea?"}}),
        ("POST", "/v1/feedback", {"json": {**scope, "recall_id": v.recall_id, "rating": 2}}),
        ("GET", "/v1/memories", {"params": scope}),
        ("GET", f"/v1/memories/{v.memory_id}", {"params": scope}),
        ("GET", f"/v1/memories/{v.memory_id}/lineage", {"params": scope}),
        ("POST", f"/v1/memories/{v.memory_id}/correct", {"json": {**scope, "content": "User hates tea"}}),
        ("POST", f"/v1/memories/{v.memory_id}/pin", {"json": scope}),
        ("POST", f"/v1/memories/{v.memory_id}/unpin", {"json": scope}),
        ("DELETE", f"/v1/memories/{v.memory_id}", {"params": scope}),
        ("POST", "/v1/forget", {"json": {**scope, "everything": True}}),
        ("POST", "/v1/forget", {"json": {**scope, "topic_text": "tea"}}),
        ("GET", "/v1/sessions/s1/summary", {"params": scope}),
        ("GET", "/v1/cards", {"params": scope}),
        ("POST", "/v1/cards", {"json": {**scope, "name": "intruder"}}),
        ("GET", f"/v1/cards/{v.card_id}", {"params": scope}),
        ("PATCH", f"/v1/cards/{v.card_id}", {"json": {**scope, "name": "intruder"}}),
        ("POST", f"/v1/cards/{v.card_id}/disable", {"json": scope}),
        ("POST", f"/v1/cards/{v.card_id}/bind", {"json": {**scope, "agent_ids": ["spy"]}}),
        ("DELETE", f"/v1/cards/{v.card_id}", {"params": scope}),
    ]


def _snapshot(d: Deployment, v: Victim) -> tuple[object, ...]:
    scope = {"tenant": d.tenant_b, "user": v.user}
    admin = d.http(d.admin_key)
    return (admin.get("/v1/memories", params={**scope, "status": "all"}).json(),
            admin.get("/v1/cards", params={**scope, "include_deleted": True}).json())


def test_a_tenant_key_is_refused_on_every_endpoint_of_another_tenant(deployment: Deployment, victim: Victim) -> None:
    d = deployment
    before = _snapshot(d, victim)
    for method, path, kwargs in _requests(d.tenant_b, victim):
        response = d.as_a().request(method, path, **kwargs)
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["error"]["code"] == "forbidden_tenant"
    assert _snapshot(d, victim) == before


def test_ids_of_another_tenant_are_unknown_inside_ones_own(deployment: Deployment, victim: Victim) -> None:
    d = deployment
    d.as_a().post("/v1/turns", json=turn(d.tenant_a, victim.user, "I prefer green tea in the morning")).raise_for_status()
    before = _snapshot(d, victim)
    aimed = [(method, path, kwargs) for method, path, kwargs in _requests(d.tenant_a, victim)
             if victim.memory_id in path or victim.card_id in path or path == "/v1/feedback"]
    assert len(aimed) == 12
    for method, path, kwargs in aimed:
        response = d.as_a().request(method, path, **kwargs)
        assert response.status_code == 404, (method, path, response.text)
    assert _snapshot(d, victim) == before


def test_a_batch_with_one_foreign_turn_is_refused_whole(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    batch = [turn(d.tenant_a, user, "I prefer green tea"), turn(d.tenant_b, user, "I prefer green tea")]
    assert d.as_a().post("/v1/turns", json={"turns": batch}).status_code == 403
    missing = d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user})
    assert missing.status_code == 200 and missing.json() == []  # nothing of the refused batch was recorded


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"},
                                     {"Authorization": "Bearer wrong-key"}, {"X-API-Key": "wrong-key"}])
def test_missing_or_unknown_keys_are_401(deployment: Deployment, headers: dict[str, str]) -> None:
    response = httpx.get(f"{deployment.url}/v1/memories", headers=headers,
                         params={"tenant": deployment.tenant_a, "user": "u"})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "unauthorized"


def test_the_x_api_key_header_works_like_a_bearer_token(deployment: Deployment, victim: Victim) -> None:
    d = deployment
    response = httpx.get(f"{d.url}/v1/cards", headers={"X-API-Key": d.key_b},
                         params={"tenant": d.tenant_b, "user": victim.user})
    assert response.status_code == 200 and response.json()[0]["card_id"] == victim.card_id


def test_an_admin_key_reaches_every_tenant(deployment: Deployment, victim: Victim) -> None:
    d = deployment
    response = d.http(d.admin_key).get("/v1/memories", params={"tenant": d.tenant_b, "user": victim.user})
    assert response.status_code == 200 and response.json()[0]["memory_id"] == victim.memory_id
    assert d.as_b().get("/v1/metrics").status_code == 403


def test_open_mode_serves_loopback_clients_and_refuses_forwarded_remote_ones(open_server: str) -> None:
    user = new_id("user")
    assert httpx.post(f"{open_server}/v1/turns", json=turn("t", user, "I prefer green tea")).status_code == 200
    assert httpx.get(f"{open_server}/v1/health").json()["auth"] == "loopback-only"
    proxied = httpx.get(f"{open_server}/v1/memories", params={"tenant": "t", "user": user},
                        headers={"X-Forwarded-For": "203.0.113.9"})
    assert proxied.status_code == 403 and proxied.json()["error"]["code"] == "loopback_only"
    assert httpx.get(f"{open_server}/v1/health", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 403


def test_loopback_detection_and_bind_rules() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "10.0.0.5", "::", "example.com", "", None))
    assert "loopback" in check_bind("127.0.0.1", secured=False)
    with pytest.raises(AccessError, match="no API key"):
        check_bind("0.0.0.0", secured=False)
    assert "API keys configured" in check_bind("0.0.0.0", secured=True)
    with pytest.raises(AccessError, match="key:tenant"):
        KeyRing.parse("just-a-key")
    ring = KeyRing.parse("k1:acme, k2:other", "adm")
    assert ring.principal("k1", "10.0.0.5").tenant == "acme" and ring.principal("adm", None).admin


def _engram(data: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return subprocess.Popen([sys.executable, "-m", "engram.cli.main", "--data", str(data), *args],
                            env={**clean, **(env or {})}, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_engram_serve_refuses_a_public_bind_without_keys(tmp_path: Path) -> None:
    process = _engram(tmp_path / "d", "serve", "--host", "0.0.0.0", "--port", str(free_port()))
    _, err = process.communicate(timeout=60)
    assert process.returncode != 0 and "no API key configured" in err
    assert not (tmp_path / "d").exists(), "nothing is opened before the bind is judged safe"


def test_engram_serve_on_loopback_says_so_at_start_and_serves(tmp_path: Path) -> None:
    port = free_port()
    process = _engram(tmp_path / "d", "serve", "--port", str(port))
    try:
        assert "loopback clients only" in process.stderr.readline()  # type: ignore[union-attr]
        for _ in range(200):
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/v1/health").json()["auth"] == "loopback-only"
                break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise AssertionError("engram serve never answered")
        with pytest.raises(DataDirBusy):
            EmbeddedBackend.open(tmp_path / "d")
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_duplicate_or_doubly_scoped_keys_are_a_startup_error() -> None:
    with pytest.raises(BadRequest, match="one key twice"):
        KeyRing.parse("k1:acme,k1:globex")
    with pytest.raises(BadRequest, match="both"):
        KeyRing.parse("k1:acme", "k1")


def test_an_mcp_token_equal_to_a_tenant_key_stays_that_tenants_key() -> None:
    from engram.access.mcp_server import mcp_keys

    keys = mcp_keys(KeyRing.parse("k1:acme"), "k1")
    who = keys.principal("k1", "127.0.0.1")
    assert (who.tenant, who.admin) == ("acme", False)
    assert mcp_keys(KeyRing.parse("k1:acme"), "other").principal("other", "127.0.0.1").admin


def test_open_mode_refuses_a_foreign_host_name_against_dns_rebinding(open_server: str) -> None:
    rebound = httpx.get(f"{open_server}/v1/memories", params={"tenant": "t", "user": "u"},
                        headers={"Host": "evil.example:8700"})
    assert rebound.status_code == 403 and rebound.json()["error"]["code"] == "loopback_only"
    local = httpx.get(f"{open_server}/v1/memories", params={"tenant": "t", "user": "u"},
                      headers={"Host": "localhost:8700"})
    assert local.status_code == 200  # served (a new user: no memories)
