"""Event models: frozen, versioned, upcast on read, exported schemas without drift."""

from __future__ import annotations

from datetime import datetime, timezone

import jsonschema
import orjson
import pytest
from pydantic import ValidationError

from engram.schemas.codec import EventDecodeError, decode, encode
from engram.schemas.events import EVENT_TYPES, TurnRecorded
from engram.schemas.export import JSON_DIR, rendered_schemas
from engram.schemas.inputs import TurnInput, to_turn_event
from engram.schemas.topics import CATALOGUE, topic_for

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _turn(**overrides: object) -> TurnRecorded:
    fields = dict(event_id="e1", occurred_at=NOW, tenant_id="t", user_id="u", agent_id="a",
                  session_id="s", message_id="m1", role="user", content="我喜欢猫")
    fields.update(overrides)
    return TurnRecorded(**fields)  # type: ignore[arg-type]


def test_exported_json_schemas_match_the_models() -> None:
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in JSON_DIR.glob("*.json")}
    assert on_disk == rendered_schemas(), "schemas drifted: run python -m engram.schemas.export"


def test_every_event_type_has_a_topic_and_a_schema_file() -> None:
    for name in EVENT_TYPES:
        assert topic_for(name) in {t.name for t in CATALOGUE}
        assert any(p.name.startswith(f"{name}.v") for p in JSON_DIR.glob("*.json"))


def test_events_are_frozen() -> None:
    event = _turn()
    with pytest.raises(ValidationError):
        event.content = "changed"  # type: ignore[misc]


def test_encoded_event_validates_against_its_exported_schema() -> None:
    schema = orjson.loads((JSON_DIR / "TurnRecorded.v2.json").read_bytes())
    jsonschema.validate(orjson.loads(encode(_turn())), schema)


def test_round_trip_preserves_the_event() -> None:
    event = _turn(metadata={"speaker": "Caroline"})
    assert decode(encode(event)) == event


def test_version_1_turn_is_upcast_on_read() -> None:
    raw = orjson.loads(encode(_turn()))
    raw["schema_version"] = 1
    raw["text"] = raw.pop("content")
    del raw["metadata"]
    upcast = decode(orjson.dumps(raw))
    assert isinstance(upcast, TurnRecorded)
    assert upcast.content == "我喜欢猫" and upcast.schema_version == 2 and upcast.metadata == {}


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"type": "Nope", "schema_version": 1}', "unknown event type"),
        (b'{"type": "TurnRecorded", "schema_version": 7}', "unknown schema version"),
        (b'{"type": "TurnRecorded", "schema_version": 2, "event_id": "x"}', "invalid event"),
    ],
)
def test_bad_payloads_are_rejected_with_a_reason(payload: bytes, reason: str) -> None:
    with pytest.raises(EventDecodeError, match=reason):
        decode(payload)


@pytest.mark.parametrize("bad", ["", "a/b", "has space", "x" * 129, "tab\there"])
def test_invalid_identifiers_are_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        _turn(tenant_id=bad)


def test_same_message_id_gives_the_same_turn_event_id() -> None:
    first = TurnInput(tenant="t", user="u", agent="a", session="s", message_id="m", role="user", content="hi")
    second = first.model_copy(update={"content": "hi again"})
    assert to_turn_event(first, NOW).event_id == to_turn_event(second, NOW).event_id


def test_naive_timestamps_are_taken_as_utc() -> None:
    event = _turn(occurred_at=datetime(2026, 1, 1, 8, 0))
    assert event.occurred_at.tzinfo is not None and event.occurred_at.utcoffset().total_seconds() == 0
