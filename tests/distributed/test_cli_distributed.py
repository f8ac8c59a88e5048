"""The core CLI, unchanged, on the distributed runtime (ENGRAM_RUNTIME=distributed) against the embedded one.

Real Kafka, a real `engram worker --role all` process, real Weaviate and chDB;
every command runs as its own `engram` process, as a user would run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

from engram.distributed.facade import DistributedRuntime  # noqa: E402
from engram.runtime.engine import EmbeddedRuntime  # noqa: E402
from tests.distributed_driver import Deployment  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "cli" / "demo.jsonl"
RECALL = ["recall", "--tenant", "demo", "--user", "xiaoming", "--agent", "coach", "--session", "s-zh-1", "--json",
          "推荐点java知识，今晚学什么？"]


def engram(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("engram")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "engram.cli.main"]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=600,  # noqa: S603
                          env={**os.environ, **env})
    if check:
        assert done.returncode == 0, f"engram {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def deployment(kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path) -> Iterator[Deployment]:
    d = Deployment(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port, tmp_path / "dist")
    yield d
    d.worker.stop()
    with DistributedRuntime(d.endpoints) as runtime:
        runtime.store.drop()
    d.close()


@pytest.fixture
def embedded_env(tmp_path: Path) -> dict[str, str]:
    return {"ENGRAM_RUNTIME": "embedded", "ENGRAM_DATA": str(tmp_path / "embedded")}


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def _lineage_shape(steps: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(s["change"], s["relation"], s["before"], s["after"], s["status"],
             tuple(t["message_id"] for t in s["turns"])) for s in steps]


def test_core_cli_gives_the_same_answers_on_both_runtimes(deployment: Deployment,
                                                          embedded_env: dict[str, str]) -> None:
    dist = deployment.env()
    ingested = engram(dist, "ingest", str(DEMO))
    turns = sum(1 for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip())
    assert f"produced {turns} turns to Kafka" in ingested.stdout and "applied by the workers" in ingested.stdout, \
        ingested.stdout + deployment.worker.tail()
    engram(embedded_env, "ingest", str(DEMO))

    for user in ("xiaoming", "alice"):
        args = ("memories", "--tenant", "demo", "--user", user, "--all", "--json")
        assert _json(engram(dist, *args)) == _json(engram(embedded_env, *args))
    summary = ("summary", "--tenant", "demo", "--session", "s-zh-1", "--json")
    assert _json(engram(dist, *summary)) == _json(engram(embedded_env, *summary))

    recalled, expected = _json(engram(dist, *RECALL)), _json(engram(embedded_env, *RECALL))
    # The same memories on both runtimes; their order may differ, since the BM25 channel is each
    # store's own (Weaviate tokenises CJK text differently from Engram's index). So may the best memory,
    # which quotes the turns around its source turn (`  > "…"` lines): each side quotes real turns of the chat.
    # With more candidates than the item limit, the last place can go to a different memory on each side
    # (their scores tie within the BM25 difference): at most one memory (and its type heading) may differ.
    def lines(context: str) -> set[str]:
        return {line for line in context.splitlines() if not line.startswith('  > "')}

    differ = lines(recalled["context"]) ^ lines(expected["context"])
    assert len(recalled["items"]) == len(expected["items"]), (recalled["context"], expected["context"])
    assert len(differ) <= 4 and all(line.startswith(("- ", "[")) for line in differ), differ
    assert len({line for line in differ if line.startswith("- ")}) <= 2, differ
    said = {json.loads(line)["content"] for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()}
    for context in (recalled["context"], expected["context"]):
        quoted = [line[len('  > "'):-1] for line in context.splitlines() if line.startswith('  > "')]
        assert len(quoted) <= 2 and set(quoted) <= said, quoted
    assert "长期记忆" in recalled["context"]
    assert [m["role"] for m in recalled["messages"]] == [m["role"] for m in expected["messages"]]

    memories = _json(engram(dist, "memories", "--tenant", "demo", "--user", "xiaoming", "--all", "--json"))
    for memory in memories:
        args = ("history", "--tenant", "demo", "--user", "xiaoming", "--json", memory["memory_id"])
        assert _lineage_shape(_json(engram(dist, *args))) == _lineage_shape(_json(engram(embedded_env, *args)))

    with EmbeddedRuntime(embedded_env["ENGRAM_DATA"]) as runtime, DistributedRuntime(deployment.endpoints) as dist_rt:
        assert dist_rt.store.state_hash() == runtime.store.state_hash()


def test_analyst_sql_and_projection_rebuild_on_the_distributed_runtime(deployment: Deployment) -> None:
    dist = deployment.env()
    engram(dist, "ingest", str(DEMO))
    engram(dist, *RECALL)
    growth = _json(engram(dist, "sql", "memory_growth_by_type", "--json"))
    assert sum(row["created"] for row in growth if row["tenant_id"] == "demo") >= 10

    deadline = time.monotonic() + 60  # the recall observation travels through Kafka to ClickHouse
    while True:
        latency = _json(engram(dist, "sql", "recall_latency_p95_by_agent", "--json"))
        if latency or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert [(r["agent_id"], r["recalls"]) for r in latency] == [("coach", 1)]

    rebuilt = engram(dist, "replay", "--projection", "all")
    assert rebuilt.stdout.count("identical") == 2, rebuilt.stdout


def test_no_wait_returns_before_the_workers_apply(deployment: Deployment) -> None:
    dist = deployment.env()
    deployment.worker.stop()
    done = engram(dist, "ingest", "--no-wait", str(DEMO))
    assert "not waited for" in done.stdout
    missing = engram(dist, "memories", "--tenant", "demo", "--user", "xiaoming", "--json", check=False)
    assert missing.returncode == 0 and json.loads(missing.stdout) == []  # not applied yet: no memories
    deployment.worker.start()
    deadline = time.monotonic() + 120
    while not json.loads(engram(dist, "memories", "--tenant", "demo", "--user", "xiaoming", "--json").stdout):
        assert time.monotonic() < deadline, deployment.worker.tail()
        time.sleep(1)


def test_an_unknown_runtime_is_a_usage_error(tmp_path: Path) -> None:
    done = engram({"ENGRAM_RUNTIME": "cluster", "ENGRAM_DATA": str(tmp_path)}, "memories", "--tenant", "t",
                  "--user", "u", check=False)
    assert done.returncode == 2 and "ENGRAM_RUNTIME must be one of embedded, distributed" in done.stderr
