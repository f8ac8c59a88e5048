"""Starting a worker: make sure the topics exist, then run the faust app until stopped."""

from __future__ import annotations

import logging

import faust

from engram.streams.context import default_context
from engram.streams.processor import ProcessorContext

from .admin import TopicReport, ensure_topics
from .keystore import keys_topic_spec
from .app import WorkerSettings, build_app
from .projector import ProjectorSettings
from .projector_process import ProjectorProcess, open_projector_loop, run_projectors
from .topics import Namespace, all_specs, catalogue_specs

log = logging.getLogger("engram.distributed.worker")


def prepare_topics(bootstrap: str, ns: Namespace, role: str | None) -> TopicReport:
    """Create (idempotently) the catalogue topics and, for a processor role, its changelogs."""
    specs = all_specs(ns, role) if role else catalogue_specs(ns)
    return ensure_topics(bootstrap, [*specs, keys_topic_spec(ns.prefix)])  # the data keys (engram.distributed.keystore)


def run_worker(processors: WorkerSettings | None, projectors: ProjectorSettings | None = None, *,
               create_topics: bool = True, loglevel: str = "info", ctx: ProcessorContext | None = None) -> None:
    """Run one worker process (blocks; SIGTERM/SIGINT stop it gracefully).

    With both settings, the projectors run in a child process of their own
    (`ProjectorProcess`): beside faust in one interpreter they shared one GIL,
    and the two together need more than one core's worth of Python at a few
    hundred turns/s. If either side fails for good, the whole worker stops (a
    supervisor restarts it and both resume from their commits).
    """
    first = processors or projectors
    if first is None:
        raise ValueError("nothing to run: give processor or projector settings")
    if create_topics:
        report = prepare_topics(first.bootstrap, first.namespace, processors.role if processors else None)
        log.info("topics: %d created, %d existing", len(report.created), len(report.existing))
    if processors is None:
        assert projectors is not None
        run_projectors(open_projector_loop(projectors, ctx or default_context()))
        return
    child = ProjectorProcess(projectors, loglevel, processors.on_fatal) if projectors is not None else None
    if child is not None:
        child.start()
    try:
        app = build_app(processors, ctx or default_context())
        worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False, quiet=True)
        worker.execute_from_commandline()
    finally:
        if child is not None:
            child.stop()
