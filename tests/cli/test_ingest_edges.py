"""`engram ingest` at the edges, run as the installed command: bad bytes, CRs, re-sent ids, odd times."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import TurnRecorded

ENGRAM = str(Path(sys.executable).with_name("engram"))


def _line(number: int, content: str | None = None, **extra: object) -> bytes:
    turn = {"tenant": "t1", "user": f"u{number % 5}", "agent": "a1", "session": "s1", "message_id": f"m{number}",
            "role": "user", "content": content or f"I like hobby number {number} a lot",
            "ts": "2026-03-01T10:00:00Z", **extra}
    return json.dumps(turn, ensure_ascii=False).encode()


def _engram(data: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([ENGRAM, "--data", str(data), *args], input=stdin, capture_output=True, timeout=300)


def _recorded(data: Path) -> dict[str, TurnRecorded]:
    with EmbeddedRuntime(data) as runtime:
        return {e.message_id: e for _, e in runtime.log.scan(types=("TurnRecorded",)) if isinstance(e, TurnRecorded)}


def test_one_invalid_utf8_byte_on_line_2501_of_3000_loses_only_that_line(tmp_path: Path) -> None:
    lines = [_line(n) for n in range(1, 3001)]
    lines[2500] = lines[2500].replace(b"hobby", b"hob\xffby")
    done = _engram(tmp_path / "data", "ingest", "-", stdin=b"\n".join(lines) + b"\n")
    err, out = done.stderr.decode(), done.stdout.decode()
    assert done.returncode == 1, err
    assert "Traceback" not in err
    assert "-:2501: not valid UTF-8 (byte 0xff" in err and err.count("\n") == 1
    assert "ingested 2999 turns (0 already known, 0 conflicting, 1 invalid lines)" in out
    recorded = _recorded(tmp_path / "data")
    assert len(recorded) == 2999 and "m2501" not in recorded and "m3000" in recorded
    assert not any("\ufffd" in e.content for e in recorded.values())


def test_a_file_with_a_bad_byte_a_cr_and_crlf_ends_reports_the_right_line_numbers(tmp_path: Path) -> None:
    lines = [_line(1), _line(2).replace(b"hobby", b"hob\rby"), _line(3, "caf\xe9".encode("latin-1").decode("latin-1")),
             _line(4) + b"\r", b'{"tenant": "t1", "content": "\xc3\x28"}',
             _line(6).replace(b', "user"', b',\r "user"'), _line(7)]
    path = tmp_path / "turns.jsonl"
    path.write_bytes(b"\r\n".join(lines[:1]) + b"\r\n" + b"\n".join(lines[1:]) + b"\n")
    done = _engram(tmp_path / "data", "ingest", str(path))
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err
    reported = sorted(int(row.split(":")[1]) for row in err.splitlines())
    assert reported == [2, 5], err
    assert f"{path}:2: not valid JSON" in err and f"{path}:5: not valid UTF-8 (byte 0xc3" in err
    assert set(_recorded(tmp_path / "data")) == {"m1", "m3", "m4", "m6", "m7"}  # a CR between fields is JSON space


def test_a_resent_message_id_with_other_content_is_a_conflict_with_its_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _engram(data, "ingest", "-", stdin=b"\n".join([_line(1), _line(2)]) + b"\n").returncode == 0
    again = [_line(1), _line(2, "I changed my mind completely"), _line(3), _line(3, "something else entirely")]
    done = _engram(data, "ingest", "-", stdin=b"\n".join(again) + b"\n")
    err, out = done.stderr.decode(), done.stdout.decode()
    assert done.returncode == 1
    assert "-:2: message id 'm2' of session 's1' was already recorded with different content" in err
    assert "-:4: message id 'm3' of session 's1' was sent earlier in this input with different content" in err
    assert "ingested 1 turns (1 already known, 2 conflicting, 0 invalid lines)" in out
    recorded = _recorded(data)
    assert recorded["m2"].content == "I like hobby number 2 a lot" and recorded["m3"].content.startswith("I like")


def test_control_characters_are_stripped_and_a_far_future_time_is_clamped_with_a_warning(tmp_path: Path) -> None:
    before = datetime.now(timezone.utc)
    lines = [_line(1, "I like \u202egreen\u202c tea\x07"), _line(2, ts="2999-01-01T00:00:00Z"),
             _line(3, ts="1970-01-01T00:00:00Z"), _line(4, trace_id="x" * 500)]
    done = _engram(tmp_path / "data", "ingest", "-", stdin=b"\n".join(lines))
    err, out = done.stderr.decode(), done.stdout.decode()
    assert done.returncode == 1, err
    assert "-:2: ts 2999-01-01T00:00:00+00:00 is more than 5 minutes after the ingest time" in err
    assert "(warning)" in err and "-:3: ts:" in err and "before 2000-01-01" in err and "-:4: trace_id" in err
    assert "1 with times clamped" in out
    recorded = _recorded(tmp_path / "data")
    assert recorded["m1"].content == "I like green tea"
    assert before <= recorded["m2"].occurred_at <= datetime.now(timezone.utc)
