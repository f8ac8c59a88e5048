"""Forget reaches the analytics: the text of forgotten rows is erased for good (SPEC §7).

Rows stay (analysts keep their counts, latencies and the fact that a memory
was forgotten, and when), but every text column of a forgotten row becomes
empty. A ClickHouse `ALTER ... DELETE/UPDATE` would leave the old parts on
disk for minutes (until the cleanup thread removes outdated parts), so each
touched table is rewritten instead: the rows copied into a new table with the
text blanked, the two tables exchanged, the old one dropped `SYNC` (its files
are gone when the call returns). The cost is one copy of each touched table
per erasure.

Scopes: a whole user (forget everything), or some memories (their changes,
the proposals behind them, the turns those came from and the replies to those turns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .clickhouse import ClickHouseProjector

TEXT_COLUMNS: dict[str, dict[str, str]] = {
    "turns": {"content": "''", "metadata": "CAST(map(), 'Map(String, String)')"},
    "memory_proposals": {"topic": "''", "content": "''"},
    "memory_changes": {"reason": "''", "topic": "''", "before_content": "''", "after_content": "''"},
    "summary_snapshots": {**{c: "CAST([], 'Array(String)')" for c in (
        "current_topic", "confirmed_facts", "todo_items", "user_constraints", "open_questions")}, "error": "''"},
    "guard_audit": {"detail": "''"},
    "recalls": {"question": "''"},
    "feedback": {"reason": "''", "remark": "''"},
    "llm_calls": {"error": "''"},
    "dead_letters": {"raw": "''", "reason": "''"},
}
"""Table -> its free-text columns and the empty value each is set to."""

_USER = "tenant_id = {tenant:String} AND user_id = {user:String}"


def blank_rows(projector: ClickHouseProjector, table: str, where: str, params: dict[str, Any]) -> int:
    """Rewrite `table` with the text columns of the rows matching `where` blanked; return those rows."""
    client = projector.client
    hits = int(client.query(f"SELECT count() FROM `{table}` WHERE {where}", parameters=params).result_rows[0][0])
    if not hits:
        return 0
    replace = ", ".join(f"{value} AS `{column}`" for column, value in TEXT_COLUMNS[table].items())
    scratch = f"{table}__erasing"
    client.command(f"DROP TABLE IF EXISTS `{scratch}` SYNC")
    client.command(f"CREATE TABLE `{scratch}` AS `{table}`")
    client.command(f"INSERT INTO `{scratch}` SELECT * FROM `{table}` WHERE NOT ({where})", parameters=params)
    # matched by id in a subquery: in the outer query the REPLACE aliases would shadow the columns `where` reads
    client.command(f"INSERT INTO `{scratch}` SELECT * REPLACE ({replace}) FROM `{table}` "
                   f"WHERE event_id IN (SELECT event_id FROM `{table}` WHERE {where})", parameters=params)
    # counted per event id: a ReplacingMergeTree may merge away duplicate rows of one event at any time
    copied, total = (int(client.command(f"SELECT uniqExact(event_id) FROM `{name}`")) for name in (scratch, table))
    if copied != total:  # never swap in a table that lost events
        client.command(f"DROP TABLE `{scratch}` SYNC")
        raise RuntimeError(f"erasure of {table}: copied {copied} of {total} events; table left unchanged")
    client.command(f"EXCHANGE TABLES `{table}` AND `{scratch}`")
    client.command(f"DROP TABLE `{scratch}` SYNC")
    projector.forget_insert_contexts()
    return hits


def erase_user(projector: ClickHouseProjector, tenant: str, user: str) -> int:
    """Blank every text the analytics hold of one user; return the rows touched."""
    projector.flush()
    params = {"tenant": tenant, "user": user}
    return sum(blank_rows(projector, table, _USER, params) for table in TEXT_COLUMNS)


def erase_memories(projector: ClickHouseProjector, tenant: str, user: str, memory_ids: Sequence[str]) -> int:
    """Blank the changes of some memories, the proposals behind them and their source turns."""
    if not memory_ids:
        return 0
    projector.flush()
    client = projector.client
    params: dict[str, Any] = {"tenant": tenant, "user": user, "ids": list(memory_ids)}
    causes = [r[0] for r in client.query(
        f"SELECT DISTINCT arrayJoin(causation_ids) FROM memory_changes WHERE {_USER} AND memory_id IN {{ids:Array(String)}}",
        parameters=params).result_rows]
    turns = [r[0] for r in client.query(
        f"SELECT DISTINCT arrayJoin(causation_ids) FROM memory_proposals WHERE {_USER} AND event_id IN {{c:Array(String)}}",
        parameters={**params, "c": causes}).result_rows]
    touched = blank_rows(projector, "memory_changes", f"{_USER} AND memory_id IN {{ids:Array(String)}}", params)
    touched += blank_rows(projector, "memory_proposals", f"{_USER} AND event_id IN {{c:Array(String)}}",
                          {**params, "c": causes})
    turns = [*turns, *replies_to(projector, tenant, user, turns)]
    touched += blank_rows(projector, "turns", f"{_USER} AND event_id IN {{t:Array(String)}}", {**params, "t": turns})
    return touched


def replies_to(projector: ClickHouseProjector, tenant: str, user: str, turn_ids: Sequence[str]) -> list[str]:
    """The event ids of the turns that answered these: a turn naming one as its parent, and the first turn of
    the other speaker after each in its session (time order; a turn recorded at the same instant, in the
    same request, counts as after it). An assistant's reply often repeats the fact it answers."""
    if not turn_ids:
        return []
    client = projector.client
    params: dict[str, Any] = {"tenant": tenant, "user": user, "t": list(turn_ids)}
    sources = client.query(f"SELECT DISTINCT event_id, session_id, message_id, role, occurred_at FROM turns "
                           f"WHERE {_USER} AND event_id IN {{t:Array(String)}}", parameters=params).result_rows
    sessions = sorted({row[1] for row in sources})
    rows = client.query(f"SELECT DISTINCT event_id, session_id, message_id, parent_id, role, occurred_at FROM turns "
                        f"WHERE {_USER} AND session_id IN {{s:Array(String)}} ORDER BY occurred_at, event_id",
                        parameters={**params, "s": sessions}).result_rows
    source_ids = {row[0] for row in sources}
    parents = {(row[1], row[2]) for row in sources}
    found = {row[0] for row in rows if (row[1], row[3]) in parents and row[0] not in source_ids}
    for event_id, session, _, role, at in sources:
        later = (r for r in rows if r[1] == session and r[5] >= at and r[0] not in source_ids and r[4] != role)
        reply = next(later, None)
        if reply is not None:
            found.add(reply[0])
    return sorted(found)


_MENTIONS: dict[str, str] = {
    "turns": "positionCaseInsensitiveUTF8(content, {topic:String}) > 0",
    "recalls": "positionCaseInsensitiveUTF8(question, {topic:String}) > 0",
    "summary_snapshots": "arrayExists(x -> positionCaseInsensitiveUTF8(x, {topic:String}) > 0, "
                         "arrayConcat(current_topic, confirmed_facts, todo_items, user_constraints, open_questions))",
    "memory_proposals": "positionCaseInsensitiveUTF8(content, {topic:String}) > 0",
}


def erase_mentions(projector: ClickHouseProjector, tenant: str, user: str, topic: str) -> int:
    """Blank the user's turns, recall questions, summaries and proposals that mention a topic (forget X)."""
    if not topic.strip():
        return 0
    projector.flush()
    params = {"tenant": tenant, "user": user, "topic": topic}
    return sum(blank_rows(projector, table, f"{_USER} AND {where}", params) for table, where in _MENTIONS.items())
