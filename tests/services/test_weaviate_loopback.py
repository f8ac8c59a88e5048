"""`deploy/local/services up weaviate` keeps gRPC and cluster ports off the network, or says loudly that it cannot.

Weaviate binds its gRPC and cluster-data ports on every interface. Without
iptables the script must warn on stderr and name the way that works here
(ENGRAM_WEAVIATE_NETNS=1, a network namespace of its own); with that way, no
Weaviate port may listen on a non-loopback address of this host. Each run uses
its own ports and state dir (never the shared Weaviate) and is stopped again.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import SERVICES_SCRIPT, free_port, http_ok

pytestmark = [pytest.mark.weaviate, pytest.mark.slow]


def _netns_usable() -> bool:
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False).returncode == 0


def _listeners() -> set[tuple[str, int]]:
    """(local address hex, port) of every listening TCP socket of this network namespace."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port = fields[1].rsplit(":", 1)
            if fields[3] == "0A":  # LISTEN
                found.add((address, int(port, 16)))
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def _free_run(count: int) -> list[int]:
    """`count` consecutive free ports."""
    while True:
        base = free_port()
        ports = list(range(base, base + count))
        if ports[-1] < 65536 and all(_bindable(p) for p in ports):
            return ports


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class Weaviate:
    def __init__(self, folder: Path, netns: bool) -> None:
        names = ["PORT", "GRPC_PORT", "GOSSIP_PORT", "DATA_PORT", "RAFT_PORT", "RAFT_RPC_PORT"]
        self.ports = dict(zip(names, _free_run(len(names))))  # Weaviate finds data = gossip + 1, rpc = raft + 1
        self.env = {**os.environ, "ENGRAM_SERVICES_DIR": str(folder), "ENGRAM_WEAVIATE_NETNS": "1" if netns else "0",
                    **{f"ENGRAM_WEAVIATE_{k}": str(v) for k, v in self.ports.items()}}

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603
            [str(SERVICES_SCRIPT), command, "weaviate"], env=self.env, capture_output=True, text=True, timeout=600,
            check=False)


@pytest.fixture
def weaviates(tmp_path: Path) -> Iterator[list[Weaviate]]:
    started: list[Weaviate] = []
    yield started
    for w in started:
        w.run("down")


def test_up_warns_without_iptables_and_the_namespace_way_keeps_every_port_on_loopback(
        tmp_path: Path, weaviates: list[Weaviate]) -> None:
    netns = _netns_usable()
    if not netns and shutil.which("iptables"):
        pytest.skip("nothing to check: iptables guards the ports and no network namespace can be made")
    plain = Weaviate(tmp_path / "plain", netns=False)
    weaviates.append(plain)
    done = plain.run("up")
    assert done.returncode == 0, done.stderr[-3000:]
    if not shutil.which("iptables") or os.geteuid() != 0:
        assert "WARNING: weaviate: ports" in done.stderr and "ALL network interfaces" in done.stderr, done.stderr
        assert ("ENGRAM_WEAVIATE_NETNS=1" in done.stderr) == netns, done.stderr
    plain.run("down")
    if not netns:
        return

    isolated = Weaviate(tmp_path / "isolated", netns=True)
    weaviates.append(isolated)
    done = isolated.run("up")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr
    assert http_ok(f"http://127.0.0.1:{isolated.ports['PORT']}/v1/.well-known/ready")
    ours = set(isolated.ports.values())
    exposed = [(a, p) for a, p in _listeners() if p in ours and a not in LOOPBACK]
    assert exposed == [], exposed
    assert {p for _, p in _listeners() if p in ours} == {isolated.ports["PORT"], isolated.ports["GRPC_PORT"]}
