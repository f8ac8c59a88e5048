"""deploy/compose/docker-compose.yml is valid: by a compose client where one exists, always by structure."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.services import REPO

import yaml  # noqa: E402 - pyyaml is in the test extra

COMPOSE = REPO / "deploy" / "compose" / "docker-compose.yml"
INFRA = {"kafka", "weaviate", "clickhouse"}
ENGRAM = {"engram-worker", "engram-recall"}


def compose_clients() -> list[list[str]]:
    """Compose CLIs that actually run here (`docker compose` needs the plugin, not an engine)."""
    found: list[list[str]] = []
    for cmd in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(cmd[0]) is None:
            continue
        probe = subprocess.run([*cmd, "version"], capture_output=True, text=True, timeout=30, check=False)
        if probe.returncode == 0:
            found.append(cmd)
    return found


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def test_compose_file_is_valid(compose: dict[str, Any]) -> None:
    """Every compose client that runs here accepts the file; without one, the structure tests below stand in."""
    assert set(compose) <= {"services", "volumes", "networks", "configs", "secrets"} | {
        k for k in compose if k.startswith("x-")
    }, "unknown top-level keys"
    assert (COMPOSE.parent / ".env").read_text().strip().startswith("COMPOSE_PROJECT_NAME=engram")
    for cmd in compose_clients():
        proc = subprocess.run(
            [*cmd, "-f", str(COMPOSE), "--profile", "engram", "config", "-q"],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert proc.returncode == 0, f"{' '.join(cmd)} config failed:\n{proc.stderr}"


def test_all_services_present_with_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert INFRA | ENGRAM <= set(services)
    for name, svc in services.items():
        check = svc.get("healthcheck", {}).get("test")
        assert check and check[0] in {"CMD", "CMD-SHELL"}, f"{name} has no health check"
        assert "image" in svc or "build" in svc, name


def test_images_are_pinned_to_the_tested_versions(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in INFRA:
        image = services[name]["image"]
        assert re.search(r":(\$\{[A-Z_]+:-)?\d+(\.\d+)*\}?$", image), f"{name} image not pinned: {image}"
    assert "apache/kafka:${ENGRAM_KAFKA_VERSION:-4." in services["kafka"]["image"]
    assert services["weaviate"]["image"].endswith(":${ENGRAM_WEAVIATE_VERSION:-1.39.0}")


def test_ports_are_published_on_loopback_only(compose: dict[str, Any]) -> None:
    for name, svc in compose["services"].items():
        for port in svc.get("ports", []):
            assert isinstance(port, str) and port.startswith("127.0.0.1:"), f"{name} publishes {port!r}"


def test_kafka_is_single_node_kraft_with_replication_factor_one(compose: dict[str, Any]) -> None:
    env = compose["services"]["kafka"]["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert "CONTROLLER" in env["KAFKA_CONTROLLER_LISTENER_NAMES"]
    for key, value in env.items():
        if key.endswith("REPLICATION_FACTOR"):
            assert value == "1", key
    assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"


def test_volumes_are_declared_and_dependencies_wait_for_health(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    services = compose["services"]
    for name, svc in services.items():
        for mount in svc.get("volumes", []):
            source = mount.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name} uses undeclared volume {source}"
        for dep, cond in (svc.get("depends_on") or {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            assert cond == {"condition": "service_healthy"}, f"{name} -> {dep}"
    for name in INFRA:
        assert services[name].get("volumes"), f"{name} keeps no data volume"


def test_engram_services_build_from_the_repo_dockerfile(compose: dict[str, Any]) -> None:
    for name in ENGRAM:
        svc = compose["services"][name]
        build = svc["build"]
        context = (COMPOSE.parent / build["context"]).resolve()
        assert (context / "pyproject.toml").exists(), f"{name}: build context {context} is not the repo"
        assert (context / build["dockerfile"]).is_file()
        assert svc["command"][:2] in (["engram", "worker"], ["engram", "serve"])
        assert svc["environment"]["ENGRAM_KAFKA_BOOTSTRAP"] == "kafka:19092"
        assert set(svc["depends_on"]) == INFRA
    dockerfile = (REPO / "deploy" / "compose" / "Dockerfile").read_text()
    for folder in ("engram", "schemas", "streams", "projections", "core", "recall", "runtime", "cli"):
        assert f"COPY {folder} ./{folder}" in dockerfile, folder


def test_weaviate_matches_the_native_settings(compose: dict[str, Any]) -> None:
    env = compose["services"]["weaviate"]["environment"]
    assert env["DEFAULT_VECTORIZER_MODULE"] == "none"
    assert env["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "true"
    assert env["DISABLE_TELEMETRY"] == "true"
    assert env["GRPC_PORT"] == "50051"
    assert Path(env["PERSISTENCE_DATA_PATH"]).as_posix() in " ".join(compose["services"]["weaviate"]["volumes"])
