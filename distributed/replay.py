"""`engram replay` on Kafka: rebuild a generation's state from the beginning of the turns topic.

The L0 topics (turns, commands) are the source of truth and are shared by all
generations; derived topics and state changelogs belong to one generation.
A replay starts a worker for a new generation (fresh consumer group, empty
tables, offsets from 0), waits until it has caught up, stops it, and returns
the hash of the rebuilt state beside the hash of the generation it replaces.
Equal hashes mean the log and the live state agree; readers then switch to the
new generation (or keep the old one), and its workers carry on.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from engram.schemas import topics as t
from engram.schemas.events import SummarySnapshotted

from .readback import fold_memories, high_watermarks, read_topic, unique_events, wait_idle
from .admin import admin_client, ensure_topics, topic_partitions
from .topics import Namespace, all_specs


@dataclass(frozen=True)
class ReplayReport:
    generation: int
    source_records: int
    seconds: float
    state_hash: str
    previous_hash: str | None


def state_hash(bootstrap: str, ns: Namespace) -> str:
    """Hash of a generation's state: every memory (folded changes) and the latest summary per session."""
    changes = unique_events(read_topic(bootstrap, ns.topic(t.MEMORY_CHANGES)))
    summaries = unique_events(read_topic(bootstrap, ns.topic(t.SUMMARIES)))
    digest = hashlib.sha256()
    for memory_id, record in sorted(fold_memories(changes.values()).items()):
        digest.update(orjson.dumps([memory_id, record.model_dump(mode="json") if record else None]))
    latest: dict[tuple[str, str, str], SummarySnapshotted] = {}
    for event in summaries.values():
        if isinstance(event, SummarySnapshotted) and event.status == "ok":
            key = (event.tenant_id, event.user_id, event.session_id)
            if key not in latest or latest[key].version < event.version:
                latest[key] = event
    for key in sorted(latest):
        digest.update(orjson.dumps([*key, latest[key].model_dump(mode="json")]))
    return digest.hexdigest()


def next_generation(bootstrap: str, prefix: str = "") -> Namespace:
    """The namespace after the highest generation whose memory-changes topic exists."""
    names = topic_partitions(admin_client(bootstrap))
    generation = 0
    while Namespace(prefix, generation + 1).topic(t.MEMORY_CHANGES) in names:
        generation += 1
    return Namespace(prefix, generation + 1)


def worker_command(ns: Namespace, bootstrap: str, *extra: str, data: Path | None = None) -> list[str]:
    """The `engram worker` command line for a namespace (the console script next to this interpreter)."""
    script = Path(sys.executable).with_name("engram")
    launcher = [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from engram.cli.main import main; sys.argv[0] = 'engram'; main()"]
    options = ["--data", str(data)] if data is not None else []
    role = [] if "--role" in extra else ["--role", "processors"]
    return [*launcher, *options, "worker", "--bootstrap", bootstrap, "--prefix", ns.prefix,
            "--generation", str(ns.generation), "--die-with-parent", *role, *extra]


def replay(bootstrap: str, ns: Namespace, *, timeout: float = 3600.0, log_path: Path | None = None,
           compare: bool = True, data: Path | None = None) -> ReplayReport:
    """Build generation `ns.generation` from offset 0 of the L0 topics; return its state hash."""
    ensure_topics(bootstrap, all_specs(ns))
    source_records = sum(high_watermarks(bootstrap, [ns.topic(t.TURNS), ns.topic(t.COMMANDS)]).values())
    started = time.monotonic()
    with open(log_path or os.devnull, "ab") as log:
        command = worker_command(ns, bootstrap, "--governance-interval", "0", data=data)
        worker = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
        try:
            wait_idle(bootstrap, ns, timeout=timeout)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    seconds = time.monotonic() - started
    previous = None
    if compare and ns.generation > 0:
        previous = state_hash(bootstrap, Namespace(ns.prefix, ns.generation - 1))
    return ReplayReport(ns.generation, source_records, seconds, state_hash(bootstrap, ns), previous)
