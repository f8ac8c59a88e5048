"""Which runtime the CLI drives: `ENGRAM_RUNTIME=embedded` (default) or `distributed`."""

from __future__ import annotations

import os
from collections.abc import Mapping

RUNTIME_ENV = "ENGRAM_RUNTIME"
RUNTIMES = ("embedded", "distributed")


def runtime_kind(env: Mapping[str, str] | None = None) -> str:
    """`embedded` or `distributed`, from ENGRAM_RUNTIME; anything else is an error naming the choices."""
    value = (os.environ if env is None else env).get(RUNTIME_ENV, "").strip().lower() or "embedded"
    if value not in RUNTIMES:
        raise ValueError(f"{RUNTIME_ENV} must be one of {', '.join(RUNTIMES)}, not {value!r}")
    return value
