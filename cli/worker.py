"""`engram worker`: run the processors on Kafka with faust-streaming (the distributed runtime)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engram.core.config_file import ConfigError, load_config

from .main import cli

if TYPE_CHECKING:
    from engram.distributed.rebuild import RebuildReport

ROLE_CHOICES = ("all", "processors", "projectors", "extract", "consolidate", "profile", "summarize", "cards")


@cli.command()
@click.option("--role", type=click.Choice(ROLE_CHOICES), default="all", show_default=True,
              help="all = processors + projectors (one command; the projectors run in a child process); "
                   "processors = extraction, consolidation, the profile, summaries and cards (one stage alone: "
                   "extract / consolidate / profile / summarize / cards); projectors = Weaviate and ClickHouse. "
                   "One consumer group per role.")
@click.option("--bootstrap", envvar="ENGRAM_KAFKA_BOOTSTRAP", default="127.0.0.1:9092", show_default=True,
              help="Kafka bootstrap servers (or ENGRAM_KAFKA_BOOTSTRAP).")
@click.option("--prefix", envvar="ENGRAM_KAFKA_PREFIX", default="", help="Topic and group name prefix.")
@click.option("--generation", type=int, envvar="ENGRAM_KAFKA_GENERATION", default=0, show_default=True,
              help="Derived-topic generation (a replay builds the next one).")
@click.option("--weaviate-url", envvar="ENGRAM_WEAVIATE_URL", default="http://127.0.0.1:8080", show_default=True,
              help="Projectors: Weaviate REST endpoint (or ENGRAM_WEAVIATE_URL).")
@click.option("--weaviate-grpc-port", type=int, envvar="ENGRAM_WEAVIATE_GRPC_PORT", default=50051,
              show_default=True)
@click.option("--clickhouse-dsn", envvar="ENGRAM_CLICKHOUSE_DSN", default=None,
              help="Projectors: ClickHouse to write (or ENGRAM_CLICKHOUSE_DSN); default: the data folder's chDB.")
@click.option("--no-analytics", is_flag=True, help="Projectors: write Weaviate only, no ClickHouse.")
@click.option("--batch-size", type=int, default=1000, show_default=True, help="Records per batch at most.")
@click.option("--projector-batch-size", type=int, default=5000, show_default=True,
              help="Projectors: records per batch at most (one Weaviate write per collection and tenant each).")
@click.option("--batch-within", type=float, default=0.05, show_default=True,
              help="Seconds to wait for a batch to fill.")
@click.option("--fetch-max-wait", type=float, default=0.05, show_default=True,
              help="Processors: longest wait of one Kafka fetch, seconds (faust's own default is 1.5 s).")
@click.option("--commit-interval", type=float, default=1.0, show_default=True,
              help="Offset commit interval (s); projectors also flush ClickHouse at this interval.")
@click.option("--governance-interval", type=float, default=3600.0, show_default=True,
              help="Seconds between governance ticks (decay and eviction) per user; 0 turns them off.")
@click.option("--instance-id", default=None,
              help="Static group membership id: a restarted worker gets its partitions back at once.")
@click.option("--no-create-topics", is_flag=True, help="Do not create missing topics on start.")
@click.option("--loglevel", default="info", show_default=True)
@click.option("--die-with-parent", is_flag=True, hidden=True, help="Stop when the parent process exits (Linux).")
@click.pass_context
def worker(ctx: click.Context, role: str, bootstrap: str, prefix: str, generation: int, weaviate_url: str,
           weaviate_grpc_port: int, clickhouse_dsn: str | None, no_analytics: bool, batch_size: int,
           projector_batch_size: int, batch_within: float, fetch_max_wait: float, commit_interval: float,
           governance_interval: float,
           instance_id: str | None, no_create_topics: bool, loglevel: str, die_with_parent: bool) -> None:
    """Run the distributed runtime's workers: processors on faust-streaming, projectors to Weaviate/ClickHouse."""
    try:
        from engram.distributed.app import WorkerSettings
        from engram.distributed.projector import ProjectorSettings
        from engram.distributed.topics import Namespace
        from engram.distributed.projector_process import die_with_parent as arrange_exit
        from engram.distributed.worker import run_worker
        from engram.projections.clickhouse_client import configured_target
        from engram.streams.context import default_context
    except ImportError as exc:
        raise click.ClickException(f"the distributed runtime needs the kafka extra: pip install 'engram[kafka]' ({exc})")
    if die_with_parent:
        arrange_exit()
    data = Path(ctx.obj["data"])
    try:
        context = default_context(load_config(data))
    except ConfigError as exc:
        raise click.ClickException(f"the config file is not valid: {exc}") from None
    os.environ["ENGRAM_DATA"] = str(data)  # the projector child reads the same config file
    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ns = Namespace(prefix, generation)
    processors = None if role == "projectors" else WorkerSettings(
        bootstrap=bootstrap, namespace=ns, role="processors" if role == "all" else role, batch_size=batch_size,
        batch_within=batch_within, fetch_max_wait=fetch_max_wait, commit_interval=commit_interval,
        instance_id=instance_id,
        governance_interval=governance_interval, datadir=data / "faust" / f"{socket.gethostname()}-{os.getpid()}",
    )
    projectors = None if role not in ("all", "projectors") else ProjectorSettings(
        bootstrap=bootstrap, namespace=ns, weaviate_url=weaviate_url, weaviate_grpc_port=weaviate_grpc_port,
        clickhouse=None if no_analytics else configured_target(data, clickhouse_dsn), batch_size=projector_batch_size,
        poll_timeout=batch_within, analytics_interval=commit_interval,
        instance_id=f"{instance_id}-projectors" if instance_id else None)
    run_worker(processors, projectors, create_topics=not no_create_topics, loglevel=loglevel, ctx=context)


