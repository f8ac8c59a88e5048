"""Reading a JSONL file of turns: valid lines go in, bad lines are reported by number."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
from pydantic import ValidationError

from engram.runtime.engine import EmbeddedRuntime, IngestReport
from engram.schemas.inputs import TurnInput

from .render import progress


@dataclass
class FileIngestResult:
    report: IngestReport
    errors: list[str] = field(default_factory=list)


def parse_line(line: str) -> TurnInput:
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


def _turns(stream: IO[str], errors: list[str], tick: "Tick") -> Iterator[TurnInput]:
    for number, line in enumerate(stream, start=1):
        tick(len(line.encode()))
        if not line.strip():
            continue
        try:
            yield parse_line(line)
        except ValueError as exc:
            errors.append(f"{number}: {exc}")


class Tick:
    def __init__(self, bar: object) -> None:
        self.bar = bar

    def __call__(self, n: int) -> None:
        self.bar.update(n)  # type: ignore[attr-defined]


def ingest_file(runtime: EmbeddedRuntime | Any, path: str, show_progress: bool, **options: Any) -> FileIngestResult:
    """Stream the file's valid turns into `runtime.ingest` (`options`: e.g. `wait` on the distributed runtime)."""
    errors: list[str] = []
    if path == "-":
        with progress(None, "reading", show_progress, unit="B") as bar:
            report = runtime.ingest(_turns(sys.stdin, errors, Tick(bar)), **options)
        return FileIngestResult(report, errors)
    import os

    with open(path, encoding="utf-8", errors="replace") as stream, \
            progress(os.path.getsize(path), "ingesting", show_progress, unit="B") as bar:
        report = runtime.ingest(_turns(stream, errors, Tick(bar)), **options)
    return FileIngestResult(report, errors)
