"""ClickHouse fixtures: a fresh database per test on the session's chDB (or server) DSN."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import DATABASE_ENV, DSN_ENV, ClickHouseTarget


@pytest.fixture()
def ch_target(clickhouse_dsn: str) -> ClickHouseTarget:
    """The session's ClickHouse, in a database no other test uses."""
    return ClickHouseTarget(dsn=clickhouse_dsn, database=f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture()
def projector(ch_target: ClickHouseTarget) -> Iterator[ClickHouseProjector]:
    p = ClickHouseProjector.open(ch_target)
    yield p
    p.client.command(f"DROP DATABASE IF EXISTS `{p.conn.database}`")
    p.close()


@pytest.fixture()
def analytics_env(ch_target: ClickHouseTarget, monkeypatch: pytest.MonkeyPatch) -> ClickHouseTarget:
    """Point the embedded runtime's analytics at the test's database."""
    monkeypatch.setenv(DSN_ENV, ch_target.dsn)
    monkeypatch.setenv(DATABASE_ENV, ch_target.database)
    return ch_target
