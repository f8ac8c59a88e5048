"""Where the analytics live, and one clickhouse-connect client to them (chDB or a server).

The same code talks to the in-process chDB engine (`chdb:///abs/path`) and to
a ClickHouse server (`http://host:8123`, `clickhouse://…`, or `host=` options).

chDB holds ONE engine directory per process: opening a second path while a
client on the first is open fails. `open_connection` therefore keeps a
process-wide registry: the first chDB path opened becomes the process's
engine, and a target on another path is hosted in that engine under its own
database (`<database>_<hash of its path>`) instead of failing. Each database
carries its own projection cursor, so a target hosted away from its own path
is simply caught up again from the log the next time it is opened at home.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("engram.clickhouse")

DEFAULT_DATABASE = "engram"
ANALYTICS_DIR = "analytics"
DSN_ENV = "ENGRAM_CLICKHOUSE_DSN"
DATABASE_ENV = "ENGRAM_CLICKHOUSE_DATABASE"
_DB_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,100}$")
_INITIALIZED = re.compile(r"already initialized with path '([^']+)'")


@dataclass(frozen=True)
class ClickHouseTarget:
    """A ClickHouse to write to or query: a DSN (or server options) and a database."""

    dsn: str = ""
    database: str = DEFAULT_DATABASE
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        if not _DB_NAME.match(self.database):
            raise ValueError(f"invalid ClickHouse database name {self.database!r}")

    @property
    def is_chdb(self) -> bool:
        return self.dsn.startswith("chdb:")

    @property
    def chdb_path(self) -> str:
        """The engine location of a chDB target: an absolute directory or ':memory:'."""
        rest = self.dsn[len("chdb:"):].lstrip("/")
        if rest in ("", "memory", ":memory:"):
            return ":memory:"
        return "/" + rest

    def describe(self) -> str:
        where = self.dsn or f"{self.options.get('host', 'localhost')}:{self.options.get('port', 8123)}"
        return f"{where} (database {self.database})"


def chdb_target(data_dir: Path | str, database: str = DEFAULT_DATABASE) -> ClickHouseTarget:
    """The embedded default: a chDB directory inside the data folder."""
    path = (Path(data_dir) / ANALYTICS_DIR).resolve()
    return ClickHouseTarget(dsn=f"chdb://{path}", database=database)


def configured_target(data_dir: Path | str, dsn: str | None = None, database: str | None = None) -> ClickHouseTarget:
    """`dsn` argument, else ENGRAM_CLICKHOUSE_DSN, else the data folder's chDB."""
    db = database or os.environ.get(DATABASE_ENV, "").strip() or DEFAULT_DATABASE
    chosen = dsn or os.environ.get(DSN_ENV, "").strip()
    return ClickHouseTarget(dsn=chosen, database=db) if chosen else chdb_target(data_dir, db)


def guest_database(database: str, path: str) -> str:
    """The database a target gets when hosted in another path's chDB engine."""
    return f"{database}_{hashlib.sha1(path.encode()).hexdigest()[:12]}"


class Connection:
    """An open client on a target's database; `close()` releases the chDB engine slot."""

    def __init__(self, client: Any, target: ClickHouseTarget, database: str, engine_path: str | None) -> None:
        self.client = client
        self.target = target
        self.database = database
        self.engine_path = engine_path
        self._closed = False

    @property
    def hosted_elsewhere(self) -> bool:
        """True when a chDB target lives in another path's engine (one engine per process)."""
        return self.target.is_chdb and self.engine_path != self.target.chdb_path

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close()
        finally:
            if self.engine_path is not None:
                _ENGINE.release()


class _ChdbEngine:
    """The process's one chDB engine path, with a count of the clients this module holds on it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.path: str | None = None
        self.refs = 0

    def open(self, path: str) -> tuple[Any, str]:
        """A client on `path`, or on the engine already open in this process; returns (client, host path)."""
        import clickhouse_connect
        from clickhouse_connect.driver.exceptions import ProgrammingError

        with self.lock:
            host: str = self.path if self.refs and self.path and self.path != path else path
            try:
                client = clickhouse_connect.get_client(dsn=_chdb_dsn(host))
            except ProgrammingError as exc:  # an engine opened outside this registry
                found = _INITIALIZED.search(str(exc))
                if found is None:
                    raise
                host = found.group(1)
                client = clickhouse_connect.get_client(dsn=_chdb_dsn(host))
            self.path = host
            self.refs += 1
            return client, host

    def release(self) -> None:
        with self.lock:
            self.refs = max(0, self.refs - 1)
            if not self.refs:
                self.path = None


_ENGINE = _ChdbEngine()


def _chdb_dsn(path: str) -> str:
    return "chdb://memory" if path == ":memory:" else f"chdb://{path}"


def open_connection(target: ClickHouseTarget, create_database: bool = True) -> Connection:
    """Connect, create the database if needed (and allowed) and make it the client's current one."""
    if target.is_chdb:
        path = target.chdb_path
        if path != ":memory:":
            Path(path).mkdir(parents=True, exist_ok=True)
        client, host = _ENGINE.open(path)
        database = target.database if host == path else guest_database(target.database, path)
        if host != path:
            log.info("chDB engine of this process is %s: hosting %s as database %s", host, path, database)
    else:
        import clickhouse_connect

        client, host = clickhouse_connect.get_client(dsn=target.dsn or None, **target.options), None
        database = target.database
    conn = Connection(client, target, database, host)
    try:
        if create_database:
            client.command(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        client.database = database
    except Exception:
        conn.close()
        raise
    return conn
