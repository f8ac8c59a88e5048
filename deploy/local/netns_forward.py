"""Forward 127.0.0.1 ports of this host into a process's network namespace (no iptables needed).

usage: netns_forward.py PID PORT [PORT ...]

`deploy/local/services` starts Weaviate with ENGRAM_WEAVIATE_NETNS=1 inside its own
network namespace (`unshare -n`, only a loopback device), so the ports Weaviate binds on
every interface (gRPC, cluster data) exist only in there. This process listens on
127.0.0.1:PORT of the host for each PORT, then enters the namespace of PID (setns) and
connects every accepted client to 127.0.0.1:PORT inside it, copying bytes both ways.
Listening sockets made before setns stay in the host's namespace; sockets made after
it are in the target's. Linux only, needs CAP_SYS_ADMIN (root).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import sys
import time

CLONE_NEWNET = 0x40000000


def enter_netns(pid: int, wait: float = 30.0) -> None:
    """setns(2) into the network namespace of `pid`, once it has its own (unshare may not have run yet)."""
    deadline = time.monotonic() + wait
    while os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino:
        if time.monotonic() > deadline:
            raise RuntimeError(f"pid {pid} is still in this network namespace after {wait}s")
        time.sleep(0.05)
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into the network namespace of pid {pid}: {os.strerror(err)}")
    finally:
        os.close(fd)


def listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(256)
    sock.setblocking(False)
    return sock


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def handler(port: int):  # type: ignore[no-untyped-def]
    async def serve(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            inner_r, inner_w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            client_w.close()
            return
        for w in (client_w, inner_w):
            s = w.get_extra_info("socket")
            if s is not None:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(client_r, inner_w), pipe(inner_r, client_w))
    return serve


async def main(pid: int, ports: list[int]) -> None:
    sockets = [listen(port) for port in ports]  # in the host's namespace
    enter_netns(pid)  # from here on, new sockets are inside the target's namespace
    servers = [await asyncio.start_server(handler(port), sock=sock) for port, sock in zip(ports, sockets)]
    print(f"forwarding 127.0.0.1:{','.join(map(str, ports))} into the network namespace of pid {pid}", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    asyncio.run(main(int(sys.argv[1]), [int(p) for p in sys.argv[2:]]))
