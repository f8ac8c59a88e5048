"""`engram govern`: one governance pass over the embedded runtime (decay, archive, delete).

The embedded runtime has no timer of its own: run this from cron (or by hand).
It is the edge that reads the clock; the processors take the time from the ticks.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click
import orjson

from engram.runtime.choice import runtime_kind
from engram.runtime.engine import EmbeddedRuntime, GovernReport
from engram.runtime.folder_lock import folder_locked
from engram.runtime_port import DataDirBusy


@click.command()
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S",
                                                              "%Y-%m-%dT%H:%M:%S%z"]),
              default=None, help="Govern as of this time (UTC if no offset); default: now.")
@click.option("--dry-run", "dry_run", is_flag=True, help="Show what would be archived and deleted; change nothing.")
@click.option("--tenant", default=None, help="Govern only this tenant's users.")
@click.option("--user", default=None, help="Govern only this user (in every tenant, unless --tenant is given).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def govern(ctx: click.Context, as_of: datetime | None, dry_run: bool, tenant: str | None, user: str | None,
           as_json: bool) -> None:
    """Decay every user's memories: archive the weak ones, delete archived ones still weak."""
    try:
        kind = runtime_kind()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    if kind == "distributed":
        raise click.ClickException("on the distributed runtime the workers' timer governs "
                                   "(engram worker --governance-interval SECONDS)")
    data = Path(ctx.obj["data"])
    try:
        with folder_locked(data), EmbeddedRuntime(data) as runtime:
            report = runtime.govern(as_of, dry_run=dry_run, tenant=tenant, user=user)
    except DataDirBusy as busy:
        raise click.ClickException(busy.message) from None
    if as_json:
        click.echo(orjson.dumps(report_dict(report), option=orjson.OPT_INDENT_2).decode())
        return
    if not report.dry_run:
        click.echo(f"governed {report.users} user(s) as of {report.as_of.isoformat()}: "
                   f"{report.archived} archived, {report.deleted} deleted")
        return
    for item in report.planned:
        click.echo(f"would {'archive' if item['change'] == 'archived' else 'delete'} {item['memory_id']} "
                   f"({item['tenant']}/{item['user']}): {item['reason']}")
    click.echo(f"dry run, nothing changed: {report.users} user(s) as of {report.as_of.isoformat()}: "
               f"{report.archived} would be archived, {report.deleted} would be deleted")


def report_dict(report: GovernReport) -> dict[str, object]:
    out: dict[str, object] = {"as_of": report.as_of.isoformat(), "users": report.users, "ticks": report.ticks,
                              "archived": report.archived, "deleted": report.deleted}
    if report.dry_run:
        out.update(dry_run=True, planned=report.planned)
    return out


def register(group: click.Group) -> None:
    group.add_command(govern)


__all__ = ["govern", "register"]
