"""`engram worker`: run the processors on Kafka with faust-streaming (the distributed runtime)."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import click

from .main import cli

ROLE_CHOICES = ("processors", "extract", "consolidate", "summarize")


@cli.command()
@click.option("--role", type=click.Choice(ROLE_CHOICES), default="processors", show_default=True,
              help="Which stages to run: all processors, or one stage (one consumer group per role).")
@click.option("--bootstrap", envvar="ENGRAM_KAFKA_BOOTSTRAP", default="127.0.0.1:9092", show_default=True,
              help="Kafka bootstrap servers (or ENGRAM_KAFKA_BOOTSTRAP).")
@click.option("--prefix", envvar="ENGRAM_KAFKA_PREFIX", default="", help="Topic and group name prefix.")
@click.option("--generation", type=int, default=0, show_default=True,
              help="Derived-topic generation (a replay builds the next one).")
@click.option("--batch-size", type=int, default=1000, show_default=True, help="Records per batch at most.")
@click.option("--batch-within", type=float, default=0.05, show_default=True,
              help="Seconds to wait for a batch to fill.")
@click.option("--commit-interval", type=float, default=1.0, show_default=True, help="Offset commit interval (s).")
@click.option("--instance-id", default=None,
              help="Static group membership id: a restarted worker gets its partitions back at once.")
@click.option("--no-create-topics", is_flag=True, help="Do not create missing topics on start.")
@click.option("--loglevel", default="info", show_default=True)
@click.option("--die-with-parent", is_flag=True, hidden=True, help="Stop when the parent process exits (Linux).")
@click.pass_context
def worker(ctx: click.Context, role: str, bootstrap: str, prefix: str, generation: int, batch_size: int,
           batch_within: float, commit_interval: float, instance_id: str | None, no_create_topics: bool,
           loglevel: str, die_with_parent: bool) -> None:
    """Run a faust-streaming worker: extraction, consolidation and summaries on Kafka."""
    try:
        from engram.distributed.app import WorkerSettings
        from engram.distributed.topics import Namespace
        from engram.distributed.worker import die_with_parent as arrange_exit, run_worker
    except ImportError as exc:
        raise click.ClickException(f"the distributed runtime needs the kafka extra: pip install 'engram[kafka]' ({exc})")
    if die_with_parent:
        arrange_exit()
    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = WorkerSettings(
        bootstrap=bootstrap, namespace=Namespace(prefix, generation), role=role, batch_size=batch_size,
        batch_within=batch_within, commit_interval=commit_interval, instance_id=instance_id,
        datadir=Path(ctx.obj["data"]) / "faust" / f"{socket.gethostname()}-{os.getpid()}",
    )
    run_worker(settings, create_topics=not no_create_topics, loglevel=loglevel)


def replay_on_kafka() -> None:
    """`engram replay --kafka`: build the next generation from the turns topic and compare state hashes."""
    try:
        from engram.distributed.replay import next_generation, replay
    except ImportError as exc:
        raise click.ClickException(f"the distributed runtime needs the kafka extra: pip install 'engram[kafka]' ({exc})")
    bootstrap = os.environ.get("ENGRAM_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
    ns = next_generation(bootstrap, os.environ.get("ENGRAM_KAFKA_PREFIX", ""))
    click.echo(f"replaying the turns topic into generation {ns.generation} …", err=True)
    data = Path(click.get_current_context().obj["data"])
    data.mkdir(parents=True, exist_ok=True)
    log_path = data / f"replay-{ns.app_id('processors')}.log"
    click.echo(f"worker log: {log_path}", err=True)
    report = replay(bootstrap, ns, data=data, log_path=log_path)
    click.echo(f"replayed {report.source_records} L0 records into generation {report.generation} "
               f"in {report.seconds:.1f}s\nstate hash before: {report.previous_hash}\nstate hash after:  {report.state_hash}")
    click.echo("identical" if report.previous_hash == report.state_hash else "changed")
