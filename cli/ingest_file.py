"""Reading a JSONL file of turns: valid lines go in, bad lines are reported by number.

The file (or stdin) is read as bytes and split on LF only, so a CR inside a
line never shifts the numbering (a CR LF line end is fine). Each line is
decoded on its own: a line that is not UTF-8 is an invalid line with its
number, never silently "repaired" with U+FFFD, and the lines after it still go
in. Turns the runtime did not take as sent (message-id conflicts, records too
large for Kafka, clamped times) are reported by line number too.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
from pydantic import ValidationError

from engram.runtime_port import IngestReport, MemoryRuntime
from engram.schemas.inputs import TurnInput

from .render import progress

BOM = b"\xef\xbb\xbf"


@dataclass
class FileIngestResult:
    report: IngestReport
    errors: list[str] = field(default_factory=list)
    """`"<line>: <reason>"` for every line not recorded, in line order."""
    warnings: list[str] = field(default_factory=list)
    """`"<line>: <what changed>"` for lines recorded with a change (a clamped time)."""
    invalid: int = 0
    """Lines that were not a valid turn at all (bad UTF-8, JSON or fields)."""


def parse_line(line: str | bytes) -> TurnInput:
    """One JSONL line to a turn; raises ValueError with a readable reason."""
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from exc
    if not isinstance(raw, dict):
        raise ValueError("expected a JSON object")
    try:
        return TurnInput.model_validate(raw)
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(reasons) from exc


def decode_line(raw: bytes) -> str:
    """A line's bytes (without its LF) as text; raises ValueError naming the first bad byte."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line)") from exc


class _Reader:
    """The turns of a byte stream, remembering each one's line number and every bad line."""

    def __init__(self, stream: IO[bytes], tick: "Tick") -> None:
        self.stream = stream
        self.tick = tick
        self.lines = array("q")
        """Line number of the n-th turn handed to the runtime."""
        self.bad: list[tuple[int, str]] = []

    def __iter__(self) -> Iterator[TurnInput]:
        for number, raw in enumerate(self.stream, start=1):
            self.tick(len(raw))
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM):]
            try:
                text = decode_line(raw.rstrip(b"\n"))
                if not text.strip():
                    continue
                turn = parse_line(text)
            except ValueError as exc:
                self.bad.append((number, str(exc)))
                continue
            self.lines.append(number)
            yield turn

    def result(self, report: IngestReport) -> FileIngestResult:
        errors = list(self.bad)
        warnings: list[tuple[int, str]] = []
        for issue in report.issues:
            entry = (self.lines[issue.index], issue.message)
            (errors if issue.is_error else warnings).append(entry)
        return FileIngestResult(report, _numbered(errors), _numbered(warnings), len(self.bad))


def _numbered(entries: list[tuple[int, str]]) -> list[str]:
    return [f"{number}: {message}" for number, message in sorted(entries, key=lambda e: e[0])]


class Tick:
    def __init__(self, bar: object) -> None:
        self.bar = bar

    def __call__(self, n: int) -> None:
        self.bar.update(n)  # type: ignore[attr-defined]


def ingest_file(runtime: MemoryRuntime | Any, path: str, show_progress: bool, **options: Any) -> FileIngestResult:
    """Stream the file's valid turns into the runtime port's `ingest` (`options`: e.g. `wait`)."""
    if path == "-":
        with progress(None, "reading", show_progress, unit="B") as bar:
            return _ingest(runtime, _Reader(sys.stdin.buffer, Tick(bar)), options)
    with open(path, "rb") as stream, progress(os.path.getsize(path), "ingesting", show_progress, unit="B") as bar:
        return _ingest(runtime, _Reader(stream, Tick(bar)), options)


def _ingest(runtime: MemoryRuntime | Any, reader: _Reader, options: dict[str, Any]) -> FileIngestResult:
    return reader.result(runtime.ingest(iter(reader), **options))
