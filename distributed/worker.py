"""Starting a worker: make sure the topics exist, then run the faust app until stopped."""

from __future__ import annotations

import logging
import signal
import threading

import faust

from engram.streams.context import default_context
from engram.streams.processor import ProcessorContext

from .admin import TopicReport, ensure_topics
from .keystore import keys_topic_spec
from .app import WorkerSettings, _exit_now, build_app
from .projector import ProjectorLoop, ProjectorSettings
from .topics import Namespace, all_specs, catalogue_specs

log = logging.getLogger("engram.distributed.worker")


def die_with_parent() -> None:
    """Linux: get SIGTERM when the parent process dies (replays, tests and benchmarks leave no orphan worker)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        log.debug("PR_SET_PDEATHSIG not available; the worker outlives its parent")


def prepare_topics(bootstrap: str, ns: Namespace, role: str | None) -> TopicReport:
    """Create (idempotently) the catalogue topics and, for a processor role, its changelogs."""
    specs = all_specs(ns, role) if role else catalogue_specs(ns)
    return ensure_topics(bootstrap, [*specs, keys_topic_spec(ns.prefix)])  # the data keys (engram.distributed.keystore)


def run_worker(processors: WorkerSettings | None, projectors: ProjectorSettings | None = None, *,
               create_topics: bool = True, loglevel: str = "info", ctx: ProcessorContext | None = None) -> None:
    """Run one worker process (blocks; SIGTERM/SIGINT stop it gracefully).

    With both settings, the projector loop runs in a thread beside the faust
    worker; if it fails for good, the whole process stops (a supervisor
    restarts it and both resume from their commits).
    """
    first = processors or projectors
    if first is None:
        raise ValueError("nothing to run: give processor or projector settings")
    if create_topics:
        report = prepare_topics(first.bootstrap, first.namespace, processors.role if processors else None)
        log.info("topics: %d created, %d existing", len(report.created), len(report.existing))
    context = ctx or default_context()
    loop = _projector_loop(projectors, context) if projectors is not None else None
    if processors is None:
        assert loop is not None
        _run_projectors_only(loop)
        return
    thread = None
    if loop is not None:
        thread = threading.Thread(target=loop.run, kwargs={"on_fatal": processors.on_fatal},
                                  name="engram-projectors", daemon=True)
        thread.start()
    try:
        app = build_app(processors, context)
        worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False, quiet=True)
        worker.execute_from_commandline()
    finally:
        if loop is not None and thread is not None:
            loop.stop()
            thread.join(timeout=30)


def _projector_loop(settings: ProjectorSettings, context: ProcessorContext) -> ProjectorLoop:
    try:
        return ProjectorLoop(settings, context.embedder)
    except Exception as exc:  # noqa: BLE001 - one clear line instead of a client traceback
        log.critical("projectors: cannot reach Weaviate at %s (gRPC port %d): %s", settings.weaviate_url,
                     settings.weaviate_grpc_port, exc)
        raise SystemExit(2) from exc


def _run_projectors_only(loop: ProjectorLoop) -> None:
    def stop(*_: object) -> None:
        loop.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    loop.run(on_fatal=_exit_now)
