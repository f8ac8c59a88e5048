"""Starting a worker: make sure the topics exist, then run the faust app until stopped."""

from __future__ import annotations

import logging

import faust

from engram.streams.processor import ProcessorContext

from .admin import TopicReport, ensure_topics
from .app import WorkerSettings, build_app, stages_for
from .topics import all_specs

log = logging.getLogger("engram.distributed.worker")


def prepare_topics(settings: WorkerSettings) -> TopicReport:
    """Create (idempotently) the catalogue topics and this role's changelogs."""
    stateful = tuple(s.processor.name for s in stages_for(settings.role) if s.processor.state_type is not None)
    return ensure_topics(settings.bootstrap, all_specs(settings.namespace, settings.role, stateful))


def run_worker(settings: WorkerSettings, *, create_topics: bool = True, loglevel: str = "info",
               ctx: ProcessorContext | None = None) -> None:
    """Run one worker process (blocks; SIGTERM/SIGINT stop it gracefully)."""
    if create_topics:
        report = prepare_topics(settings)
        log.info("topics: %d created, %d existing", len(report.created), len(report.existing))
    app = build_app(settings, ctx)
    worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False, quiet=True)
    worker.execute_from_commandline()
