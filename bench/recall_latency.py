"""Recall latency: a full context assembly at 100 / 1,000 / 10,000 memories per user.

Loads the same deterministic mixed Chinese/English memories (bench/recall_latency_data.py)
into every store in one run, then times recall on a random sample of users:

- **embedded**: `RecallService` over `EmbeddedStore` (SQLite + the in-process hybrid index);
- **weaviate**: `RecallService` over `WeaviateStore` (needs ENGRAM_WEAVIATE_URL / _GRPC_PORT);
- **mem0** (`mem0ai`): `Memory.search` after `Memory.add(..., infer=False)`, with Engram's
  own hashing embedder and mem0's local vector store (Qdrant local mode), fully offline
  (bench/recall_latency_mem0.py). Two layouts: `shared` (one collection per size group,
  queries filtered by user_id: how mem0 serves many users) and `per-user` (one
  collection per user: mem0's best case).

A timed Engram call is `RecallService.recall` from question to assembled context: global
cards, L3 persona, hybrid search (vector + BM25) and the shared scorer, the session
summary, the recent-turn window, the token budget and the RecallServed observation; the
question is embedded inside the timed span (the embedder's cache is cleared before every
timed call, for every store). The recall deadline is raised to 60 s so that nothing is cut.
mem0 has no context assembly; its timed call is one `search` (embed, vector search,
scoring, formatting) — less work than Engram's call.

Plan (default, scaled from the target's 1,000 users per size to fit one 2-core / 24 GB machine
with every store loaded at once): 1,000 users × 100, 100 users × 1,000 and 10 users ×
10,000 memories (100,000 memories per size group, 300,000 per store); one Engram tenant
(one Weaviate tenant, one shared mem0 collection) per size group; 50 users queried per
group (all of them when fewer), 200 questions per group, 3 repeats; the median of the
repeats' percentiles is reported. mem0 answers the first 100 of the same questions once
(`--mem0-queries`, `--mem0-repeats`): its shared layout scans every point of the
collection in Python on each search (local Qdrant), about 1.5 s per question at 100,000.

    python -m bench.recall_latency                           # everything (Weaviate from the env)
    python -m bench.recall_latency --no-weaviate --no-mem0   # embedded only
    python -m bench.recall_latency --sizes 100,1000 --users-per-size 50 --queries 100
    python -m bench.recall_latency --profile bench/results/recall_profile.txt
    python -m bench.recall_latency --no-weaviate --no-mem0 --embedder use --sizes 10000 --users-per-size 1
    OPENBLAS_NUM_THREADS=1 python -m bench.recall_latency --no-weaviate --no-mem0   # one BLAS thread

Besides wall-clock percentiles, the table gives the process CPU time of the same calls
(other work on a shared machine shows in the wall-clock tail, not in the CPU time) and
the load average around the measurement. The 10,000 × 256 vector scan is one OpenBLAS
matrix-vector product; with OpenBLAS's default threads it waits for a second thread,
which on a busy 2-core machine is what makes the wall-clock tail (same scores either way).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.common import emit, machine_info, peak_rss_mib  # noqa: E402
from bench.recall_latency_data import (  # noqa: E402
    AGENT, NOW, SESSION, generate_context, generate_history, generate_memories, generate_queries, group_tenant, user_id,
)
from bench.recall_latency_report import (  # noqa: E402
    TARGET_SIZE, Group, Series, load_average, percentiles, print_table, result_records,
)

DEFAULT_SIZES = (100, 1_000, 10_000)
DEFAULT_USERS = (1_000, 100, 10)
DEADLINE_MS = 60_000.0


# -- the stores under test ---------------------------------------------------------------------------------

class Target:
    """One system under test: load users' data, answer one question."""

    name = "?"

    def load_user(self, tenant: str, user: str, records: list[Any], vectors: np.ndarray, ctx: Any) -> None: ...

    def begin_load(self) -> None: ...

    def end_load(self) -> None: ...

    def query(self, tenant: str, user: str, question: str) -> tuple[int, bool]:
        """Answer one question; return (items in the answer, deadline exceeded)."""
        raise NotImplementedError

    def wants(self, tenant: str, user: str, sampled: set[tuple[str, str]]) -> bool:
        return True

    def describe(self) -> dict[str, Any]:
        return {}

    def close(self) -> None: ...


