"""The probes of `bench.recall_freshness`: one user's fact-bearing turn each, and the threads that poll recall.

A probe is a fresh user's single turn with a unique, extractable fact ("I love <word>." / "我喜欢<词>");
`Pollers` run the real `RecallService.recall` on the Weaviate collections the CLI reads for every pending
probe until the recalled memory section contains the word (or the probe's timeout passes).
"""

from __future__ import annotations

import argparse
import heapq
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from engram.core.crypto import FieldCipher
from engram.distributed.producer import TurnProducer
from engram.projections.weaviate_store import WeaviateStore
from engram.recall.freshness import Freshness
from engram.recall.service import RecallRequest, RecallService
from engram.streams.processor import ProcessorContext

BACKOFF = 0.05
PROBE_TENANT = "tenant-0"  # a tenant the background traffic writes too: probes search a busy shard
SYLLABLES = ("ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu "
             "ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu").split()
HAN = "梅兰竹菊松柏桃李杏桂荷莲枫桐橙柚榴椰栗枣茶墨砚琴棋诗画舟帆峰溪泉湖岛霞虹雪霜云星月"


@dataclass
class ProbeTurn:
    """One probe: a fresh user's single turn with a unique fact, and when recall first returned it."""

    user: str
    word: str
    content: str
    question: str
    timeout: float = 10.0
    sent: float = 0.0
    seen: float | None = None
    stored: float | None = None
    expired: bool = False
    polls: int = 0

    @property
    def latency_ms(self) -> float:
        return ((self.seen or 0.0) - self.sent) * 1000


def make_probe(rng: random.Random, run: str, index: int) -> ProbeTurn:
    """Alternately English and Chinese; the word is unique to the run (the rule extractor turns it into a preference)."""
    user = f"probe-{run}-{index:05d}"
    if index % 2:
        word = "".join(rng.choice(HAN) for _ in range(6))
        return ProbeTurn(user, word, f"我喜欢{word}", f"我喜欢什么？{word}")
    word = "".join(rng.choice(SYLLABLES) for _ in range(5))
    return ProbeTurn(user, word, f"I love {word}.", f"What do I love? {word}")


def introduce(producer: TurnProducer, probe: ProbeTurn) -> bool:
    """A first, fact-free turn of the probe's user (`--known-users`): key and state exist before the probe."""
    return producer.record_turn(tenant=PROBE_TENANT, user=probe.user, agent="agent-probe",
                                session=f"{probe.user}-s0", message_id=f"{probe.user}-m0", role="user",
                                content="Hi there.", ts=datetime.now(timezone.utc))


def send_probe(producer: TurnProducer, probe: ProbeTurn) -> bool:
    probe.sent = time.perf_counter()
    return producer.record_turn(tenant=PROBE_TENANT, user=probe.user, agent="agent-probe",
                                session=f"{probe.user}-s1", message_id=f"{probe.user}-m1", role="user",
                                content=probe.content, ts=datetime.now(timezone.utc))


@dataclass(order=True)
class _Due:
    at: float
    seq: int
    probe: ProbeTurn = field(compare=False)


