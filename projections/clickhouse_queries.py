"""The shipped analyst SQL (`deploy/clickhouse/queries/`): find a query, bind its parameters, run it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .clickhouse import QUERIES_DIR

_PLACEHOLDER = re.compile(r"\{(\w+):([^}]+)\}")
_INT = re.compile(r"^U?Int\d+$")
_FLOAT = re.compile(r"^(Float\d+|Decimal.*)$")


@dataclass(frozen=True)
class QueryResult:
    """Column names and rows of one query."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]


def shipped_queries() -> dict[str, Path]:
    """Name (file stem) -> path of every shipped analyst query."""
    return {p.stem: p for p in sorted(QUERIES_DIR.glob("*.sql"))}


def resolve_query(name_or_path: str) -> Path:
    """A SQL file path as given, else a shipped query by name (with or without `.sql`)."""
    given = Path(name_or_path)
    if given.is_file():
        return given
    shipped = shipped_queries().get(given.name.removesuffix(".sql"))
    if shipped is None:
        names = ", ".join(shipped_queries())
        raise FileNotFoundError(f"no SQL file {name_or_path!r} and no shipped query of that name ({names})")
    return shipped


def placeholders(sql: str) -> dict[str, str]:
    """`{name:Type}` query parameters of a statement: name -> ClickHouse type."""
    return {m.group(1): m.group(2).strip() for m in _PLACEHOLDER.finditer(_strip_comments(sql))}


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def parse_params(pairs: Iterable[str]) -> dict[str, str]:
    """`k=v` strings -> dict (the value may contain '=')."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"parameter {pair!r} is not k=v")
        out[key.strip()] = value
    return out


def bind(sql: str, given: Mapping[str, str]) -> dict[str, Any]:
    """The parameters a statement needs, typed from its placeholders; raises on a missing one."""
    needed = placeholders(sql)
    missing = sorted(set(needed) - set(given))
    if missing:
        wanted = ", ".join(f"{n} ({needed[n]})" for n in missing)
        raise KeyError(f"missing query parameter(s): {wanted}; pass --param NAME=VALUE")
    return {name: _typed(given[name], kind) for name, kind in needed.items()}


def _typed(value: str, kind: str) -> Any:
    if _INT.match(kind):
        return int(value)
    if _FLOAT.match(kind):
        return float(value)
    return value


def run_query(client: Any, sql: str, params: Mapping[str, str] | None = None) -> QueryResult:
    """Run one statement with its bound parameters through a clickhouse-connect client."""
    result = client.query(sql.strip().rstrip(";"), parameters=bind(sql, params or {}))
    return QueryResult(tuple(result.column_names), [tuple(r) for r in result.result_rows])