class EngramTarget(Target):
    """`RecallService.recall` over a MemoryStore (embedded or Weaviate)."""

    def __init__(self, name: str, store: Any, embedder: Any, config: Any, db: Any = None) -> None:
        from engram.recall.service import RecallService

        self.name = name
        self.store = store
        self.db = db
        self.service = RecallService(store, embedder, config)
        self.turns_per_memory = 0
        """Past turns loaded per memory (`--turns-per-memory`): the turn index recall searches as evidence."""
        store.embed_turns_with(embedder.embed)

    def begin_load(self) -> None:
        if self.db is not None:
            self.db.execute("BEGIN")
        if self.name == "weaviate":  # one flush per group: the store's 2,000-object buffer halves the load rate
            import engram.projections.weaviate_store as weaviate_store

            self._buffer = weaviate_store.MAX_BUFFERED
            weaviate_store.MAX_BUFFERED = 1 << 40

    def end_load(self) -> None:
        self.store.flush()
        if self.db is not None:
            self.db.execute("COMMIT")
        if self.name == "weaviate":
            import engram.projections.weaviate_store as weaviate_store

            weaviate_store.MAX_BUFFERED = self._buffer

    def load_user(self, tenant: str, user: str, records: list[Any], vectors: np.ndarray, ctx: Any) -> None:
        for record, vector in zip(records, vectors):
            self.store.upsert_memory(tenant, user, record, vector)
        for card in ctx.cards:
            self.store.upsert_card(tenant, user, card)
        self.store.upsert_summary(tenant, user, ctx.summary)
        for turn in generate_history(records, user, self.turns_per_memory):
            self.store.add_turn(tenant, user, turn)
        for turn in ctx.turns:
            self.store.add_turn(tenant, user, turn)

    def query(self, tenant: str, user: str, question: str) -> tuple[int, bool]:
        from engram.recall.service import RecallRequest

        result = self.service.recall(RecallRequest(tenant, user, AGENT, SESSION, question, NOW))
        return len(result.items) + len(result.recent), result.deadline_exceeded

    def describe(self) -> dict[str, Any]:
        return {"call": "RecallService.recall (cards, persona, hybrid search + shared scorer, summary, "
                        "recent window, budget, observation)", "store": type(self.store).__name__}


class Mem0Target(Target):
    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.name = peer.name

    def load_user(self, tenant: str, user: str, records: list[Any], vectors: np.ndarray, ctx: Any) -> None:
        self.peer.add(tenant, user, [r.content for r in records])

    def wants(self, tenant: str, user: str, sampled: set[tuple[str, str]]) -> bool:
        # per-user collections: users never queried change nothing for the others, so they are not loaded
        return self.peer.layout == "shared" or (tenant, user) in sampled

    def query(self, tenant: str, user: str, question: str) -> tuple[int, bool]:
        return self.peer.search(tenant, user, question), False

    def describe(self) -> dict[str, Any]:
        return self.peer.describe()

    def close(self) -> None:
        self.peer.close()


# -- measurement ---------------------------------------------------------------------------------------------

def _clear_embedding_cache(embedder: Any) -> None:
    one = getattr(embedder, "_one", None)
    if one is not None and hasattr(one, "cache_clear"):
        one.cache_clear()
    cache = getattr(embedder, "_cache", None)  # the USE embedder's text cache
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()


def timed_pass(target: Target, group: Group, queries: list[tuple[str, str]], embedder: Any,
               series: Series | None = None) -> list[float]:
    """Wall-clock ms per question; with a series, also records the calls' process CPU ms there."""
    times: list[float] = []
    cpu: list[float] = []
    for user, question in queries:
        _clear_embedding_cache(embedder)
        cpu_start = time.process_time()
        start = time.perf_counter()
        items, exceeded = target.query(group.tenant, user, question)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - cpu_start) * 1000)
        if series is not None:
            series.items.append(items)
            series.exceeded += int(exceeded)
    if series is not None:
        series.cpu_repeats.append(cpu)
    return times


