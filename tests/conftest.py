"""Shared fixtures: runtime drivers, and the real-service fixtures from tests/services/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.drivers import Driver, EmbeddedDriver

pytest_plugins = ["tests.services"]

RUNTIMES = ["embedded"]


@pytest.fixture(params=RUNTIMES)
def engram(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Driver]:
    """A fresh Engram on each runtime the golden cases must pass on."""
    driver = EmbeddedDriver(tmp_path / "engram")
    yield driver
    driver.close()
