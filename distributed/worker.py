"""Starting a worker: make sure the topics exist, then run the faust app until stopped."""

from __future__ import annotations

import logging
import signal

import faust

from engram.streams.processor import ProcessorContext

from .admin import TopicReport, ensure_topics
from .app import WorkerSettings, build_app
from .topics import all_specs

log = logging.getLogger("engram.distributed.worker")


def die_with_parent() -> None:
    """Linux: get SIGTERM when the parent process dies (replays, tests and benchmarks leave no orphan worker)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        log.debug("PR_SET_PDEATHSIG not available; the worker outlives its parent")


def prepare_topics(settings: WorkerSettings) -> TopicReport:
    """Create (idempotently) the catalogue topics and this role's changelogs."""
    return ensure_topics(settings.bootstrap, all_specs(settings.namespace, settings.role))


def run_worker(settings: WorkerSettings, *, create_topics: bool = True, loglevel: str = "info",
               ctx: ProcessorContext | None = None) -> None:
    """Run one worker process (blocks; SIGTERM/SIGINT stop it gracefully)."""
    if create_topics:
        report = prepare_topics(settings)
        log.info("topics: %d created, %d existing", len(report.created), len(report.existing))
    app = build_app(settings, ctx)
    worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False, quiet=True)
    worker.execute_from_commandline()
