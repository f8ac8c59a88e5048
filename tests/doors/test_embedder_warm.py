"""With ENGRAM_EMBEDDER=use the model is loaded and warmed when the runtime opens, not by the first recall
(whose deadline the load would eat)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from engram import Memory
memory = Memory(sys.argv[1])
embedder = memory.runtime.embedder
print(json.dumps({"kind": type(embedder).__name__, "loaded": bool(getattr(embedder, "loaded", False))}))
memory.close()
"""


def test_opening_the_runtime_loads_the_semantic_model(tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_EMBEDDER": "use"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "data")], env=env, capture_output=True,
                          text=True, timeout=300, check=False)  # a fresh process: no model loaded before
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"kind": "USEEmbedder", "loaded": True}
