"""The projectors of an `engram worker --role all` in a child process of their own.

Beside the faust processors in one interpreter, the projector loop shared one
GIL with them: at a few hundred turns/s the two together need more than one
core's worth of Python, so each waited for the other and recall fell behind
the log. As a child process the projectors get their own interpreter (and a
core, when there is one); the worker is still one command and one pid to stop:

- the child starts first and the worker goes on only once it has reached
  Weaviate (an unreachable Weaviate still stops `engram worker` with exit 2
  and one clear line, before any record is read);
- the child stops (a last commit, as `engram worker --role projectors` on
  SIGTERM) on `STOP_SIGNAL`, which the worker sends when it stops and the
  kernel sends when the worker dies, however it dies (Linux
  `PR_SET_PDEATHSIG`: a SIGKILL of the worker's pid leaves no orphan). It
  ignores SIGINT and SIGTERM: a Ctrl-C or a service manager's SIGTERM reaches
  the whole process group, and the worker stops its child itself once faust
  has stopped (had the child stopped first, the worker would have taken that
  for a failure);
- if the child exits while the worker runs, the worker stops hard
  (`on_fatal`), as when the projector thread failed for good; a supervisor
  restarts both and they resume from their commits.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

from engram.streams.context import default_context
from engram.streams.processor import ProcessorContext

from .app import _exit_now
from .projector import ProjectorLoop, ProjectorSettings

log = logging.getLogger("engram.distributed.worker")

STOP_SIGNAL = signal.SIGUSR1
"""What stops a projector child: only its worker (or the kernel, for a dead worker) sends it."""
READY_TIMEOUT = 120.0
"""Seconds the worker waits for its projector process to reach Weaviate (and the keys topic)."""
STOP_TIMEOUT = 30.0
"""Seconds a stopping projector process gets for its last ClickHouse insert and commit, before SIGKILL."""


def die_with_parent(expected_parent: int | None = None, sig: int = signal.SIGTERM) -> None:
    """Linux: get `sig` when the parent process dies (replays, tests and benchmarks leave no orphan worker).

    With `expected_parent`, a parent that died before the request was made is noticed too (then the
    process is already an orphan and stops at once).
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig))  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        log.debug("PR_SET_PDEATHSIG not available; the worker outlives its parent")
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(0)


def open_projector_loop(settings: ProjectorSettings, context: ProcessorContext) -> ProjectorLoop:
    """The projector loop, connected; an unreachable Weaviate is one clear line and exit 2."""
    try:
        return ProjectorLoop(settings, context.embedder)
    except Exception as exc:  # noqa: BLE001 - one clear line instead of a client traceback
        log.critical("projectors: cannot reach Weaviate at %s (gRPC port %d): %s", settings.weaviate_url,
                     settings.weaviate_grpc_port, exc)
        raise SystemExit(2) from exc


def run_projectors(loop: ProjectorLoop, stop_signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)) -> None:
    """Run the loop in this process until a stop signal (then a last commit); a failure for good exits hard."""
    def stop(*_: object) -> None:
        loop.stop()

    for sig in stop_signals:
        signal.signal(sig, stop)
    loop.run(on_fatal=_exit_now)


def _child_main(settings: ProjectorSettings, loglevel: str, parent: int, ready: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(parent, STOP_SIGNAL)
    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    loop = open_projector_loop(settings, default_context())
    ready.send_bytes(b"ready")
    ready.close()
    run_projectors(loop, (STOP_SIGNAL,))


class ProjectorProcess:
    """Starts, watches and stops the projector child of one worker."""

    def __init__(self, settings: ProjectorSettings, loglevel: str, on_fatal: Callable[[str], None],
                 ready_timeout: float = READY_TIMEOUT) -> None:
        spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked faust or client threads
        # a pipe, not an Event: a worker that dies hard would leave an Event's semaphores to the resource tracker
        self._ready, ready = spawn.Pipe(duplex=False)
        self._process = spawn.Process(target=_child_main, args=(settings, loglevel, os.getpid(), ready),
                                      name="engram-projectors", daemon=True)
        self._on_fatal = on_fatal
        self._ready_timeout = ready_timeout
        self._stopping = threading.Event()

    def start(self) -> None:
        """Start the child and wait until it is connected; SystemExit with its code if it fails to."""
        self._process.start()
        deadline = time.monotonic() + self._ready_timeout
        while not self._ready.poll(0.1):
            if not self._process.is_alive():
                raise SystemExit(self._process.exitcode or 2)  # the child logged why
            if time.monotonic() > deadline:
                self._process.kill()
                log.critical("projectors: not connected after %.0f s; stopping", self._ready_timeout)
                raise SystemExit(2)
        self._ready.close()
        log.info("projectors: running in process %s", self._process.pid)
        threading.Thread(target=self._watch, name="engram-projectors-watch", daemon=True).start()

    def _watch(self) -> None:
        self._process.join()
        if not self._stopping.is_set():
            self._on_fatal(f"projector process {self._process.pid} exited with code {self._process.exitcode}")

    def stop(self) -> None:
        """`STOP_SIGNAL` (a last commit), then SIGKILL after `STOP_TIMEOUT`."""
        self._stopping.set()
        if self._process.pid is None:
            return
        if self._process.is_alive():
            os.kill(self._process.pid, STOP_SIGNAL)
            self._process.join(STOP_TIMEOUT)
        if self._process.is_alive():
            log.warning("projectors: process %s did not stop in %.0f s; killing it", self._process.pid,
                        STOP_TIMEOUT)
            self._process.kill()
            self._process.join(5)
