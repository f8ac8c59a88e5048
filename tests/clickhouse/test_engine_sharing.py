"""chDB holds one engine directory per process: a second data folder is hosted, not refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.projections.clickhouse_client import DSN_ENV, chdb_target, open_connection
from engram.runtime.engine import EmbeddedRuntime
from tests.generators import conversations

TURNS = conversations(seed=5, turns=150)


def test_two_data_folders_in_one_process_each_get_their_own_analytics(
        tmp_path: Path, clickhouse_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DSN_ENV, raising=False)
    first = EmbeddedRuntime(tmp_path / "a", analytics="chdb")
    second = EmbeddedRuntime(tmp_path / "b", analytics="chdb")
    try:
        assert first.analytics is not None and second.analytics is not None
        a, b = first.analytics.projector.conn, second.analytics.projector.conn
        assert b.hosted_elsewhere and b.engine_path == a.engine_path and b.database != a.database
        first.ingest(TURNS[:50])
        second.ingest(TURNS)
        assert first.analytics.projector.table_counts()["turns"] == 50
        assert second.analytics.projector.table_counts()["turns"] == len(TURNS)
        hosted_hash = second.analytics.state_hash()
    finally:
        first.close()
        second.close()
    with EmbeddedRuntime(tmp_path / "b", analytics="chdb") as again:  # now at home: caught up from the log
        assert again.analytics is not None and not again.analytics.projector.conn.hosted_elsewhere
        assert again.analytics.state_hash() == hosted_hash


def test_an_engine_opened_outside_the_registry_is_found_and_shared(tmp_path: Path, clickhouse_dsn: str) -> None:
    import clickhouse_connect

    outsider = clickhouse_connect.get_client(dsn=f"chdb://{tmp_path / 'outside'}")
    try:
        conn = open_connection(chdb_target(tmp_path / "mine"))
        try:
            assert conn.hosted_elsewhere and conn.engine_path == str(tmp_path / "outside")
            assert conn.client.command("SELECT currentDatabase()") == conn.database
        finally:
            conn.close()
    finally:
        outsider.close()
