"""Shared fixtures: runtime drivers, and the real-service fixtures from tests/services/."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.drivers import Driver, EmbeddedDriver

pytest_plugins = ["tests.services"]

TEST_MASTER_KEY = "7e57" * 16
"""The distributed runtime refuses to start without a master key (ENGRAM_MASTER_KEY; see
engram.distributed.keystore): the tests' workers and CLI commands inherit this one."""
os.environ.setdefault("ENGRAM_MASTER_KEY", TEST_MASTER_KEY)
os.environ.pop("ENGRAM_CONFIG", None)
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="engram-test-config-")
"""No config file of the machine's user (~/.config/engram/engram.toml) reaches the tests."""

RUNTIMES = ["embedded", "embedded-use", pytest.param("distributed", marks=[pytest.mark.kafka, pytest.mark.weaviate])]
"""`embedded-use`: the embedded runtime with the USE embedder (ENGRAM_EMBEDDER=use). The distributed param
carries its service markers from collection on: `-m "not kafka"` deselects it (a marker added while the test
runs, `request.applymarker`, comes too late for `-m`)."""


@pytest.fixture(params=RUNTIMES)
def engram(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Driver]:
    """A fresh Engram on each runtime the golden cases must pass on.

    `distributed`: real Kafka, a real `engram worker --role all` process, real
    Weaviate and chDB, driven through the DistributedRuntime the CLI uses.
    """
    if request.param == "embedded":
        driver: Driver = EmbeddedDriver(tmp_path / "engram")
    elif request.param == "embedded-use":
        driver = EmbeddedDriver(tmp_path / "engram", embedder="use")
    else:
        driver = _distributed(request, tmp_path)
    yield driver
    driver.close()  # type: ignore[attr-defined]


def _distributed(request: pytest.FixtureRequest, tmp_path: Path) -> Driver:
    from tests.services import import_client

    import_client("confluent_kafka", "kafka")
    import_client("faust", "kafka")
    import_client("weaviate", "weaviate")
    bootstrap = request.getfixturevalue("kafka_bootstrap")
    endpoint = request.getfixturevalue("weaviate_endpoint")
    from tests.distributed_driver import Deployment, DistributedDriver

    return DistributedDriver(Deployment(bootstrap, endpoint.url, endpoint.grpc_port, tmp_path))
