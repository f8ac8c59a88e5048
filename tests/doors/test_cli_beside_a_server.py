"""Every command on an embedded data folder takes the folder's lock: beside `engram serve` (or another
command) a command is refused with a message naming the holder, instead of writing beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.access.conftest import free_port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    data, port = tmp_path / "data", free_port()
    env = {**os.environ, "ENGRAM_RUNTIME": "embedded", "ENGRAM_LOG_LEVEL": "warning"}
    server = subprocess.Popen([sys.executable, "-m", "engram.cli.main", "--data", str(data), "serve", "--port",
                               str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        turn = {"tenant": "t", "user": "u", "agent": "a", "session": "s", "message_id": "m1", "role": "user",
                "content": "I live in Porto"}
        assert httpx.post(f"http://127.0.0.1:{port}/v1/turns", json=turn, timeout=30).status_code == 200
        yield data, server.pid
    finally:
        server.terminate()
        server.wait(timeout=30)


def _engram(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENGRAM_RUNTIME": "embedded"}
    return subprocess.run([sys.executable, "-m", "engram.cli.main", "--data", str(data), *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("command", [
    ("memories", "--tenant", "t", "--user", "u"),
    ("recall", "--tenant", "t", "--user", "u", "--agent", "a", "--session", "s", "Where do I live?"),
    ("govern",),
    ("forget", "--tenant", "t", "--user", "u", "--everything"),
])
def test_a_command_beside_a_server_is_refused_naming_the_server(served: tuple[Path, int],
                                                               command: tuple[str, ...]) -> None:
    data, pid = served
    done = _engram(data, *command)
    assert done.returncode != 0, done.stdout
    assert f"process {pid}" in done.stderr and "serve" in done.stderr, done.stderr
