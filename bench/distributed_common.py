"""Shared pieces of the distributed benchmarks: a namespace with workers, paced producing, lag sampling."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engram.distributed.admin import delete_namespace, ensure_topics
from engram.distributed.producer import TurnProducer
from engram.distributed.readback import Probe, ProgressWatcher
from engram.distributed.replay import worker_command
from engram.distributed.topics import Namespace, all_specs
from engram.schemas.inputs import TurnInput

DEFAULT_BOOTSTRAP = os.environ.get("ENGRAM_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
BENCH_MASTER_KEY = "be7c" * 16
"""The distributed runtime refuses to start without a master key. A benchmark's namespace is thrown away at
its end, so without ENGRAM_MASTER_KEY / ENGRAM_MASTER_KEY_FILE it runs under this throwaway one (inherited by
its worker processes), with encryption on as deployed."""
if not (os.environ.get("ENGRAM_MASTER_KEY") or os.environ.get("ENGRAM_MASTER_KEY_FILE")):
    os.environ["ENGRAM_MASTER_KEY"] = BENCH_MASTER_KEY


def turn_kwargs(turn: TurnInput, trace: str | None = None) -> dict[str, Any]:
    return dict(tenant=turn.tenant, user=turn.user, agent=turn.agent, session=turn.session,
                message_id=turn.message_id, role=turn.role, content=turn.content, ts=turn.ts,
                metadata=turn.metadata, trace_id=trace)


class BenchCluster:
    """A fresh namespace, its topics, N worker processes, and a lag probe; deletes its topics at the end."""

    def __init__(self, bootstrap: str, workers: int, folder: Path, worker_args: Sequence[str] = (),
                 roles: Sequence[str] = ()) -> None:
        """`roles`: one `--role` per worker process (then `workers` is ignored); default: the command's own."""
        self.bootstrap = bootstrap
        self.ns = Namespace(f"bench-{uuid.uuid4().hex[:8]}.")
        ensure_topics(bootstrap, all_specs(self.ns))
        self.folder = folder
        self.roles = list(roles) or [""] * workers
        self.count = len(self.roles)
        self.worker_args = list(worker_args)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.watcher = ProgressWatcher(bootstrap, self.ns)
        self.probe = Probe(bootstrap)
        self.inputs = sorted({topic for topics in self.watcher.stages.values() for topic in topics})

    def start(self) -> None:
        for i, role in enumerate(self.roles):
            chosen = ["--role", role] if role else []
            command = worker_command(self.ns, self.bootstrap, "--instance-id", f"bench-{i}", *chosen,
                                     *self.worker_args, data=self.folder / "data")
            with open(self.folder / f"worker-{i}.log", "ab") as log:
                self.procs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))  # noqa: S603

    def behind(self) -> int:
        """Input records some stage has not finished yet (from the stages' own progress)."""
        self.watcher.poll(quiet=0.05)
        return self.watcher.behind(self.probe.high_watermarks(self.inputs))

    def wait_caught_up(self, timeout: float, poll: float = 0.1) -> float:
        """Seconds until nothing is behind (raises TimeoutError)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.behind() == 0:
                return time.monotonic() - start
            time.sleep(poll)
        raise TimeoutError(f"workers still {self.behind()} records behind after {timeout}s")

    def producer(self) -> TurnProducer:
        return TurnProducer(self.bootstrap, self.ns)

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.watcher.close()
        self.probe.close()
        delete_namespace(self.bootstrap, self.ns.prefix)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (Linux /proc; None if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of a process and its live descendants (a `--role all` worker runs its projectors in a child)."""
    own = cpu_seconds(pid)
    if own is None:
        return None
    return own + sum(tree_cpu_seconds(child) or 0.0 for child in child_pids(pid))


def child_pids(pid: int) -> list[int]:
    """The live children of a process, from every thread's /proc children list (empty once it is gone)."""
    try:
        return [int(p) for task in Path(f"/proc/{pid}/task").iterdir()
                for p in (task / "children").read_text().split()]
    except OSError:
        return []


def load_average() -> float:
    """The 1-minute load average (what else runs on the machine beside the measured processes)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


class WorkerCpu:
    """CPU seconds the cluster's worker processes spent over a window, per 1,000 turns: the figure that
    load on the machine changes least (wall-clock rates fall with load, CPU per turn hardly does)."""

    def __init__(self, cluster: BenchCluster) -> None:
        self.pids = [proc.pid for proc in cluster.procs]
        self.before = self._total()
        self.own_before = self._own()
        self.load_before = load_average()

    def _total(self) -> float:
        return sum(tree_cpu_seconds(pid) or 0.0 for pid in self.pids)

    def _own(self) -> float:
        return sum(cpu_seconds(pid) or 0.0 for pid in self.pids)

    def report(self, turns: int) -> dict[str, float]:
        spent = self._total() - self.before
        own = self._own() - self.own_before
        return {"worker_cpu_seconds": round(spent, 2), "worker_main_cpu_seconds": round(own, 2),
                "worker_children_cpu_seconds": round(spent - own, 2),
                "worker_cpu_s_per_1000_turns": round(1000 * spent / turns, 3) if turns else float("nan"),
                "load_before": self.load_before, "load_after": load_average()}


def paced(count: int, rate: float, action: Callable[[int], None]) -> float:
    """Call `action(i)` for i in range(count) at `rate` calls/s (absolute schedule); returns the seconds taken."""
    start = time.perf_counter()
    for i in range(count):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0.0005:
            time.sleep(delay)
        action(i)
    return time.perf_counter() - start


class Sampler:
    """Samples `behind()` every `interval` seconds in a thread, keeping (elapsed, value) pairs."""

    def __init__(self, probe: Callable[[], int], interval: float = 0.5) -> None:
        self.probe, self.interval = probe, interval
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.samples.append((time.monotonic() - self._start, self.probe()))
            except Exception:  # noqa: BLE001 - a missed sample is not a result
                continue


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
