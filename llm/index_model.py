"""Never two embedding models in one index: record the model, re-embed by replay on a change.

The current-memory projection keeps one vector per memory, made by the
runtime's embedder. `ensure_index_model(runtime)` compares the embedder's
`model_id` with the one the projection was built with (recorded in
`embedding-model.json` in the data folder). On a change it drops the
projection and replays the log: every vector is made again by the new model,
none of the old ones survives. Consolidation persists no vectors (its tables
are rebuilt in memory from the current embedder), and the `MemoryChanged`
decisions already in the log stay as they were made: history is not
rewritten, only the index is rebuilt.

Call it right after opening a runtime whose embedder may have changed
(`ENGRAM_LLM_MODEL_EMBED` set, changed or unset), before any recall.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

MODEL_FILE = "embedding-model.json"


class _Embedder(Protocol):
    model_id: str
    dimensions: int


class _Ctx(Protocol):
    @property
    def embedder(self) -> _Embedder: ...


class _Log(Protocol):
    def count(self, types: tuple[str, ...] = ()) -> int: ...


class IndexedRuntime(Protocol):
    """What this check needs of a runtime (the embedded one has it)."""

    data_dir: Path
    log: _Log

    @property
    def ctx(self) -> _Ctx: ...

    def replay(self) -> str: ...


def recorded_model(data_dir: Path) -> str | None:
    """The embedding model the projection in `data_dir` was built with, if recorded."""
    try:
        return str(json.loads((data_dir / MODEL_FILE).read_text(encoding="utf-8"))["model_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ensure_index_model(runtime: IndexedRuntime) -> bool:
    """Re-embed by replay if the embedder changed (or is unknown for existing data); True if replayed."""
    embedder = runtime.ctx.embedder
    recorded = recorded_model(runtime.data_dir)
    if recorded == embedder.model_id:
        return False
    replay = recorded is not None or runtime.log.count(("MemoryChanged",)) > 0
    if replay:
        runtime.replay()
    record = {"model_id": embedder.model_id, "dimensions": embedder.dimensions, "previous": recorded}
    (runtime.data_dir / MODEL_FILE).write_text(json.dumps(record) + "\n", encoding="utf-8")
    return replay
