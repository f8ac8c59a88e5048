"""Content must have a visible character, and one invalid message of a batch is reported on its own while
the valid ones are recorded (HTTP batches and `Memory.record`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Memory
from engram.access.errors import BadRequest
from tests.access.conftest import Deployment, new_id, turn

INVISIBLE = ["\u200d\u200c", "\u200e\u200f", "\u200b", " \u2060 "]


@pytest.mark.parametrize("content", INVISIBLE)
def test_invisible_only_content_is_refused_on_http(deployment: Deployment, content: str) -> None:
    d = deployment
    response = d.as_a().post("/v1/turns", json=turn(d.tenant_a, new_id("user"), content))
    assert response.status_code == 422, response.text
    assert "visible" in response.json()["error"]["message"]


def test_a_batch_records_its_valid_turns_and_names_each_invalid_one(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    batch = [turn(d.tenant_a, user, "I live in Porto"), turn(d.tenant_a, user, "\u200e\u200f"),
             turn(d.tenant_a, user, "I work as a nurse"), {**turn(d.tenant_a, user, "hi"), "role": "robot"}]
    response = d.as_a().post("/v1/turns", json={"turns": batch})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_turns"
    assert [(t["index"], t["reason"]) for t in error["turns"]] == [(1, "invalid"), (3, "invalid")]
    assert error["ingested"]["appended"] == 2
    contents = {m["content"] for m in d.as_a().get("/v1/memories", params={"tenant": d.tenant_a,
                                                                           "user": user}).json()}
    assert any("Porto" in c for c in contents) and any("nurse" in c for c in contents)


def test_python_records_the_valid_messages_and_reports_the_invalid_ones(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        with pytest.raises(BadRequest, match="visible") as raised:
            memory.record(user="ana", messages=["I live in Porto", "\u200b\u200d", {"role": "robot", "content": "x"}])
        assert raised.value.code == "invalid_turns"
        assert [t["index"] for t in raised.value.details["turns"]] == [1, 2]  # type: ignore[attr-defined]
        assert [m.content for m in memory.memories(user="ana")] == ["User lives in Porto"]
        with pytest.raises(BadRequest, match="visible"):
            memory.record(user="ana", messages="\u200e\u200f")
        assert len(memory.memories(user="ana")) == 1
