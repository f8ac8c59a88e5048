"""The lineage of a forgotten memory answers its steps without any text (never a 500)."""

from __future__ import annotations

from tests.access.conftest import Deployment, new_id, turn


def test_the_lineage_of_a_forgotten_memory_lists_the_steps_without_text(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    http = d.as_a()
    assert http.post("/v1/turns", json=turn(d.tenant_a, user, "I live in Porto")).status_code == 200
    [memory] = http.get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()
    forgot = http.post("/v1/forget", json={"tenant": d.tenant_a, "user": user, "memory_ids": [memory["memory_id"]]})
    assert forgot.status_code == 200 and forgot.json()["affected"] == 1
    response = http.get(f"/v1/memories/{memory['memory_id']}/lineage", params={"tenant": d.tenant_a, "user": user})
    assert response.status_code == 200, response.text
    steps = response.json()
    assert [s["change"] for s in steps][-1] == "deleted" and len(steps) >= 2
    assert all(s["before"] is None and s["after"] is None for s in steps)
    turns = [t for s in steps for t in s["turns"]]
    assert turns and all(t["content"] is None for t in turns)
    assert "Porto" not in response.text
