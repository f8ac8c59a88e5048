"""A string that cannot be UTF-8 encoded (a lone surrogate) is refused at validation on every door,
and one bad recall observation never blocks the logging of the others."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from engram import Memory
from engram.access.errors import BadRequest
from engram.runtime.backend import EmbeddedBackend
from engram.recall.service import RecallRequest
from engram.schemas.events import RecallServed
from engram.schemas.inputs import TurnInput

from tests.access.conftest import Deployment, new_id, turn

LONE = "\ud800"


def _post(client: httpx.Client, path: str, body: dict[str, object]) -> httpx.Response:
    # json.dumps escapes the surrogate as \ud800, as a JSON client would send it
    return client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})


def _bodies(d: Deployment, user: str) -> list[tuple[str, dict[str, object]]]:
    t = d.tenant_a
    base = turn(t, user, "I like tea")
    bodies: list[tuple[str, dict[str, object]]] = []
    for field in ("user", "agent", "session", "message_id", "parent_id", "trace_id"):
        bodies.append(("/v1/turns", {**base, field: f"x{LONE}"}))
    for field in ("user", "agent", "session"):
        recall = {"tenant": t, "user": user, "agent": "a", "session": "s", "question": "tea?", field: LONE}
        bodies.append(("/v1/recall", recall))
    bodies.append(("/v1/recall", {"tenant": t, "user": user, "agent": "a", "session": "s", "question": "tea?",
                                  "message_id": LONE}))
    bodies.append(("/v1/search", {"tenant": t, "user": LONE, "query": "tea"}))
    bodies.append(("/v1/search", {"tenant": t, "user": user, "session": LONE, "query": "tea"}))
    bodies.append(("/v1/forget", {"tenant": t, "user": LONE, "everything": True}))
    bodies.append(("/v1/forget", {"tenant": t, "user": user, "memory_ids": [LONE]}))
    bodies.append(("/v1/cards", {"tenant": t, "user": LONE, "name": "Ana"}))
    bodies.append(("/v1/feedback", {"tenant": t, "user": user, "recall_id": LONE, "rating": 1}))
    return bodies


def test_a_lone_surrogate_in_any_id_is_a_422_on_every_http_endpoint(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    assert d.as_a().post("/v1/turns", json=turn(d.tenant_a, user, "I like tea")).status_code == 200
    for path, body in _bodies(d, user):
        response = _post(d.as_a(), path, body)
        assert response.status_code == 422, (path, body, response.text)
        assert response.json()["error"]["code"] == "invalid_request"
    tenant = _post(d.as_a(), "/v1/recall", {"tenant": LONE, "user": user, "agent": "a", "session": "s",
                                            "question": "q"})
    assert tenant.status_code in (403, 422), tenant.text  # the key names another tenant, or invalid: never 500
    cards = d.as_a().get(f"/v1/cards?tenant={d.tenant_a}&user=%ED%A0%80")  # a surrogate's bytes: not UTF-8
    assert cards.status_code in (404, 422), cards.text


def test_a_lone_surrogate_is_refused_with_a_clear_error_by_the_python_api(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        for call in (lambda: memory.record(user=LONE, messages="I like tea"),
                     lambda: memory.recall(user=LONE, question="tea?"),
                     lambda: memory.record(user="ana", messages="I like tea", session=LONE),
                     lambda: memory.search(user=LONE, query="tea"),
                     lambda: memory.memories(user=LONE)):
            with pytest.raises(BadRequest, match="UTF-8|surrogate"):
                call()
    with pytest.raises(ValueError, match="UTF-8|surrogate"):
        TurnInput(tenant="t", user=LONE, agent="a", session="s", message_id="m", role="user", content="hi")


def test_one_unloggable_recall_observation_does_not_block_the_others(tmp_path: Path) -> None:
    """A bad entry is dropped (logged and counted as dead) and the later observations are logged."""
    from datetime import datetime, timezone

    backend = EmbeddedBackend.open(tmp_path / "data")
    try:
        backend.ingest([TurnInput(tenant="t", user="u", agent="a", session="s", message_id="m1", role="user",
                                  content="I prefer green tea in the morning")])
        good = backend.recall(RecallRequest("t", "u", "a", "s", "What do I drink?",
                                            datetime.now(timezone.utc)), 10_000)
        assert good is not None
        bad = RecallServed.model_construct(**{**good.observation.model_dump(), "event_id": "bad-one",
                                              "recall_id": "bad-one", "question": f"tea{LONE}"})
        backend._late_observations.insert(0, bad)
        later = backend.recall(RecallRequest("t", "u", "a", "s", "Where do I live?",
                                             datetime.now(timezone.utc)), 10_000)
        assert later is not None
        assert isinstance(backend.event("t", "u", later.observation.recall_id), RecallServed)
        assert backend.event("t", "u", "bad-one") is None
        assert backend.counters().get("recall.observation_dropped") == 1
        assert not backend._late_observations
    finally:
        backend.close()
