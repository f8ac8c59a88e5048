"""`weaviate_batch` builds the same gRPC message as the client's `insert_many`, or leaves the object to it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("weaviate")

from weaviate.collections.batch.grpc_batch import _BatchGRPC  # noqa: E402
from weaviate.collections.classes.batch import _BatchObject  # noqa: E402
from weaviate.util import _ServerVersion  # noqa: E402

from engram.projections import weaviate_batch  # noqa: E402
from engram.projections.weaviate_batch import batch_object, insert  # noqa: E402

UID = "6f1c2b9e-5d0a-4c57-9a61-2f0e8d7b3c41"
AT = datetime(2026, 12, 2, 17, 5, 3, 120, tzinfo=timezone.utc)

MEMORY = {
    "tenant_id": "acme", "user_id": "u-1", "memory_id": "m-1", "agent_id": "", "session_id": "s-1", "layer": "L2",
    "type": "preference", "slot": "food.likes", "status": "active", "topic": "4f1a 9c0e", "search_text": "a b c é 中文",
    "importance": 0.5, "confidence": 1.0, "source_count": 3, "version": 7, "pinned": False, "last_seen_at": AT,
    "updated_at": AT.astimezone(timezone(timedelta(hours=2))), "source_message_ids": ["m1", "m2"],
    "embedding_model": "hash-512", "record": '{"_sealed_text":{"k":"x","n":"y","c":"z"}}',
}
TURN = {"tenant_id": "acme", "user_id": "u-1", "session_id": "s-1", "message_id": "m-9", "role": "user",
        "position": 2 ** 40 + 1, "occurred_at": AT.replace(microsecond=0), "content": "hello"}
SAMPLES = [
    (MEMORY, np.linspace(-1, 1, 512, dtype=np.float32)),
    ({**MEMORY, "source_message_ids": [], "pinned": True, "importance": 0, "topic": ""}, None),
    (TURN, None),
    ({"tenant_id": "acme", "user_id": "u-1"}, None),
    ({}, None),
]


def _client_message(props: dict[str, Any], vector: np.ndarray | None) -> Any:
    obj = _BatchObject(collection="EtestEngramMemory", vector=None if vector is None else vector.tolist(),
                       uuid=UID, properties=props, tenant="acme", references=None, index=0)
    return _BatchGRPC(_ServerVersion(1, 32, 0), None, None).grpc_object(obj)


@pytest.mark.parametrize("props,vector", SAMPLES)
def test_the_message_is_the_clients(props: dict[str, Any], vector: np.ndarray | None) -> None:
    mine = batch_object("EtestEngramMemory", "acme", UID, props, vector)
    assert mine is not None
    assert mine == _client_message(props, vector)


@pytest.mark.parametrize("value", [None, datetime(2026, 1, 1), [1, 2], ["a", 1], {"a": 1}, np.float32(1.5), (1,)])
def test_other_values_are_left_to_the_client(value: Any) -> None:
    assert batch_object("C", "acme", UID, {**TURN, "extra": value}, None) is None


class _Data:
    """A tenant collection's `data` as the client has it: the connection's batch call, or `insert_many`."""

    def __init__(self, name: str, connection: Any = None, tenant: str = "acme") -> None:
        self.name, self._tenant, self._consistency_level = name, tenant, None
        self.many: list[Any] = []
        if connection is not None:
            self._connection = connection

    def insert_many(self, objects: list[Any]) -> Any:
        self.many.append(objects)
        return SimpleNamespace(errors={0: SimpleNamespace(message="no")})


class _Connection:
    def __init__(self) -> None:
        self.timeout_config = SimpleNamespace(insert=90)
        self.sent: list[Any] = []

    def grpc_batch_objects(self, request: Any, timeout: float, max_retries: float) -> dict[int, str]:
        self.sent.append(request)
        return {1: "rejected"} if len(request.objects) > 1 else {}


def test_one_request_carries_every_collection_and_tenant_in_chunks() -> None:
    connection = _Connection()
    turns, memories = _Data("ETurn", connection), _Data("EMemory", connection, tenant="h-1")
    groups = [(SimpleNamespace(data=turns), [(UID, TURN, None, 0), (UID, TURN, None, 0)]),
              (SimpleNamespace(data=memories), [(UID, MEMORY, np.ones(3), 1)])]
    assert insert(groups, chunk=2) == [("ETurn", "rejected")]
    first, second = connection.sent
    assert [(o.collection, o.tenant) for o in first.objects] == [("ETurn", "acme"), ("ETurn", "acme")]
    assert list(second.objects) == [batch_object("EMemory", "h-1", UID, MEMORY, np.ones(3))]
    assert not turns.many and not memories.many


@pytest.mark.parametrize("with_grpc", [True, False])
def test_a_value_it_does_not_build_sends_every_group_through_insert_many(with_grpc: bool) -> None:
    connection = _Connection() if with_grpc else None
    turns, users = _Data("ETurn", connection), _Data("EUser", connection)
    groups = [(SimpleNamespace(data=turns), [(UID, TURN, None, 0), (UID, {**TURN, "extra": None}, [1.0], 0)]),
              (SimpleNamespace(data=users), [(UID, {"tenant_id": "acme"}, None, 0)])]
    assert insert(groups, chunk=500) == [("ETurn", "no"), ("EUser", "no")]
    assert connection is None or not connection.sent
    assert [o.vector for o in turns.many[0]] == [None, [1.0]] and len(users.many) == 1


def test_without_the_proto_modules_everything_goes_through_insert_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weaviate_batch, "batch_pb2", None)
    connection = _Connection()
    data = _Data("ETurn", connection)
    insert([(SimpleNamespace(data=data), [(UID, TURN, None, 0)])], chunk=500)
    assert data.many and not connection.sent