class Pollers:
    """`len(services)` threads poll the pending probes, each probe at most every `interval` s, oldest due first.

    With `gate`, a poll first lists the probe user's memories (one Weaviate
    query) and runs the real recall only once the memory is stored, then on
    every poll until the recall returns it: the same figure at a fraction of
    the polling load (the pollers share the machine with what they measure).
    """

    def __init__(self, services: list[RecallService], interval: float, gate: bool = True,
                 check: Callable[[str, str], Freshness] | None = None) -> None:
        self.interval, self.gate, self.check = interval, gate, check
        self.checks: list[tuple[str, float, Freshness, bool, str]] = []
        """With `check`: (user, wall-clock time the check began, what it said, whether the read after it found
        the probe's memory, which read: "stored" for `list_memories`, "recall"), one per read: a recall that says it is current must hold a turn acknowledged
        before the check began."""
        self.recall_ms: list[float] = []
        self.recalls = self.errors = 0
        self.deadline_exceeded = 0
        self._heap: list[_Due] = []
        self._seq = self._busy = 0
        self._cond = threading.Condition()
        self._stop = False
        self._services = services
        self._threads = [threading.Thread(target=self._run, args=(s,), daemon=True) for s in services]
        for thread in self._threads:
            thread.start()

    def add(self, probe: ProbeTurn) -> None:
        with self._cond:
            self._push(probe, time.perf_counter())

    def pending(self) -> int:
        """Probes waiting for their next poll or being polled right now."""
        with self._cond:
            return len(self._heap) + self._busy

    def drain(self, limit: float) -> None:
        """Wait until no probe is pending (seen or expired), at most `limit` seconds."""
        end = time.monotonic() + limit
        while self.pending() and time.monotonic() < end:
            time.sleep(0.05)

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=10)

    def _push(self, probe: ProbeTurn, at: float) -> None:
        self._seq += 1
        heapq.heappush(self._heap, _Due(at, self._seq, probe))
        self._cond.notify()

    def _next(self) -> ProbeTurn | None:
        with self._cond:
            while not self._stop:
                wait = self._heap[0].at - time.perf_counter() if self._heap else 0.5
                if self._heap and wait <= 0:
                    self._busy += 1
                    return heapq.heappop(self._heap).probe
                self._cond.wait(timeout=wait)
            return None

    def _run(self, service: RecallService) -> None:
        while (probe := self._next()) is not None:
            seen = self._poll(service, probe)
            now = time.perf_counter()
            with self._cond:
                self._busy -= 1
                if seen:
                    probe.seen = now
                elif now - probe.sent > probe.timeout:
                    probe.expired = True
                else:  # resolution: the larger of `interval` and 5 % of the probe's age (bounded polling load)
                    self._push(probe, now + max(self.interval, BACKOFF * (now - probe.sent)))

    def _poll(self, service: RecallService, probe: ProbeTurn) -> bool:
        """With the gate, a one-query look at the user's memories first; the real recall once the memory is there."""
        probe.polls += 1
        try:
            began, fresh = time.time(), self.check(PROBE_TENANT, probe.user) if self.check else None
            if self.gate and probe.stored is None:
                stored = any(probe.word in m.content for m in service.store.list_memories(PROBE_TENANT, probe.user))
                if fresh is not None:
                    self.checks.append((probe.user, began, fresh, stored, "stored"))
                if not stored:
                    return False
                probe.stored = time.perf_counter()
                began, fresh = time.time(), self.check(PROBE_TENANT, probe.user) if self.check else None
            found = self._recall(service, probe)
            if fresh is not None:
                self.checks.append((probe.user, began, fresh, found, "recall"))
            return found
        except Exception:  # noqa: BLE001 - a failed poll is counted and retried
            self.errors += 1
            return False

    def recall_once(self, probe: ProbeTurn) -> bool:
        """One real recall of a probe from the caller's thread (after the pollers are idle)."""
        return self._recall(self._services[0], probe)

    def _recall(self, service: RecallService, probe: ProbeTurn) -> bool:
        request = RecallRequest(tenant=PROBE_TENANT, user=probe.user, agent="agent-probe", session=f"{probe.user}-s2",
                                question=probe.question, now=datetime.now(timezone.utc))
        start = time.perf_counter()
        result = service.recall(request)
        self.recall_ms.append((time.perf_counter() - start) * 1000)
        self.recalls += 1
        self.deadline_exceeded += result.deadline_exceeded
        return probe.word in result.memory_section


class Readers:
    """One WeaviateStore per polling thread, on the namespace's collections, opened before the worker starts."""

    def __init__(self, args: argparse.Namespace, ctx: ProcessorContext, prefix: str,
                 cipher: FieldCipher | None = None) -> None:
        # the projector seals user text under the owner's key (encryption on): the readers open it the same way
        self.stores = [WeaviateStore.connect(args.weaviate_url, args.weaviate_grpc_port, ctx.embedder.model_id, prefix,
                                             cipher) for _ in range(args.pollers)]
        self.services = [RecallService(store, ctx.embedder, ctx.config) for store in self.stores]

    def close(self, drop: bool = True) -> None:
        try:
            if drop and self.stores:
                self.stores[0].drop()
        finally:
            for store in self.stores:
                store.close()
