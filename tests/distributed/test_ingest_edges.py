"""`engram ingest` at the edges on the distributed runtime: real Kafka, a real worker, real Weaviate.

Bad lines are reported by number and the rest is produced; a message id that
Weaviate already holds with other content is a conflict and is not produced; a
same-content re-send is a duplicate and is not produced again; a record larger
than Kafka takes is a per-line error, not a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

from engram.distributed.facade import DistributedRuntime  # noqa: E402
from tests.distributed.test_cli_distributed import engram  # noqa: E402
from tests.distributed_driver import Deployment  # noqa: E402

pytestmark = [pytest.mark.kafka, pytest.mark.weaviate]


@pytest.fixture
def deployment(kafka_bootstrap: str, weaviate_endpoint: WeaviateEndpoint, tmp_path: Path) -> Iterator[Deployment]:
    d = Deployment(kafka_bootstrap, weaviate_endpoint.url, weaviate_endpoint.grpc_port, tmp_path / "dist")
    yield d
    d.worker.stop()
    with DistributedRuntime(d.endpoints) as runtime:
        runtime.store.drop()
    d.close()


def _line(number: int, content: str | None = None) -> str:
    return json.dumps({"tenant": "t1", "user": "u1", "agent": "a1", "session": "s1", "message_id": f"m{number}",
                       "role": "user", "content": content or f"I like hobby number {number} a lot",
                       "ts": "2026-03-01T10:00:00Z"})


def _ingest(deployment: Deployment, lines: list[bytes], **env: str) -> tuple[int, str, str]:
    """`engram ingest -` as its own process, the lines on stdin as bytes."""
    script = Path(sys.executable).with_name("engram")
    done = subprocess.run([str(script), "ingest", "-"], input=b"\n".join(lines) + b"\n", capture_output=True,
                          timeout=600, env={**os.environ, **deployment.env(), **env})
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_bad_lines_conflicts_duplicates_and_oversized_records_on_the_distributed_runtime(
        deployment: Deployment) -> None:
    bad = _line(3).encode().replace(b"hobby", b"hob\xffby")
    code, out, err = _ingest(deployment, [_line(1).encode(), _line(2).encode(), bad, _line(4).encode()])
    assert code == 1 and "Traceback" not in err, err + deployment.worker.tail()
    assert "-:3: not valid UTF-8 (byte 0xff" in err
    assert "produced 3 turns to Kafka (0 already known, 0 conflicting, 1 invalid lines)" in out, out
    assert "applied by the workers" in out

    again = [_line(1), _line(2, "I changed my mind about everything"), _line(5, "I like tea " * 400), _line(6)]
    code, out, err = _ingest(deployment, [line.encode() for line in again], ENGRAM_KAFKA_MAX_RECORD_BYTES="3000")
    assert code == 1 and "Traceback" not in err, err + deployment.worker.tail()
    assert "-:2: message id 'm2' of session 's1' was already recorded with different content" in err, err
    assert "-:3: the record would be" in err and "more than Kafka takes (3,000" in err
    assert "produced 1 turns to Kafka (1 already known, 1 conflicting, 0 invalid lines, 1 too large)" in out, out

    shown = json.loads(engram(deployment.env(), "memories", "--tenant", "t1", "--user", "u1", "--all",
                              "--json").stdout)
    contents = " ".join(m["content"] for m in shown)
    assert "changed my mind" not in contents and "tea" not in contents
    with DistributedRuntime(deployment.endpoints) as runtime:
        turns = runtime.store.recent_turns("t1", "u1", "s1", 10)
    assert [t.message_id for t in turns] == ["m1", "m2", "m4", "m6"]
    assert turns[1].content == "I like hobby number 2 a lot"
