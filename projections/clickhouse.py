"""The ClickHouse projector: history, audit and observability rows for every event.

Append-only and idempotent: every row is keyed by its event's deterministic
id in a ReplacingMergeTree, so applying the same events twice (a replay, a
redelivery, a crash between the insert and the log commit) leaves every
FINAL / argMax answer unchanged. Rows are buffered per table and written in
one columnar insert per table per `flush`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from engram.schemas.base import Event

from .clickhouse_client import ClickHouseTarget, Connection, open_connection
from .clickhouse_rows import COLUMNS, Row, rows_for

DDL_DIR = Path(__file__).resolve().parents[1] / "deploy" / "clickhouse"
SCHEMA_FILE = DDL_DIR / "schema.sql"
QUERIES_DIR = DDL_DIR / "queries"
CURSOR_TABLE = "projection_cursor"
_OBJECT = re.compile(r"CREATE\s+(TABLE|VIEW)\s+IF\s+NOT\s+EXISTS\s+(\w+)", re.IGNORECASE)


@lru_cache(maxsize=1)
def schema_statements() -> tuple[str, ...]:
    """The DDL statements of `deploy/clickhouse/schema.sql`, comments stripped."""
    if not SCHEMA_FILE.is_file():
        raise FileNotFoundError(f"ClickHouse DDL not found at {SCHEMA_FILE}")
    return split_statements(SCHEMA_FILE.read_text(encoding="utf-8"))


def split_statements(sql: str) -> tuple[str, ...]:
    """`;`-separated statements with `--` comment lines removed (the DDL has no `;` in strings)."""
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    return tuple(s.strip() for s in "\n".join(lines).split(";") if s.strip())


def schema_objects() -> list[tuple[str, str]]:
    """(kind, name) of every table and view the DDL creates, in DDL order."""
    found = (_OBJECT.search(s) for s in schema_statements())
    return [(m.group(1).upper(), m.group(2)) for m in found if m]


class ClickHouseProjector:
    """Buffers analytics rows per table and flushes them as batched columnar inserts.

    `flush(cursor, source)` also records how far into an event log the tables
    are complete, after the rows (so the cursor never runs ahead of them).
    `max_events` bounds the buffer: past it, `apply` flushes early (rows only).
    """

    def __init__(self, conn: Connection, max_events: int = 50_000) -> None:
        self.conn = conn
        self.client = conn.client
        self.max_events = max_events
        self._buffer: dict[str, list[Row]] = {table: [] for table in COLUMNS}
        self._pending = 0
        self._contexts: dict[str, Any] = {}
        self.rows_written = 0

    @classmethod
    def open(cls, target: ClickHouseTarget, create: bool = True) -> "ClickHouseProjector":
        """Connect; with `create`, also create the database and every table and view (idempotent)."""
        projector = cls(open_connection(target, create_database=create))
        if create:
            projector.create_schema()
        return projector

    # -- schema -------------------------------------------------------------------
    def create_schema(self) -> None:
        for statement in schema_statements():
            self.client.command(statement)

    def drop_schema(self) -> None:
        """Drop every table and view of the DDL (views first): a rebuild starts empty."""
        self._contexts.clear()
        for kind, name in sorted(schema_objects(), key=lambda o: o[0] != "VIEW"):
            self.client.command(f"DROP {kind} IF EXISTS `{name}`")

    # -- writes --------------------------------------------------------------------
    def apply(self, event: Event, position: int = 0) -> None:
        """Buffer the rows of one event (`position`, its log seq, is not stored: rows are keyed by id)."""
        buffer = self._buffer
        for table, row in rows_for(event):
            buffer[table].append(row)
        self._pending += 1
        if self._pending >= self.max_events:
            self.flush()

    def apply_all(self, events: Iterable[Event]) -> None:
        for event in events:
            self.apply(event)

    def flush(self, cursor: int | None = None, source: str = "") -> int:
        """Insert every buffered row (one insert per table), then the cursor if given; return the rows."""
        written = 0
        for table, rows in self._buffer.items():
            if rows:
                self._insert(table, rows)
                written += len(rows)
                self._buffer[table] = []
        self._pending = 0
        if cursor is not None and source:
            self._insert(CURSOR_TABLE, [(source, cursor)], ("source", "seq"))
        self.rows_written += written
        return written

    def _insert(self, table: str, rows: list[Row], columns: tuple[str, ...] | None = None) -> None:
        context = self._contexts.get(table)
        if context is None:
            context = self.client.create_insert_context(table, list(columns or COLUMNS[table]))
            self._contexts[table] = context
        context.data = rows
        self.client.insert(context=context)

    def forget_insert_contexts(self) -> None:
        """Drop the cached insert contexts (a table was rewritten, e.g. by an erasure)."""
        self._contexts.clear()

    def discard(self) -> None:
        """Forget buffered rows (their transaction rolled back)."""
        for table in self._buffer:
            self._buffer[table] = []
        self._pending = 0

    @property
    def pending(self) -> int:
        return self._pending

    # -- reads ---------------------------------------------------------------------
    def cursor(self, source: str) -> int:
        """The log position up to which the tables are complete for `source` (0 if never written)."""
        result = self.client.query(f"SELECT max(seq) FROM {CURSOR_TABLE} WHERE source = {{s:String}}",
                                   parameters={"s": source})
        return int(result.result_rows[0][0] or 0)

    def query(self, sql: str, parameters: Mapping[str, Any] | None = None) -> Any:
        return self.client.query(sql, parameters=dict(parameters or {}))

    def table_counts(self) -> dict[str, int]:
        return {t: int(self.client.command(f"SELECT count() FROM `{t}` FINAL")) for t in COLUMNS}

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every fact table, deduplicated (FINAL) and ordered by event id: the state, row by row."""
        return {t: [tuple(r) for r in self.client.query(
            f"SELECT * FROM `{t}` FINAL ORDER BY event_id").result_rows] for t in sorted(COLUMNS)}

    def state_hash(self) -> str:
        """A hash of every fact table's deduplicated content (not the cursor): equal state, equal hash."""
        digest = hashlib.sha256()
        for table in sorted(COLUMNS):
            count, total = self.client.query(
                f"SELECT count(), sum(cityHash64(*)) FROM `{table}` FINAL").result_rows[0]
            digest.update(f"{table}:{count}:{total};".encode())
        return digest.hexdigest()

    def close(self) -> None:
        self.conn.close()
