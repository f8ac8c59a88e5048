"""The DDL in deploy/clickhouse/ is what the projector writes, and is built for dedup and the queries."""

from __future__ import annotations

from engram.projections.clickhouse import ClickHouseProjector, schema_objects
from engram.projections.clickhouse_rows import COLUMNS, ROW_BUILDERS
from engram.schemas.events import EVENT_TYPES, RecallServed, LLMCallRecorded
from engram.schemas.base import Event

ENVELOPE = set(Event.model_fields)


def _tables(projector: ClickHouseProjector) -> dict[str, tuple[str, str, str]]:
    rows = projector.client.query(
        "SELECT name, engine, partition_key, sorting_key FROM system.tables WHERE database = currentDatabase()"
    ).result_rows
    return {name: (engine, part, key) for name, engine, part, key in rows}


def test_every_fact_table_of_the_ddl_has_the_projectors_columns_in_order(projector: ClickHouseProjector) -> None:
    for table, columns in COLUMNS.items():
        described = projector.client.query(f"DESCRIBE TABLE `{table}`").result_rows
        assert tuple(r[0] for r in described) == columns, table


def test_fact_tables_replace_by_event_id_and_are_partitioned_by_month(projector: ClickHouseProjector) -> None:
    tables = _tables(projector)
    for table in COLUMNS:
        engine, partition, key = tables[table]
        assert engine == "ReplacingMergeTree", table
        assert partition == "toYYYYMM(occurred_at)", table
        assert key.split(", ")[-1] == "event_id", table


def test_the_ddl_creates_the_listed_tables_and_views(projector: ClickHouseProjector) -> None:
    names = {name for _, name in schema_objects()}
    assert set(COLUMNS) | {"projection_cursor", "recall_observations", "merge_decisions"} == names
    assert set(_tables(projector)) == names
    wanted = {"turns", "skipped_turns", "memory_changes", "summary_snapshots", "guard_audit", "recalls",
              "feedback", "llm_calls", "dead_letters", "memory_proposals"}
    assert wanted <= set(COLUMNS)


def test_every_recall_and_llm_call_field_has_a_column() -> None:
    for model, table in ((RecallServed, "recalls"), (LLMCallRecorded, "llm_calls")):
        fields = set(model.model_fields) - ENVELOPE - {"type", "schema_version"}
        assert fields <= set(COLUMNS[table]), fields - set(COLUMNS[table])


def test_every_row_builder_is_for_a_known_event_type() -> None:
    assert set(ROW_BUILDERS) <= set(EVENT_TYPES)


def test_drop_schema_then_create_schema_gives_empty_tables(projector: ClickHouseProjector) -> None:
    projector.drop_schema()
    assert not _tables(projector)
    projector.create_schema()
    assert all(n == 0 for n in projector.table_counts().values())
