"""Global card changes over HTTP are decided by the cards processor with a version check (no lock at the edge).

The same functions run on the distributed runtime (tests/access/test_http_distributed.py).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import httpx

from engram.schemas.events import GlobalCardRejected, GlobalCardRequested, GlobalCardSaved
from engram.schemas.memory import GlobalCard

from .conftest import Deployment, new_id


def _create(d: Deployment, user: str, **fields: object) -> dict[str, object]:
    response = d.as_a().post("/v1/cards", json={"tenant": d.tenant_a, "user": user, "name": "Ana", **fields})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def _together(calls: list[tuple[httpx.Client, str, str, dict[str, object]]]) -> list[httpx.Response]:
    """Send the requests at the same moment (one thread and client each, released by a barrier)."""
    barrier = threading.Barrier(len(calls))

    def send(call: tuple[httpx.Client, str, str, dict[str, object]]) -> httpx.Response:
        client, method, path, body = call
        barrier.wait(timeout=60)
        return client.request(method, path, json=body)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(send, calls))


def two_updates_on_one_version(d: Deployment, clients: tuple[httpx.Client, httpx.Client]) -> None:
    user = new_id("user")
    card = _create(d, user)
    path, scope = f"/v1/cards/{card['card_id']}", {"tenant": d.tenant_a, "user": user, "expected_version": 1}
    responses = _together([(clients[0], "PATCH", path, {**scope, "name": "Ana L."}),
                           (clients[1], "PATCH", path, {**scope, "name": "Ann"})])
    assert sorted(r.status_code for r in responses) == [200, 409], [r.text for r in responses]
    winner = next(r for r in responses if r.status_code == 200).json()
    error = next(r for r in responses if r.status_code == 409).json()["error"]
    assert error["code"] == "version_conflict" and error["current_version"] == 2 and "version" in error["message"]
    assert winner["version"] == 2
    now = d.as_a().get(path, params={"tenant": d.tenant_a, "user": user}).json()
    assert (now["name"], now["version"]) == (winner["name"], 2)


def test_two_card_updates_on_one_version_one_wins_and_the_other_is_a_409(deployment: Deployment) -> None:
    two_updates_on_one_version(deployment, (deployment.as_a(), deployment.as_a()))


def test_a_stale_expected_version_is_refused_and_no_version_means_the_current_one(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    card = _create(d, user, agent_ids=["coach"])
    path, scope = f"/v1/cards/{card['card_id']}", {"tenant": d.tenant_a, "user": user}
    renamed = d.as_a().patch(path, json={**scope, "name": "Ana L."})
    assert renamed.status_code == 200 and renamed.json()["version"] == 2, renamed.text
    stale = d.as_a().post(f"{path}/disable", json={**scope, "expected_version": 1})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    gone = d.as_a().delete(path, params={**scope, "expected_version": 1})
    assert gone.status_code == 409
    # concurrent changes that name no version are each applied to the version current when decided
    agents = [f"agent-{i}" for i in range(3)]
    responses = _together([(d.as_a(), "POST", f"{path}/bind", {**scope, "agent_ids": [a]}) for a in agents])
    assert [r.status_code for r in responses] == [200] * 3, [r.text for r in responses]
    now = d.as_a().get(path, params=scope).json()
    assert set(now["agent_ids"]) == {"coach", *agents} and now["version"] == 5
    assert d.as_a().delete(path, params={**scope, "expected_version": 5}).json()["deleted"]
    exists = d.as_a().post("/v1/cards", json={**scope, "card_id": card["card_id"], "name": "Ana"})
    assert exists.status_code == 201 and exists.json()["version"] == 7  # created again over the deleted one
    again = d.as_a().post("/v1/cards", json={**scope, "card_id": card["card_id"], "name": "Ana"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "card_exists"


def test_the_runtime_decides_two_requests_made_on_one_version(deployment: Deployment) -> None:
    """Past the edge's own check: two commands computed on version 1 reach the processor; one is rejected."""
    d, user = deployment, new_id("user")
    card = GlobalCard.model_validate(_create(d, user))
    now = datetime.now(timezone.utc)

    def request(name: str) -> GlobalCardRequested:
        new = card.model_copy(update={"name": name, "version": 2, "updated_at": now})
        return GlobalCardRequested(event_id=new_id("req"), occurred_at=now, tenant_id=d.tenant_a, user_id=user,
                                   card_id=card.card_id, action="save", expected_version=1, card=new, base=card)

    with ThreadPoolExecutor(2) as pool:
        decisions = list(pool.map(d.backend.decide, [request("Ana L."), request("Ann")]))
    assert sorted(type(x).__name__ for x in decisions) == ["GlobalCardRejected", "GlobalCardSaved"]
    saved = next(x for x in decisions if isinstance(x, GlobalCardSaved))
    rejected = next(x for x in decisions if isinstance(x, GlobalCardRejected))
    assert rejected.reason == "version_conflict" and rejected.current_version == 2 and saved.card.version == 2
    stored = d.backend.read(lambda store: store.list_cards(d.tenant_a, user))
    assert [(c.name, c.version) for c in stored] == [(saved.card.name, 2)]
