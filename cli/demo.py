"""`engram demo`: a guided tour on a bundled Chinese + English sample."""

from __future__ import annotations

from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import click

from engram.recall.service import RecallRequest
from engram.runtime.engine import EmbeddedRuntime

from . import render
from .controls import locked_folder
from .ingest_file import ingest_file

QUESTIONS = (
    ("xiaoming", "coach", "s-zh-1", "推荐点java知识，今晚学什么？"),
    ("alice", "helper", "s-en-1", "Which language should the new payment service use?"),
)


def _heading(text: str) -> None:
    click.secho(f"\n== {text} ==", bold=True)


def run_demo(data: Path) -> None:
    sample = resources.files("engram.cli").joinpath("demo.jsonl")
    click.echo(f"data folder: {data}")
    with locked_folder(data), resources.as_file(sample) as path, EmbeddedRuntime(data) as runtime:
        _heading(f"ingest {path.name}")
        click.echo(render.ingest_summary(ingest_file(runtime, str(path), show_progress=False)))
        for user, agent, session, question in QUESTIONS:
            _heading(f"memories of demo/{user}")
            click.echo(render.memory_table(runtime.store.list_memories("demo", user)))
            snapshot = runtime.store.latest_summary("demo", user, session)
            _heading(f"summary of {session}")
            click.echo(render.summary_text(snapshot) if snapshot else "(no summary yet)")
            _heading(f"recall for {question!r}")
            request = RecallRequest("demo", user, agent, session, question, datetime(2026, 11, 3, tzinfo=timezone.utc))
            click.echo(render.recall_text(runtime.recall(request)))
    click.echo(f"\nTry: engram --data {data} memories --tenant demo --user alice --json")
