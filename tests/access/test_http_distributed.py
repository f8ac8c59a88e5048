"""The same HTTP tests on the distributed runtime: `engram serve` over Kafka, a real worker, Weaviate, chDB.

The server runs the DistributedBackend (what `engram serve` opens with ENGRAM_RUNTIME=distributed); a
real `engram worker --role all` process does the processing. The test functions are the embedded ones,
imported, so both runtimes pass the same checks.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.access.app import build_server, server_app
from engram.access.auth import KeyRing
from engram.access.http_app import Limits

from .conftest import MAX_BATCH, MAX_BODY, Deployment, LiveServer, new_id
from .test_cards_http import (  # noqa: F401  (collected here, run on the distributed runtime)
    test_a_stale_expected_version_is_refused_and_no_version_means_the_current_one,
    test_the_runtime_decides_two_requests_made_on_one_version,
    test_two_card_updates_on_one_version_one_wins_and_the_other_is_a_409,
    two_updates_on_one_version,
)
from .test_http_api import (  # noqa: F401  (collected here, run on the distributed runtime)
    test_a_chat_loop_that_recalls_before_recording_has_memory_on_the_first_message_of_a_new_session,
    test_a_new_session_gets_long_term_memory_and_a_new_user_an_empty_context,
    test_correct_pin_and_unpin_report_what_really_changed,
    test_feedback_attaches_to_the_recall_it_names,
    test_forget_one_and_forget_by_topic_delete_exactly_what_they_say,
    test_list_get_and_lineage_of_a_memory,
    test_reads_of_one_named_thing_say_it_does_not_exist,
    test_recall_assembles_the_context_and_logs_the_observation,
    test_search_is_normal_for_a_new_session_and_a_new_user,
    test_the_profile_lists_the_standing_entries_and_a_new_user_has_none,
    test_the_recall_deadline_is_end_to_end,
)

pytestmark = [pytest.mark.kafka, pytest.mark.weaviate]


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from tests.distributed_driver import Deployment as Cluster

    bootstrap = request.getfixturevalue("kafka_bootstrap")
    endpoint = request.getfixturevalue("weaviate_endpoint")
    cluster = Cluster(bootstrap, endpoint.url, endpoint.grpc_port, tmp_path_factory.mktemp("cluster"))
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def deployment(cluster: object) -> Iterator[Deployment]:
    from engram.distributed.backend import DistributedBackend
    from engram.distributed.facade import DistributedRuntime

    tenants = new_id("tenantA"), new_id("tenantB")
    keys = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    admin, token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    ring = KeyRing.parse(f"{keys[0]}:{tenants[0]},{keys[1]}:{tenants[1]}", admin)
    backend = DistributedBackend(DistributedRuntime(cluster.endpoints, wait_timeout=120.0))  # type: ignore[attr-defined]
    app = server_app(backend, ring, "127.0.0.1", Limits(MAX_BODY, MAX_BATCH), with_mcp=True, mcp_token=token)
    try:
        with LiveServer(app) as live:
            deployment = Deployment(live.url, backend, *tenants, *keys, admin, token)  # type: ignore[arg-type]
            yield deployment
            for client in deployment.clients:
                client.close()
    finally:
        backend.runtime.store.drop()
        backend.close()


def test_a_resent_turn_changes_nothing(deployment: Deployment) -> None:
    """Kafka takes a re-sent turn (the workers drop it), so it is not counted as a duplicate at the edge."""
    from .conftest import turn

    d, user = deployment, new_id("user")
    single = turn(d.tenant_a, user, "I prefer green tea in the morning", message_id="m1")
    first = d.as_a().post("/v1/turns", json=single).json()
    assert first["appended"] == 1 and first["events"]["MemoryChanged"] == 1
    again = d.as_a().post("/v1/turns", json={"turns": [single, turn(d.tenant_a, user, "My name is Ana Lima")]})
    assert again.json()["events"]["MemoryChanged"] == 1
    contents = {m["content"] for m in d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()}
    assert contents == {"User prefers green tea in the morning", "User's name is Ana Lima"}


def test_engram_serve_opens_the_runtime_engram_runtime_names(cluster: object, tmp_path: Path) -> None:
    env = {**cluster.env(), "ENGRAM_DATA": str(tmp_path / "d")}  # type: ignore[attr-defined]
    app, notice = build_server(tmp_path / "d", "127.0.0.1", False, env)
    assert "distributed runtime" in notice
    with LiveServer(app) as live:
        import httpx

        assert httpx.get(f"{live.url}/v1/health").json()["runtime"] == "distributed"


@pytest.fixture(scope="module")
def second_server(cluster: object, deployment: Deployment) -> Iterator[str]:
    """Another server process's worth of state: its own back end, waiter, producer and HTTP server."""
    from engram.distributed.backend import DistributedBackend
    from engram.distributed.facade import DistributedRuntime

    ring = KeyRing.parse(f"{deployment.key_a}:{deployment.tenant_a},{deployment.key_b}:{deployment.tenant_b}",
                         deployment.admin_key)
    backend = DistributedBackend(DistributedRuntime(cluster.endpoints, wait_timeout=120.0))  # type: ignore[attr-defined]
    try:
        with LiveServer(server_app(backend, ring, "127.0.0.1", Limits(MAX_BODY, MAX_BATCH))) as live:
            yield live.url
    finally:
        backend.close()


def test_two_servers_decide_card_changes_together(deployment: Deployment, second_server: str) -> None:
    """Two servers with no shared in-process state: one of two changes on one version wins, the other is a 409."""
    import httpx

    other = httpx.Client(base_url=second_server, headers={"Authorization": f"Bearer {deployment.key_a}"},
                         timeout=120)
    deployment.clients.append(other)
    two_updates_on_one_version(deployment, (deployment.as_a(), other))


def test_feedback_reaches_a_recall_served_by_another_server(deployment: Deployment, second_server: str) -> None:
    import httpx

    d, user = deployment, new_id("user")
    assert d.as_a().post("/v1/turns", json={"turns": [
        {"tenant": d.tenant_a, "user": user, "agent": "coach", "session": "s1", "role": "user",
         "message_id": "m1", "content": "I prefer green tea in the morning"}]}).status_code == 200
    recall = d.as_a().post("/v1/recall", json={"tenant": d.tenant_a, "user": user, "agent": "coach", "session": "s1",
                                               "question": "What do I drink?", "deadline_ms": 10_000}).json()
    other = httpx.Client(base_url=second_server, headers={"Authorization": f"Bearer {d.key_a}"}, timeout=120)
    d.clients.append(other)
    given = other.post("/v1/feedback", json={"tenant": d.tenant_a, "user": user, "recall_id": recall["recall_id"],
                                             "rating": 1})
    assert given.status_code == 200, given.text
    unknown = other.post("/v1/feedback", json={"tenant": d.tenant_a, "user": user, "recall_id": "no-such-recall",
                                               "rating": 1})
    assert unknown.status_code == 404
