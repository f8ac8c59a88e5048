"""Per-hop tracing (`engram.distributed.trace`), without services."""

from __future__ import annotations

from pathlib import Path
from engram.distributed.trace import Tracer, read_hops


def test_a_tracer_writes_one_line_per_traced_key_and_hop(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    tracer = Tracer(str(path), "acme/probe-")
    tracer.hops([b"acme/probe-1", b"acme/probe-1", b"acme/other", None, "acme/probe-2"], "extract.took:t", at=5.0)
    tracer.hop(b"acme/other", "sdk.record")
    tracer.hop("acme/probe-2", "sdk.record", at=4.0)
    hops = read_hops(str(path))
    assert sorted((h["k"], h["h"], h["t"]) for h in hops) == [
        ("acme/probe-1", "extract.took:t", 5.0), ("acme/probe-2", "extract.took:t", 5.0),
        ("acme/probe-2", "sdk.record", 4.0)]


def test_reading_a_trace_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    Tracer(str(path), "").hop("k", "sdk.key", at=1.0)
    with open(path, "ab") as handle:
        handle.write(b'{"k": "k", "h"')
    assert [h["h"] for h in read_hops(str(path))] == ["sdk.key"]
