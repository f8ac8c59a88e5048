"""The processors' faust consumer uses Engram's fetch wait, not faust's hard-coded 1.5 s."""

from __future__ import annotations

import asyncio

import pytest

from tests.services import import_client  # noqa: E402

import_client("faust", "kafka")

from engram.distributed.app import WorkerSettings, build_app  # noqa: E402
from engram.distributed.topics import Namespace  # noqa: E402


@pytest.mark.parametrize(("seconds", "expected_ms"), [(0.05, 50), (0.2, 200), (1.5, 1500)])
def test_the_worker_consumer_waits_at_most_the_configured_fetch_wait(kafka_bootstrap: str, seconds: float,
                                                                       expected_ms: int) -> None:
    settings = WorkerSettings(bootstrap=kafka_bootstrap, namespace=Namespace("fetchwait."), fetch_max_wait=seconds)
    app = build_app(settings)

    async def created_consumer_wait() -> int:
        consumer = app.consumer._thread._create_worker_consumer(app.transport)
        return int(consumer._fetch_max_wait_ms)

    assert asyncio.run(created_consumer_wait()) == expected_ms


def test_the_default_fetch_wait_is_short() -> None:
    assert WorkerSettings(bootstrap="x").fetch_max_wait <= 0.1
