"""Governance in the embedded runtime: `govern` ticks every known user; archive, then delete, then rebuild."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import click
import orjson
from click.testing import CliRunner

from engram.cli.govern import register
from engram.core.config import DEFAULT_CONFIG
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import GovernanceTick, MemoryChanged
from engram.streams.govern import protected, strength
from tests.generators import T0, conversations

YEARS_LATER = T0 + timedelta(days=3 * 365)


def _decay_changes(runtime: EmbeddedRuntime) -> list[MemoryChanged]:
    return [e for _, e in runtime.log.scan(types=("MemoryChanged",))
            if isinstance(e, MemoryChanged) and e.relation == "decay"]


def _all_memories(runtime: EmbeddedRuntime, users: list[tuple[str, str]], status: str) -> list:  # type: ignore[type-arg]
    return [m for tenant, user in users for m in runtime.store.list_memories(tenant, user, (status,))]


def test_govern_archives_weak_memories_of_every_user_then_deletes_them_later(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest(conversations(seed=5, turns=300), now=T0)
        users = runtime.known_users()
        assert len(users) > 1
        report = runtime.govern(YEARS_LATER)
        assert report.users == report.ticks == len(users) and report.archived > 0 and report.deleted == 0
        ticks = [e for _, e in runtime.log.scan(types=("GovernanceTick",)) if isinstance(e, GovernanceTick)]
        assert sorted((t.tenant_id, t.user_id) for t in ticks) == users and {t.as_of for t in ticks} == {YEARS_LATER}
        archived = _all_memories(runtime, users, "archived")
        assert len(archived) == report.archived
        cfg = DEFAULT_CONFIG.governance
        assert all(protected(m, cfg) or strength(m, YEARS_LATER, cfg) >= cfg.evict_below_strength
                   for m in _all_memories(runtime, users, "active"))
        assert all(not protected(m, cfg) and strength(m, YEARS_LATER, cfg) < cfg.evict_below_strength
                   for m in archived)

        again = runtime.govern(YEARS_LATER)
        assert (again.ticks, again.archived, again.deleted) == (0, 0, 0)

        later = runtime.govern(YEARS_LATER + timedelta(hours=1))
        assert (later.archived, later.deleted) == (0, report.archived)
        assert _all_memories(runtime, users, "archived") == []
        before = runtime.store.state_hash()
        assert runtime.replay() == before


def test_govern_without_a_time_uses_the_clock_and_spares_fresh_memories(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest([t.model_copy(update={"ts": None}) for t in conversations(seed=6, turns=120)])  # stamped now
        report = runtime.govern()
        assert report.users > 0 and report.archived == 0 == report.deleted
        assert not _decay_changes(runtime)


def test_the_govern_command_reports_what_it_did(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "data") as runtime:
        runtime.ingest(conversations(seed=5, turns=300), now=T0)
    group = click.Group()
    register(group)
    result = CliRunner().invoke(group, ["govern", "--as-of", YEARS_LATER.strftime("%Y-%m-%dT%H:%M:%S"), "--json"],
                                obj={"data": tmp_path / "data"})
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.output)
    assert report["as_of"] == YEARS_LATER.isoformat() and report["archived"] > 0 and report["users"] > 1


def test_a_dry_run_plans_exactly_what_govern_then_does_and_changes_nothing(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest(conversations(seed=5, turns=300), now=T0)
        seq, before = runtime.log.last_seq(), runtime.store.state_hash()
        plan = runtime.govern(YEARS_LATER, dry_run=True)
        assert plan.dry_run and plan.ticks == 0 and plan.archived > 0 and plan.deleted == 0
        assert (runtime.log.last_seq(), runtime.store.state_hash()) == (seq, before)
        assert not _decay_changes(runtime)
        done = runtime.govern(YEARS_LATER)
        assert (done.archived, done.deleted) == (plan.archived, plan.deleted)
        assert sorted(p["memory_id"] for p in plan.planned) == sorted(e.memory_id for e in _decay_changes(runtime))
        later = runtime.govern(YEARS_LATER + timedelta(hours=1), dry_run=True)
        assert (later.archived, later.deleted) == (0, done.archived)
        assert {p["change"] for p in later.planned} == {"deleted"}


def test_govern_scoped_to_one_user_touches_only_that_user(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest(conversations(seed=5, turns=300), now=T0)
        users = runtime.known_users()
        tenant, user = next(u for u in users if runtime.govern(YEARS_LATER, dry_run=True, tenant=u[0],
                                                                 user=u[1]).archived > 0)
        report = runtime.govern(YEARS_LATER, tenant=tenant, user=user)
        assert report.users == report.ticks == 1 and report.archived > 0
        assert {(e.tenant_id, e.user_id) for e in _decay_changes(runtime)} == {(tenant, user)}
        others = [u for u in users if u != (tenant, user)]
        assert _all_memories(runtime, others, "archived") == []
        assert runtime.govern(YEARS_LATER, tenant="no-such-tenant").users == 0


def test_the_govern_command_dry_run_lists_and_keeps_everything(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "data") as runtime:
        runtime.ingest(conversations(seed=5, turns=300), now=T0)
        tenant, user = runtime.known_users()[0]
    group = click.Group()
    register(group)
    stamp = YEARS_LATER.strftime("%Y-%m-%dT%H:%M:%S")
    dry = CliRunner().invoke(group, ["govern", "--as-of", stamp, "--dry-run"], obj={"data": tmp_path / "data"})
    assert dry.exit_code == 0, dry.output
    assert "would archive" in dry.output and "nothing changed" in dry.output
    scoped = CliRunner().invoke(group, ["govern", "--as-of", stamp, "--dry-run", "--json", "--tenant", tenant,
                                        "--user", user], obj={"data": tmp_path / "data"})
    assert scoped.exit_code == 0, scoped.output
    plan = orjson.loads(scoped.output)
    assert plan["dry_run"] and plan["users"] == 1
    assert {(p["tenant"], p["user"]) for p in plan["planned"]} <= {(tenant, user)}
    with EmbeddedRuntime(tmp_path / "data") as runtime:
        assert not _decay_changes(runtime)
