"""`engram sql` and `engram replay --projection clickhouse` as a user drives them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import DSN_ENV, ClickHouseTarget, chdb_target
from tests.generators import conversations

CLEAN_ENV = {DSN_ENV: None, "ENGRAM_ANALYTICS": None, "ENGRAM_CLICKHOUSE_DATABASE": None}


@pytest.fixture()
def data(tmp_path: Path, clickhouse_dsn: str) -> Path:
    """A data folder with turns ingested while analytics were off (the default)."""
    lines = [json.dumps(t.model_dump(mode="json"), ensure_ascii=False) for t in conversations(seed=3, turns=240)]
    (tmp_path / "turns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner(env=CLEAN_ENV).invoke(cli, ["--data", str(tmp_path / "data"), "ingest",
                                                   str(tmp_path / "turns.jsonl")], obj={})
    assert result.exit_code == 0, result.output
    return tmp_path / "data"


def invoke(data: Path, *args: str, env: dict[str, str | None] | None = None):
    return CliRunner(env={**CLEAN_ENV, **(env or {})}).invoke(cli, ["--data", str(data), *args], obj={})


def test_sql_runs_a_shipped_query_on_the_data_folders_chdb_caught_up_from_the_log(data: Path) -> None:
    out = invoke(data, "sql", "memory_growth_by_type")
    assert out.exit_code == 0, out.output
    header = out.output.splitlines()[0].split()
    assert header == ["tenant_id", "memory_type", "day", "created", "net_active", "active_total"]
    assert re.search(r"\(\d+ rows\)$", out.output.strip())
    assert (data / "analytics").is_dir()


def test_sql_prints_json_and_binds_parameters(data: Path) -> None:
    growth = json.loads(invoke(data, "sql", "memory_growth_by_type", "--json").output)
    assert growth and {"tenant_id", "memory_type", "day", "active_total"} <= set(growth[0])
    projector = ClickHouseProjector.open(chdb_target(data))
    try:
        tenant, user, memory_id = projector.query(
            "SELECT tenant_id, user_id, memory_id FROM memory_changes FINAL LIMIT 1").result_rows[0]
    finally:
        projector.close()
    out = invoke(data, "sql", "deploy/clickhouse/queries/memory_lineage.sql", "--json",
                 "--param", f"tenant={tenant}", "-p", f"user={user}", "-p", f"memory_id={memory_id}")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert rows and rows[0]["change"] == "created" and rows[0]["turn_content"]


def test_sql_says_what_is_missing(data: Path) -> None:
    missing = invoke(data, "sql", "memory_lineage", "-p", "tenant=t1")
    assert missing.exit_code == 2 and "memory_id (String)" in missing.output and "user (String)" in missing.output
    unknown = invoke(data, "sql", "no_such_query")
    assert unknown.exit_code == 2 and "memory_lineage" in unknown.output
    bad = invoke(data, "sql", "memory_growth_by_type", "-p", "oops")
    assert bad.exit_code == 2 and "k=v" in bad.output


def test_sql_with_a_dsn_queries_that_clickhouse_as_it_is(data: Path, clickhouse_dsn: str) -> None:
    target = ClickHouseTarget(dsn=clickhouse_dsn, database="cli_dsn_test")
    projector = ClickHouseProjector.open(target)
    projector.client.command("INSERT INTO recalls (event_id, occurred_at, tenant_id, agent_id, recall_id, "
                             "memory_enabled, memory_injected, retrieval_latency_ms) VALUES "
                             "('e1', '2026-01-01 00:00:00', 't', 'a', 'r1', 1, 0, 10), "
                             "('e2', '2026-01-01 00:00:01', 't', 'a', 'r2', 1, 1, 20)")
    projector.close()
    try:
        out = invoke(data, "sql", "enabled_not_injected_share", "--json", "--database", "cli_dsn_test",
                     env={DSN_ENV: clickhouse_dsn})
        assert out.exit_code == 0, out.output
        assert json.loads(out.output) == [{"tenant_id": "t", "agent_id": "a", "enabled_recalls": 2,
                                           "enabled_not_injected": 1, "share": 0.5}]
    finally:
        projector = ClickHouseProjector.open(target, create=False)
        projector.client.command("DROP DATABASE cli_dsn_test")
        projector.close()


def _hashes(output: str) -> tuple[str, str]:
    before = re.search(r"state hash before: (\w+)", output)
    after = re.search(r"state hash after: +(\w+)", output)
    assert before and after, output
    return before.group(1), after.group(1)


def test_replay_rebuilds_the_analytics_to_the_same_state(data: Path) -> None:
    invoke(data, "sql", "average_relevance")  # analytics caught up incrementally
    projector = ClickHouseProjector.open(chdb_target(data))
    dump_before = projector.dump()
    projector.close()
    out = invoke(data, "replay", "--projection", "clickhouse")
    assert out.exit_code == 0, out.output
    before, after = _hashes(out.output)
    assert before == after and "identical" in out.output
    projector = ClickHouseProjector.open(chdb_target(data))
    try:
        assert projector.dump() == dump_before and projector.state_hash() == after
    finally:
        projector.close()


def test_replay_repairs_drifted_analytics(data: Path) -> None:
    clean = _hashes(invoke(data, "replay", "--projection", "clickhouse").output)[1]
    projector = ClickHouseProjector.open(chdb_target(data))
    projector.client.command("INSERT INTO feedback (event_id, occurred_at, recall_id, rating) "
                             "VALUES ('stray', now64(3), 'r', 2)")
    projector.client.command("ALTER TABLE turns DELETE WHERE 1 SETTINGS mutations_sync = 1")
    projector.close()
    out = invoke(data, "replay", "--projection", "all")
    assert out.exit_code == 0, out.output
    before, after = _hashes(out.output)
    assert before != clean and after == clean and "drifted" in out.output
    assert "state hash before:" in out.output.split("drifted")[1]  # then the current-memory replay ran too
