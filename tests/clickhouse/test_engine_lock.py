"""Processes share one chDB directory under a lock; a waiting process asks the holder to give it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.projections.clickhouse_client import ClickHouseTarget, chdb_target
from engram.projections.clickhouse_shared import exclusive, lock_path, wanted


def test_a_process_that_finds_the_engine_taken_asks_for_it_and_the_ask_ends_when_it_gets_it(tmp_path: Path) -> None:
    target = chdb_target(tmp_path / "data")
    lock = lock_path(target)
    with exclusive(lock, timeout=5):
        assert not wanted(target)
        with pytest.raises(TimeoutError, match="busy"), exclusive(lock, timeout=0.1):
            pass
        assert wanted(target)
    with exclusive(lock, timeout=1):
        assert not wanted(target)


def test_servers_and_in_memory_engines_take_no_lock_and_are_never_wanted() -> None:
    assert lock_path(ClickHouseTarget(dsn="chdb://memory")) is None
    assert not wanted(ClickHouseTarget(dsn="http://127.0.0.1:8123"))