def make_groups(sizes: list[int], users: list[int], sample: int, queries: int, warmup: int,
                seed: int) -> list[Group]:
    groups = []
    for size, count in zip(sizes, users):
        tenant = group_tenant(size)
        everyone = [user_id(i) for i in range(count)]
        sampled = sorted(random.Random(f"{seed}/sample/{size}").sample(everyone, min(sample, count)))
        groups.append(Group(size, count, tenant, sampled, generate_queries(seed, tenant, sampled, queries),
                            generate_queries(seed + 1, tenant, sampled, warmup)))
    return groups


def load(targets: list[Target], groups: list[Group], embedder: Any, seed: int,
         log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every group's users into every store; returns one load record per store and group."""
    records_out = []
    for group in groups:
        sampled = {(group.tenant, u) for u in group.sampled}
        spent = {t.name: 0.0 for t in targets}
        loaded = {t.name: 0 for t in targets}
        gen_s = 0.0
        for target in targets:
            target.begin_load()
        for index in range(group.users):
            user = user_id(index)
            start = time.perf_counter()
            records = generate_memories(seed, group.tenant, user, group.size)
            vectors = embedder.embed([r.content for r in records])
            ctx = generate_context(seed, group.tenant, user)
            gen_s += time.perf_counter() - start
            for target in targets:
                if not target.wants(group.tenant, user, sampled):
                    continue
                start = time.perf_counter()
                target.load_user(group.tenant, user, records, vectors, ctx)
                spent[target.name] += time.perf_counter() - start
                loaded[target.name] += len(records)
            if index and index % max(1, group.users // 5) == 0:
                log(f"  loading {group.size}/user: {index}/{group.users} users")
        for target in targets:
            start = time.perf_counter()
            target.end_load()
            spent[target.name] += time.perf_counter() - start
        for target in targets:
            rec = {"bench": "recall_latency", "record": "load", "store": target.name,
                   "memories_per_user": group.size, "users": group.users, "memories": loaded[target.name],
                   "seconds": round(spent[target.name], 2),
                   "memories_per_s": round(loaded[target.name] / spent[target.name]) if spent[target.name] else None}
            records_out.append(rec)
        log(f"  loaded {group.size}/user × {group.users} users "
            f"(generation + embedding {gen_s:.1f} s; "
            + ", ".join(f"{t.name} {spent[t.name]:.1f} s" for t in targets) + ")")
    return records_out


def measure(targets: list[Target], groups: list[Group], embedder: Any, repeats: int,
            mem0_queries: int, mem0_repeats: int, log: Callable[[str], None]) -> dict[tuple[str, int], Series]:
    out: dict[tuple[str, int], Series] = {}
    for group in groups:
        for target in targets:
            series = out.setdefault((target.name, group.size), Series())
            is_mem0 = isinstance(target, Mem0Target)
            if not is_mem0:  # first recall per user: loads the user's index (embedded) / warms caches
                for user in group.sampled:
                    series.first_recall_ms += timed_pass(target, group, [(user, group.warmup[0][1])], embedder)
            timed_pass(target, group, group.warmup[: 5 if is_mem0 else None], embedder)
        rounds = max(repeats, mem0_repeats)
        for r in range(rounds):
            order = targets[r % len(targets):] + targets[: r % len(targets)]  # rotate: spread the noise
            for target in order:
                is_mem0 = isinstance(target, Mem0Target)
                if r >= (mem0_repeats if is_mem0 else repeats):
                    continue
                queries = group.queries[:mem0_queries] if is_mem0 else group.queries
                series = out[(target.name, group.size)]
                gc.collect()
                series.repeats.append(timed_pass(target, group, queries, embedder, series))
                stats = percentiles(series.repeats[-1])
                cpu = percentiles(series.cpu_repeats[-1], "cpu_")
                log(f"  {group.size}/user  {target.name:<16} repeat {r + 1}: p50 {stats['p50_ms']:.2f}  "
                    f"p95 {stats['p95_ms']:.2f}  p99 {stats['p99_ms']:.2f} ms  "
                    f"(CPU p50 {cpu['cpu_p50_ms']:.2f}  p95 {cpu['cpu_p95_ms']:.2f} ms)")
    return out


def profile_embedded(target: Target, group: Group, embedder: Any, path: str | None) -> str:
    """cProfile one pass of the embedded store over a group's questions; the report text."""
    profiler = cProfile.Profile()
    profiler.enable()
    timed_pass(target, group, group.queries, embedder)
    profiler.disable()
    buf = io.StringIO()
    stats = pstats.Stats(profiler, stream=buf)
    buf.write(f"cProfile: embedded recall, {len(group.queries)} questions at {group.size} memories/user\n")
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(25)
    text = buf.getvalue()
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    return text


def _ints(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


def _workdir(arg: str | None) -> tuple[Path, bool]:
    if arg:
        Path(arg).mkdir(parents=True, exist_ok=True)
        return Path(arg), False
    # tmpfs when there is one: mem0's local Qdrant and history DB commit (fsync) on every add,
    # which makes loading 300,000 memories take an hour on disk; reads are the same either way.
    parent = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="engram-recall-bench-", dir=parent)), True


def _drop_weaviate_tenants(store: Any, tenants: list[str]) -> None:
    from engram.projections.weaviate_schema import COLLECTIONS, tenant_name

    names = [tenant_name(t) for t in tenants]
    for collection in COLLECTIONS:
        coll = store._client.collections.get(collection)
        present = set(coll.tenants.get())
        gone = [n for n in names if n in present]
        if gone:
            coll.tenants.remove(gone)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recall latency: embedded, Weaviate and mem0")
    parser.add_argument("--sizes", type=_ints, default=list(DEFAULT_SIZES), help="memories per user, e.g. 100,1000,10000")
    parser.add_argument("--users-per-size", type=_ints, default=None,
                        help="users per size: one value for all, or one per size (default 1000,100,10)")
    parser.add_argument("--sample-users", type=int, default=50, help="users queried per size (random sample)")
    parser.add_argument("--queries", type=int, default=200, help="timed questions per size and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per store and size (Engram stores)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed questions per store and size first")
    parser.add_argument("--mem0-queries", type=int, default=100,
                        help="timed mem0 questions per size (at most --queries; the first ones of the same list)")
    parser.add_argument("--mem0-repeats", type=int, default=1, help="timed passes for mem0 (slow when shared)")
    parser.add_argument("--mem0-layout", default="shared,per-user", help="shared, per-user or both (comma)")
    parser.add_argument("--no-weaviate", action="store_true", help="skip Weaviate")
    parser.add_argument("--no-mem0", action="store_true", help="skip mem0")
    parser.add_argument("--weaviate-url", default=os.environ.get("ENGRAM_WEAVIATE_URL"))
    parser.add_argument("--weaviate-grpc-port", type=int, default=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")))
    parser.add_argument("--keep-weaviate-data", action="store_true", help="leave the bench tenants in Weaviate")
    parser.add_argument("--workdir", default=None, help="where SQLite / mem0 files go (default: a temp dir on tmpfs)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turns-per-memory", type=int, default=0,
                        help="past conversation turns loaded per memory (recall searches them as evidence)")
    parser.add_argument("--embedder", choices=("hashing", "use"), default="hashing",
                        help="Engram's embedder (the question is embedded inside the timed span)")
    parser.add_argument("--profile", nargs="?", const="", default=None, metavar="PATH",
                        help="cProfile the embedded path at the largest size (report to PATH if given)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)

    users = args.users_per_size or (list(DEFAULT_USERS) if args.sizes == list(DEFAULT_SIZES) else [100])
    if len(users) == 1:
        users = users * len(args.sizes)
    if len(users) != len(args.sizes):
        parser.error("--users-per-size takes one value or one per size")

    def log(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    from engram.core.config import DEFAULT_CONFIG
    from engram.core.embedding import calibrated, make_embedder
    from engram.projections.embedded_store import EmbeddedStore
    from engram.runtime.log import open_database

    config = DEFAULT_CONFIG.model_copy(update={"recall": DEFAULT_CONFIG.recall.model_copy(
        update={"deadline_ms": DEADLINE_MS})})
    embedder = make_embedder(args.embedder, config.embedder.dimensions)
    config = calibrated(config, embedder)
    workdir, own_workdir = _workdir(args.workdir)
    machine = machine_info()
    groups = make_groups(args.sizes, users, args.sample_users, args.queries, args.warmup, args.seed)
    skipped: list[dict[str, Any]] = []
    targets: list[Target] = []
    db = open_database(workdir / "engram.db")
    targets.append(EngramTarget("embedded", EmbeddedStore(db, embedder.dimensions), embedder, config, db))
    weaviate_store = None
    if not args.no_weaviate:
        if not args.weaviate_url:
            skipped.append({"store": "weaviate", "skipped": "ENGRAM_WEAVIATE_URL not set (deploy/local/services up "
                                                            "weaviate; eval \"$(deploy/local/services env)\")"})
        else:
            from engram.projections.weaviate_store import WeaviateStore

            weaviate_store = WeaviateStore.connect(args.weaviate_url, args.weaviate_grpc_port, embedder.model_id)
            _drop_weaviate_tenants(weaviate_store, [g.tenant for g in groups])
            targets.append(EngramTarget("weaviate", weaviate_store, embedder, config))
    for target in targets:
        if isinstance(target, EngramTarget):
            target.turns_per_memory = args.turns_per_memory
    if not args.no_mem0:
        try:
            from bench.recall_latency_mem0 import Mem0Peer, configure_offline

            configure_offline(workdir)
            import mem0  # noqa: F401  (fails here when mem0ai is not installed)

            for layout in [x.strip() for x in args.mem0_layout.split(",") if x.strip()]:
                targets.append(Mem0Target(Mem0Peer(workdir, embedder, layout)))
        except ImportError as exc:
            skipped.append({"store": "mem0", "skipped": f"mem0ai not installed ({exc}); pip install -e '.[bench]'"})

    plan = {"bench": "recall_latency", "record": "plan",
            "groups": [{"memories_per_user": g.size, "users": g.users, "memories": g.size * g.users,
                        "tenant": g.tenant, "users_sampled": len(g.sampled)} for g in groups],
            "queries": args.queries, "repeats": args.repeats, "warmup": args.warmup,
            "mem0_queries": min(args.mem0_queries, args.queries), "mem0_repeats": args.mem0_repeats,
            "seed": args.seed, "embedder": embedder.model_id, "recall_deadline_ms": DEADLINE_MS,
            "workdir": str(workdir), "stores": {t.name: t.describe() for t in targets}, "skipped": skipped,
            "machine": machine, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default")}
    emit(plan)
    for rec in skipped:
        log(f"skipped {rec['store']}: {rec['skipped']}")
    try:
        log(f"loading {sum(g.size * g.users for g in groups):,} memories into {', '.join(t.name for t in targets)}")
        for rec in load(targets, groups, embedder, args.seed, log):
            emit(rec)
        log("measuring")
        loads = {"before": load_average()}
        series = measure(targets, groups, embedder, args.repeats, min(args.mem0_queries, args.queries),
                         args.mem0_repeats, log)
        loads["after"] = load_average()
        results = result_records([t.name for t in targets], groups, series, machine,
                                 model_embedder=args.embedder != "hashing")
        for rec in results:
            emit({**rec, "load_average": loads})
        print_table(results)
        print(f"\nmachine: {machine['cores']} cores, {machine['memory_gib']} GiB, {machine['cpu_model']}, "
              f"Python {machine['python']}; peak RSS {peak_rss_mib():,.0f} MiB; load average (1/5/15 min) "
              f"{loads['before']} before measuring, {loads['after']} after; OpenBLAS threads "
              f"{plan['blas_threads']}; targets at {TARGET_SIZE:,}/user: embedded p95 ≤ 5 ms (≤ 15 ms with a model "
              f"embedder, query embedding included), Weaviate p95 ≤ 25 ms")
        if args.profile is not None:
            largest = max(groups, key=lambda g: g.size)
            print("\n" + profile_embedded(targets[0], largest, embedder, args.profile or None))
    finally:
        for target in targets:
            target.close()
        if weaviate_store is not None:
            if not args.keep_weaviate_data:
                _drop_weaviate_tenants(weaviate_store, [g.tenant for g in groups])
            weaviate_store.close()
        db.close()
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
