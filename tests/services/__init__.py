"""Real-service fixtures for the test suite (a pytest plugin: ``pytest_plugins = ["tests.services"]``).

This package is both the plugin and the home of the service smoke tests
(``tests/services/test_*_smoke.py``); a ``tests/services.py`` module could not
sit beside a ``tests/services/`` package, so the plugin lives here.

Session-scoped fixtures:

* ``kafka_bootstrap`` -> ``"host:port"`` of a Kafka broker
* ``weaviate_endpoint`` -> :class:`WeaviateEndpoint` (HTTP host/port, gRPC host/port)
* ``clickhouse_dsn`` -> a clickhouse-connect DSN (``chdb:///path`` by default)

Where an endpoint comes from, first match wins:

1. the environment: ``ENGRAM_KAFKA_BOOTSTRAP``; ``ENGRAM_WEAVIATE_URL`` (+
   ``ENGRAM_WEAVIATE_GRPC_PORT``, ``ENGRAM_WEAVIATE_GRPC_HOST``);
   ``ENGRAM_CLICKHOUSE_DSN``;
2. Kafka and Weaviate only: testcontainers, when a Docker engine answers a
   ping (a ``docker`` binary without an engine does not count);
3. Kafka and Weaviate only: the native services, ``deploy/local/services up
   <service>`` (stopped again at session end if this session started them;
   ``ENGRAM_SERVICES_AUTOSTART=0`` turns this off);
   ClickHouse: a fresh chDB directory under pytest's tmp dir.

When none works, a test that needs the service fails under ``CI=true`` and is
skipped with the reason elsewhere. Tests that use a fixture get its marker
(``kafka``, ``weaviate``, ``clickhouse``) automatically, so ``pytest -m kafka``
selects exactly them.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVICES_SCRIPT = REPO / "deploy" / "local" / "services"
KAFKA_IMAGE = os.environ.get("ENGRAM_KAFKA_IMAGE", "apache/kafka:4.4.0")
WEAVIATE_IMAGE = os.environ.get("ENGRAM_WEAVIATE_IMAGE", "cr.weaviate.io/semitechnologies/weaviate:1.39.0")
SERVICE_MARKERS = {
    "kafka": "needs a real Kafka broker",
    "weaviate": "needs a real Weaviate",
    "clickhouse": "needs the ClickHouse engine (chDB or a server)",
    "llm": "needs the scripted OpenAI-compatible server",
}
SHARED_CLICKHOUSE_DSN = os.environ.pop("ENGRAM_CLICKHOUSE_DSN", "").strip()
"""`deploy/local/services env` exports a shared ENGRAM_CLICKHOUSE_DSN. Every embedded runtime reads that variable,
so left in the environment it would put all tests' analytics in one database (one test's forget or erasure
counts would see another's rows). It is taken out at import; only the `clickhouse_dsn` fixture hands it on."""
FIXTURE_MARKERS = {"kafka_bootstrap": "kafka", "private_kafka": "kafka", "weaviate_endpoint": "weaviate",
                   "clickhouse_dsn": "clickhouse"}


@dataclass(frozen=True)
class WeaviateEndpoint:
    """Where a Weaviate answers: REST on ``host:port``, gRPC on ``grpc_host:grpc_port``."""

    host: str
    port: int
    grpc_port: int
    grpc_host: str = ""
    source: str = "env"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def connect(self, **kwargs: Any) -> Any:
        """A ``weaviate.WeaviateClient`` for this endpoint (caller closes it)."""
        import weaviate

        return weaviate.connect_to_custom(
            http_host=self.host, http_port=self.port, http_secure=False,
            grpc_host=self.grpc_host or self.host, grpc_port=self.grpc_port, grpc_secure=False,
            skip_init_checks=True, **kwargs,
        )

    def __getitem__(self, key: str) -> Any:  # dict-style access for callers that prefer it
        return getattr(self, key)


class EndpointDown(RuntimeError):
    """An endpoint given in the environment does not answer; no fallback is tried."""


# ------------------------------------------------------------------ policy
def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def process_running(pid: int) -> bool:
    """True while `pid` lives and is not a zombie (a service started by the script is not our child: no wait())."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def pid_in(pid_file: Path) -> int | None:
    """The running process a service's pid file names, or None."""
    text = pid_file.read_text().strip() if pid_file.exists() else ""
    return int(text) if text.isdigit() and process_running(int(text)) else None


