"""Smoke test: ClickHouse (chDB in-process by default) through clickhouse-connect."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from tests.services import import_client

clickhouse_connect = import_client("clickhouse_connect", "clickhouse")

pytestmark = pytest.mark.clickhouse

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def client(clickhouse_dsn: str) -> Iterator[Any]:
    """A client on its own database; closed after the test (chDB allows one engine path per process)."""
    c = clickhouse_connect.get_client(dsn=clickhouse_dsn)
    db = f"engram_smoke_{uuid.uuid4().hex[:10]}"
    c.command(f"CREATE DATABASE {db}")
    c.database = db
    try:
        yield c
    finally:
        c.command(f"DROP DATABASE IF EXISTS {db}")
        c.close()


def test_mergetree_insert_and_aggregate(client: Any) -> None:
    client.command(
        "CREATE TABLE events (tenant_id String, user_id String, event_type LowCardinality(String),"
        " occurred_at DateTime64(3, 'UTC'), score Float64)"
        " ENGINE = MergeTree ORDER BY (tenant_id, user_id, occurred_at)"
    )
    rows = [
        ["t1", f"u{i % 3}", "MemoryAdded" if i % 2 else "RecallServed", T0 + timedelta(minutes=i), i / 10]
        for i in range(12)
    ] + [["t2", "u9", "MemoryAdded", T0, 5.0]]
    client.insert("events", rows, column_names=["tenant_id", "user_id", "event_type", "occurred_at", "score"])

    engine = client.query(
        "SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'events'"
    ).result_rows
    assert engine == [("MergeTree",)]
    result = client.query(
        "SELECT tenant_id, count(), uniqExact(user_id), round(sum(score), 3), countIf(event_type = 'MemoryAdded'),"
        " max(occurred_at) FROM events GROUP BY tenant_id ORDER BY tenant_id"
    ).result_rows
    assert result[0][:5] == ("t1", 12, 3, 6.6, 6)
    assert result[0][5].replace(tzinfo=timezone.utc) == T0 + timedelta(minutes=11)
    assert result[1][:5] == ("t2", 1, 1, 5.0, 1)


def test_replacing_mergetree_keeps_latest_version_per_id(client: Any) -> None:
    """The projection pattern: upsert by id with a version guard; replays change nothing."""
    client.command(
        "CREATE TABLE memories (memory_id UUID, text String, version UInt64)"
        " ENGINE = ReplacingMergeTree(version) ORDER BY memory_id"
    )
    mid = uuid.uuid5(uuid.NAMESPACE_URL, "engram/smoke/memory/1")
    cols = ["memory_id", "text", "version"]
    client.insert("memories", [[mid, "likes tea", 1]], column_names=cols)
    client.insert("memories", [[mid, "likes coffee", 2]], column_names=cols)
    client.insert("memories", [[mid, "likes tea", 1]], column_names=cols)  # a replayed old event
    assert client.query("SELECT text, version FROM memories FINAL").result_rows == [("likes coffee", 2)]
