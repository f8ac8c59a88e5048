"""A Weaviate of one test alone (own ports, own data folder), so its data folder can be scanned byte by byte.

Started like the private broker (`tests.distributed.conftest.PrivateBroker`): `deploy/local/services up
weaviate` with ENGRAM_SERVICES_DIR and every ENGRAM_WEAVIATE_*_PORT set to free ports, so the shared
Weaviate is never touched; stopped by the pid its pid file holds.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.services import SERVICES_SCRIPT, WeaviateEndpoint, free_port, pid_in, terminate


class PrivateWeaviate:
    def __init__(self, folder: Path) -> None:
        rest, grpc = free_port(), free_port()
        gossip, raft = _pair({rest, grpc}), 0
        while not raft or raft in {gossip, gossip + 1}:
            raft = _pair({rest, grpc})
        # Weaviate finds a peer's data and raft-RPC ports one above its gossip and raft ports
        self.ports = {"PORT": rest, "GRPC_PORT": grpc, "GOSSIP_PORT": gossip, "DATA_PORT": gossip + 1,
                      "RAFT_PORT": raft, "RAFT_RPC_PORT": raft + 1}
        self.folder = folder
        self.env = {**os.environ, "ENGRAM_SERVICES_DIR": str(folder),
                    **{f"ENGRAM_WEAVIATE_{name}": str(port) for name, port in self.ports.items()}}
        self.endpoint = WeaviateEndpoint("127.0.0.1", self.ports["PORT"], self.ports["GRPC_PORT"], source="private")

    @property
    def data_dir(self) -> Path:
        return self.folder / "weaviate" / "data"

    @property
    def pid_file(self) -> Path:
        return self.folder / "weaviate" / "weaviate.pid"

    def pid(self) -> int | None:
        return pid_in(self.pid_file)

    def start(self, timeout: float = 240.0) -> None:
        done = subprocess.run([str(SERVICES_SCRIPT), "up", "weaviate"], env=self.env, capture_output=True,  # noqa: S603
                              text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"private weaviate did not start:\n{done.stderr[-3000:]}")

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (Weaviate flushes its memtables and closes its files), then wait until it is gone."""
        pid = self.pid()
        if pid is None:
            return
        terminate(pid, timeout)


def _pair(taken: set[int]) -> int:
    """A free port whose successor is free too (and neither is in `taken`)."""
    import socket

    while True:
        port = free_port()
        if port in taken or port + 1 in taken or port + 1 > 65535:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