def wait_gone(pid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while process_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def terminate(pid: int, timeout: float = 30.0) -> None:
    """SIGTERM (a controlled shutdown), SIGKILL if it is not gone within `timeout`, then wait until it is."""
    os.kill(pid, signal.SIGTERM)
    if not wait_gone(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid)


def unavailable(service: str, reason: str) -> NoReturn:
    """Fail under CI, skip elsewhere: a needed service is never silently missing in CI."""
    msg = f"{service} unavailable: {reason}"
    if in_ci():
        pytest.fail(msg + " (CI=true: a test that needs a service fails without it)", pytrace=False)
    pytest.skip(msg)


def import_client(module: str, extra: str) -> Any:
    """Import a service client library; in CI its absence fails the module, elsewhere skips it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        msg = f"{module} not importable ({exc}); install it: pip install -e '.[{extra}]'"
        if in_ci():
            pytest.fail(msg + " (CI=true)", pytrace=False)
        pytest.skip(msg, allow_module_level=True)


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in SERVICE_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects (pytest's own modifyitems hook)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark, at collection, every test whose fixture closure holds a service fixture.

    A fixture that needs a service only for some params (the `engram` runtime fixture)
    takes the markers on that param (`pytest.param(..., marks=...)`) instead: a marker
    applied while the test runs comes too late for `-m "not kafka"`.
    """
    for item in items:
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None:
                item.add_marker(getattr(pytest.mark, marker))


# ------------------------------------------------------------------ probes
def tcp_open(host: str, port: int, timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def http_ok(url: str, timeout: float = 5.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback/test URL
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def docker_engine_answers() -> bool:
    """True only when a Docker engine answers a ping (not merely when a docker CLI exists)."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - any failure means "no engine"
        return False


def require_docker_engine() -> None:
    if not docker_engine_answers():
        raise LookupError("no Docker engine answered a ping")


def split_host_port(value: str, default_port: int) -> tuple[str, int]:
    first = value.split(",")[0].strip()
    host, _, port = first.rpartition(":") if ":" in first else (first, "", str(default_port))
    return host.strip("[]") or "127.0.0.1", int(port)


# ------------------------------------------------------------------ native services
class NativeServices:
    """Starts services with deploy/local/services and stops at session end only what it started."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def run(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 - our own script
            [str(SERVICES_SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False,
        )

    def up(self, service: str) -> dict[str, str]:
        if os.environ.get("ENGRAM_SERVICES_AUTOSTART", "1") == "0":
            raise RuntimeError("native autostart disabled (ENGRAM_SERVICES_AUTOSTART=0)")
        if not SERVICES_SCRIPT.exists():
            raise RuntimeError(f"{SERVICES_SCRIPT} is missing")
        was_running = self.run("status", service, timeout=120).returncode == 0
        timeout = float(os.environ.get("ENGRAM_SERVICES_UP_TIMEOUT", "3600"))  # a cold Weaviate build is long
        proc = self.run("up", service, timeout=timeout)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise RuntimeError(f"`deploy/local/services up {service}` exited {proc.returncode}:\n{tail}")
        if not was_running:
            self.started.append(service)
        return parse_exports(proc.stdout)

    def stop_started(self) -> None:
        for service in reversed(self.started):
            self.run("down", service, timeout=120)
        self.started.clear()


def parse_exports(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export "):
            for word in shlex.split(line[len("export "):]):
                key, sep, value = word.partition("=")
                if sep and re.fullmatch(r"[A-Z_][A-Z0-9_]*", key):
                    env[key] = value
    return env


@pytest.fixture(scope="session")
def _native_services() -> Iterator[NativeServices]:
    native = NativeServices()
    yield native
    native.stop_started()


@pytest.fixture(scope="session")
def _containers() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for container in reversed(started):
        try:
            container.stop()
        except Exception:  # noqa: BLE001 - best effort cleanup
            pass


def resolve(service: str, attempts: list[tuple[str, Callable[[], Any]]]) -> Any:
    """Try each (label, factory) in order and return the first result; a factory raises when it cannot serve."""
    reasons: list[str] = []
    for label, factory in attempts:
        try:
            return factory()
        except EndpointDown as exc:  # an endpoint named explicitly is down: do not paper over it
            unavailable(service, f"{label}: {exc}")
        except Exception as exc:  # noqa: BLE001 - collected into the failure message
            reasons.append(f"{label}: {exc}")
    unavailable(service, "; ".join(reasons) or "no source configured")


# ------------------------------------------------------------------ kafka
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kafka_from_env() -> str:
    bootstrap = os.environ.get("ENGRAM_KAFKA_BOOTSTRAP", "").strip()
    if not bootstrap:
        raise LookupError("ENGRAM_KAFKA_BOOTSTRAP not set")
    host, port = split_host_port(bootstrap, 9092)
    if not tcp_open(host, port):
        raise EndpointDown(f"ENGRAM_KAFKA_BOOTSTRAP={bootstrap} is set but nothing listens there")
    return bootstrap


def kafka_from_container(started: list[Any]) -> str:
    require_docker_engine()
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    port = free_port()  # advertised listener must name the host port, so fix it up front
    container = (
        DockerContainer(KAFKA_IMAGE)
        .with_bind_ports(9092, port)
        .with_env("KAFKA_NODE_ID", "1")
        .with_env("KAFKA_PROCESS_ROLES", "broker,controller")
        .with_env("KAFKA_LISTENERS", "PLAINTEXT://:9092,CONTROLLER://:9093")
        .with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://127.0.0.1:{port}")
        .with_env("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER")
        .with_env("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
        .with_env("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9093")
        .with_env("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1")
        .with_env("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR", "1")
        .with_env("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
        .waiting_for(LogMessageWaitStrategy("Kafka Server started").with_startup_timeout(180))
    )
    container.start()
    started.append(container)
    return f"127.0.0.1:{port}"


@pytest.fixture(scope="session")
def kafka_bootstrap(_native_services: NativeServices, _containers: list[Any]) -> str:
    """Bootstrap servers (``host:port``) of a real Kafka broker."""

    def native() -> str:
        return _native_services.up("kafka")["ENGRAM_KAFKA_BOOTSTRAP"]

    return str(resolve("kafka", [
        ("env", kafka_from_env),
        ("testcontainers", lambda: kafka_from_container(_containers)),
        ("native (deploy/local/services up kafka)", native),
    ]))


# ------------------------------------------------------------------ weaviate
def weaviate_from_env() -> WeaviateEndpoint:
    url = os.environ.get("ENGRAM_WEAVIATE_URL", "").strip()
    if not url:
        raise LookupError("ENGRAM_WEAVIATE_URL not set")
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or "127.0.0.1"
    endpoint = WeaviateEndpoint(
        host=host, port=parts.port or 8080,
        grpc_port=int(os.environ.get("ENGRAM_WEAVIATE_GRPC_PORT", "50051")),
        grpc_host=os.environ.get("ENGRAM_WEAVIATE_GRPC_HOST", host), source="env",
    )
    if not http_ok(f"{endpoint.url}/v1/.well-known/ready"):
        raise EndpointDown(f"ENGRAM_WEAVIATE_URL={url} is set but {endpoint.url}/v1/.well-known/ready is not 200")
    return endpoint


def weaviate_from_container(started: list[Any]) -> WeaviateEndpoint:
    require_docker_engine()
    from testcontainers.community.weaviate import WeaviateContainer

    container = WeaviateContainer(
        image=WEAVIATE_IMAGE,
        env_vars={"DISABLE_TELEMETRY": "true", "RAFT_BOOTSTRAP_EXPECT": "1", "RAFT_JOIN": "node1"},
    )
    container.start()
    started.append(container)
    host = container.get_container_host_ip()
    return WeaviateEndpoint(
        host=host, port=int(container.get_exposed_port(8080)),
        grpc_port=int(container.get_exposed_port(50051)), grpc_host=host, source="testcontainers",
    )


@pytest.fixture(scope="session")
def weaviate_endpoint(_native_services: NativeServices, _containers: list[Any]) -> WeaviateEndpoint:
    """A real Weaviate: REST + gRPC endpoint (``.connect()`` gives a v4 client)."""

    def native() -> WeaviateEndpoint:
        env = _native_services.up("weaviate")
        parts = urlsplit(env["ENGRAM_WEAVIATE_URL"])
        host = parts.hostname or "127.0.0.1"
        return WeaviateEndpoint(host=host, port=parts.port or 8080,
                                grpc_port=int(env["ENGRAM_WEAVIATE_GRPC_PORT"]), grpc_host=host, source="native")

    result: WeaviateEndpoint = resolve("weaviate", [
        ("env", weaviate_from_env),
        ("testcontainers", lambda: weaviate_from_container(_containers)),
        ("native (deploy/local/services up weaviate)", native),
    ])
    return result


# ------------------------------------------------------------------ clickhouse
@pytest.fixture(scope="session")
def clickhouse_dsn(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A clickhouse-connect DSN: ``ENGRAM_CLICKHOUSE_DSN``, else a fresh chDB directory.

    chDB holds one engine path per process at a time: close every client of
    one path before opening another (``client.close()``).
    """

    def from_env() -> str:
        dsn = SHARED_CLICKHOUSE_DSN
        if not dsn:
            raise LookupError("ENGRAM_CLICKHOUSE_DSN not set")
        return dsn

    def fresh_chdb() -> str:
        import chdb  # noqa: F401 - the engine must be importable
        import clickhouse_connect  # noqa: F401

        return f"chdb://{tmp_path_factory.mktemp('chdb')}"

    return str(resolve("clickhouse", [("env", from_env), ("chDB (pip install -e '.[clickhouse]')", fresh_chdb)]))
