"""The runtime port: one choice from ENGRAM_RUNTIME, both adapters implement it, no cross-runtime imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engram.runtime_port import MemoryRuntime, RuntimeUnavailable, open_runtime

ROOT = Path(__file__).resolve().parents[2]
PORT_METHODS = ("ingest", "submit", "record", "recall", "read", "event", "lineage", "replay", "govern", "exclusive",
                "counters", "ping", "close")


def _imports(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return names


def test_the_distributed_runtime_does_not_import_the_embedded_one() -> None:
    embedded = sorted(n for n in _imports(ROOT / "distributed") if n == "engram.runtime" or
                      n.startswith("engram.runtime."))
    assert embedded == []


def test_old_import_paths_still_work() -> None:
    from engram.access.backend import EmbeddedBackend as A, MemoryBackend
    from engram.runtime.context import default_context as old
    from engram.runtime.engine import GovernReport as G, IngestReport as I
    from engram.runtime.backend import EmbeddedBackend as B
    from engram.runtime_port import GovernReport, IngestReport
    from engram.streams.context import default_context

    assert (A, old, I, G, MemoryBackend) == (B, default_context, IngestReport, GovernReport, MemoryRuntime)


def test_both_adapters_offer_every_port_method() -> None:
    from engram.distributed.backend import DistributedBackend
    from engram.runtime.backend import EmbeddedBackend

    for adapter in (EmbeddedBackend, DistributedBackend):
        missing = [m for m in PORT_METHODS if not callable(getattr(adapter, m, None))]
        assert missing == [], adapter


def test_the_runtime_is_chosen_from_engram_runtime(tmp_path: Path) -> None:
    with pytest.raises(RuntimeUnavailable, match="must be one of embedded, distributed"):
        open_runtime(tmp_path, {"ENGRAM_RUNTIME": "cloud"})
    runtime = open_runtime(tmp_path / "d", {})
    try:
        assert runtime.name == "embedded"
    finally:
        runtime.close()
    distributed = open_runtime(tmp_path / "e", {"ENGRAM_RUNTIME": "distributed",
                                                 "ENGRAM_KAFKA_BOOTSTRAP": "127.0.0.1:1"})
    try:
        assert distributed.name == "distributed"  # connections open on first use
    finally:
        distributed.close()