def replay_on_kafka() -> None:
    """`engram replay --kafka`: build the next generation from the turns topic and compare state hashes."""
    try:
        from engram.distributed.facade import Endpoints
        from engram.distributed.replay import next_generation, replay
    except ImportError as exc:
        raise click.ClickException(f"the distributed runtime needs the kafka extra: pip install 'engram[kafka]' ({exc})")
    data = Path(click.get_current_context().obj["data"])
    endpoints = Endpoints.from_env(data)
    bootstrap = endpoints.bootstrap
    ns = next_generation(bootstrap, endpoints.namespace.prefix)
    click.echo(f"replaying the turns topic into generation {ns.generation} …", err=True)
    data.mkdir(parents=True, exist_ok=True)
    log_path = data / f"replay-{ns.app_id('processors')}.log"
    click.echo(f"worker log: {log_path}", err=True)
    report = replay(bootstrap, ns, data=data, log_path=log_path)
    click.echo(f"replayed {report.source_records} L0 records into generation {report.generation} "
               f"in {report.seconds:.1f}s\nstate hash before: {report.previous_hash}\nstate hash after:  {report.state_hash}")
    click.echo("identical" if report.previous_hash == report.state_hash else "changed")


def replay_projections(projection: str) -> None:
    """`engram replay --projection …` on the distributed runtime: drop and rebuild from the Kafka topics."""
    try:
        from engram.distributed.facade import DistributedRuntime, Endpoints
        from engram.distributed.rebuild import rebuild_clickhouse, rebuild_weaviate
    except ImportError as exc:
        raise click.ClickException(f"the distributed runtime needs the kafka extra: pip install 'engram[kafka]' ({exc})")
    from .render import progress

    ctx = click.get_current_context()
    endpoints = Endpoints.from_env(ctx.obj["data"])
    bar_on = sys.stderr.isatty()
    if projection in ("current", "weaviate", "all"):
        with DistributedRuntime(endpoints) as runtime, progress(None, "rebuilding weaviate", bar_on) as bar:
            report = rebuild_weaviate(endpoints.bootstrap, endpoints.namespace, runtime.store, runtime.ctx.embedder,
                                      bar.update)
        _report("weaviate", report)
    if projection in ("clickhouse", "all"):
        with progress(None, "rebuilding clickhouse", bar_on) as bar:
            report = rebuild_clickhouse(endpoints.bootstrap, endpoints.namespace, endpoints.clickhouse, bar.update)
        _report(f"clickhouse {endpoints.clickhouse.describe()}", report)


def _report(what: str, report: RebuildReport) -> None:
    click.echo(f"{what}: rebuilt from {report.records} Kafka records\nstate hash before: {report.before}\n"
               f"state hash after:  {report.after}")
    same = report.before == report.after
    click.echo("identical" if same else "changed (the projection had drifted from the topics)")
