"""The ingest edge refuses, cleans or reports what it cannot take as sent; nothing is silently lost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from engram.cli.ingest_file import decode_line
from engram.core.text import strip_control
from engram.distributed.facade import DistributedRuntime, Endpoints, _Screening
from engram.runtime.engine import EmbeddedRuntime, IngestReport
from engram.schemas.events import TurnRecorded
from engram.schemas.inputs import (
    MAX_METADATA_ENTRIES, MAX_METADATA_VALUE_CHARS, TurnInput, clamp_warning, screen, to_turn_event,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def _input(**overrides: object) -> TurnInput:
    fields: dict[str, object] = dict(tenant="t", user="u", agent="a", session="s", message_id="m1", role="user",
                                     content="I like green tea", ts=NOW - timedelta(hours=1))
    fields.update(overrides)
    return TurnInput.model_validate(fields)


def _event(**overrides: object) -> TurnRecorded:
    return to_turn_event(_input(**overrides), NOW)


# -- control characters ------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, clean", [
    ("plain text stays", "plain text stays"),
    ("tab\tand\nnew line stay", "tab\tand\nnew line stay"),
    ("bell\x07 nul\x00 esc\x1b[31m", "bell nul esc[31m"),
    ("c1\x85 and del\x7f", "c1 and del"),
    ("crlf\r\nand lone\rcr", "crlf\nand lone\ncr"),
    ("zero\u200bwidth\ufeff bom \u2060", "zerowidth bom "),
    ("bidi \u202eevil\u202c \u2066iso\u2069", "bidi evil iso"),
    ("emoji joiner 👩\u200d💻 and ZWNJ می\u200cخواهم stay", "emoji joiner 👩\u200d💻 and ZWNJ می\u200cخواهم stay"),
    ("我喜欢\u0000猫", "我喜欢猫"),
])
def test_control_and_invisible_formatting_characters_are_stripped(raw: str, clean: str) -> None:
    assert strip_control(raw) == clean


def test_turn_content_is_stored_without_control_characters() -> None:
    assert _input(content="I like \u202egreen\x07 tea").content == "I like green tea"
    assert _event(content="a\x00b").content == "ab"
    with pytest.raises(ValidationError, match="no visible characters"):
        _input(content="\x00\x01\u200b")


def test_metadata_values_are_stripped_too() -> None:
    assert _input(metadata={"source": "web\x1b"}).metadata == {"source": "web"}


# -- size limits -------------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [
    ("trace_id", "x" * 129), ("parent_id", "p" * 129), ("trace_id", "has space"), ("parent_id", "a/b"),
    ("metadata", {f"k{i}": "v" for i in range(MAX_METADATA_ENTRIES + 1)}),
    ("metadata", {"k": "v" * (MAX_METADATA_VALUE_CHARS + 1)}),
    ("metadata", {"k" * 65: "v"}),
    ("metadata", {f"k{i}": "v" * 1000 for i in range(9)}),
    ("metadata", {"\x00": "v"}),
])
def test_trace_parent_and_metadata_have_limits_like_content(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        _input(**{field: value})


def test_values_within_the_limits_are_kept() -> None:
    turn = _input(trace_id="t" * 128, parent_id="p" * 128,
                  metadata={f"k{i}": "v" * 200 for i in range(MAX_METADATA_ENTRIES)})
    assert turn.trace_id == "t" * 128 and len(turn.metadata) == MAX_METADATA_ENTRIES


# -- event time window ---------------------------------------------------------------------------------
def test_a_far_future_ts_is_clamped_to_the_ingest_time_with_a_warning() -> None:
    turn = _input(ts=datetime(2999, 1, 1, tzinfo=timezone.utc))
    event = to_turn_event(turn, NOW)
    assert event.occurred_at == NOW
    warning = clamp_warning(4, turn, event)
    assert warning is not None and warning.index == 4 and warning.kind == "clamped" and not warning.is_error
    assert "2999-01-01" in warning.message


def test_a_ts_within_the_clock_skew_or_in_the_past_is_kept() -> None:
    for ts in (NOW + timedelta(minutes=4), NOW - timedelta(days=3000), datetime(2000, 1, 1, tzinfo=timezone.utc)):
        turn = _input(ts=ts)
        event = to_turn_event(turn, NOW)
        assert event.occurred_at == ts and clamp_warning(0, turn, event) is None


@pytest.mark.parametrize("ts", ["1970-01-01T00:00:00Z", "1999-12-31T23:59:59Z", "0001-01-01T00:00:00"])
def test_a_ts_before_2000_is_refused(ts: str) -> None:
    with pytest.raises(ValidationError, match="before 2000-01-01"):
        _input(ts=ts)


# -- re-sent message ids -------------------------------------------------------------------------------------
def test_screen_tells_duplicates_from_conflicts() -> None:
    first, same, other = _event(), _event(), _event(content="I like coffee")
    recorded = {first.event_id: (first.role, first.content)}
    accepted, issues = screen([(0, same), (1, other)], recorded, {})
    assert accepted == [same]
    assert [(i.index, i.kind, i.message_id) for i in issues] == [(1, "conflict", "m1")]
    assert "already recorded" in issues[0].message


def test_screen_catches_a_conflict_earlier_in_the_same_input_and_a_role_change() -> None:
    a, b, c = _event(), _event(content="I like coffee"), _event(role="assistant")
    accepted, issues = screen([(0, a), (1, b), (2, c), (3, a)], {}, {})
    assert accepted == [a, a]
    assert [i.index for i in issues] == [1, 2] and "earlier in this input" in issues[0].message


def test_embedded_ingest_reports_a_changed_resend_as_a_conflict_and_keeps_the_first(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "d", batch_size=2) as runtime:
        first = runtime.ingest([_input(message_id=f"m{i}", content=f"I like tea number {i}") for i in range(5)],
                               now=NOW)
        assert (first.appended, first.conflicts) == (5, 0)
        again = runtime.ingest([_input(message_id="m1", content="I like tea number 1"),
                                _input(message_id="m2", content="I hate tea"),
                                _input(message_id="m9", content="I like cake"),
                                _input(message_id="m9", content="I like pie")], now=NOW)
        assert (again.received, again.appended, again.duplicates, again.conflicts) == (4, 1, 1, 2)
        assert [(i.index, i.message_id) for i in again.issues] == [(1, "m2"), (3, "m9")]
        contents = {e.message_id: e.content for _, e in runtime.log.scan(types=("TurnRecorded",))
                    if isinstance(e, TurnRecorded)}
        assert contents["m2"] == "I like tea number 2" and contents["m9"] == "I like cake"


def test_embedded_ingest_clamps_a_year_2999_turn_and_warns(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "d") as runtime:
        report = runtime.ingest([_input(ts=datetime(2999, 1, 1, tzinfo=timezone.utc))], now=NOW)
        assert report.appended == 1 and report.rejected == 0
        assert [i.kind for i in report.issues] == ["clamped"]
        (_, event), = runtime.log.scan(types=("TurnRecorded",))
        assert event.occurred_at == NOW


# -- the distributed edge (checks that run before anything is produced) -------------------------------------------
def test_the_distributed_edge_refuses_a_record_too_large_for_kafka() -> None:
    runtime = DistributedRuntime(Endpoints.from_env(".", {}), max_record_bytes=2_000)
    assert runtime._too_large(0, _event(content="short")) is None
    issue = runtime._too_large(7, _event(content="x" * 3_000))
    assert issue is not None and issue.index == 7 and issue.kind == "too_large" and "2,000" in issue.message


def test_the_distributed_screening_counts_projected_resends_as_duplicates_and_produces_them_once() -> None:
    report = IngestReport(runtime="distributed")
    screening = _Screening(report)
    projected, new, changed = _event(message_id="p"), _event(message_id="n"), _event(message_id="p", content="x y")
    for index, event in enumerate((projected, new, changed, new)):
        screening.add(index, event)
    screening.run(lambda chunk: {projected.event_id: ("user", projected.content)})
    assert screening.events == [new]
    assert report.duplicates == 2 and [(i.index, i.kind) for i in report.issues] == [(2, "conflict")]


# -- reading lines -----------------------------------------------------------------------------------------
def test_a_line_is_decoded_strictly_and_a_trailing_cr_is_dropped() -> None:
    assert decode_line(b'{"a": 1}\r') == '{"a": 1}'
    assert decode_line("我".encode()) == "我"
    with pytest.raises(ValueError, match=r"not valid UTF-8 \(byte 0xff at byte 3"):
        decode_line(b'{"\xff"}')
