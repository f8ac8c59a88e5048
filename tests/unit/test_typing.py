"""The source is mypy-clean (type hints everywhere)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["engram", "core", "schemas", "streams", "projections", "recall", "runtime", "access", "llm", "cli", "distributed"]


def test_mypy_finds_no_type_errors() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
         "--no-error-summary", *PACKAGES],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
