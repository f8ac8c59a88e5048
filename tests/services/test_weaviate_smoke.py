"""Smoke test: a real Weaviate through weaviate-client v4 (multi-tenancy, own vectors, hybrid)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.services import import_client

weaviate = import_client("weaviate", "weaviate")
import weaviate.classes as wvc  # noqa: E402

from tests.services import WeaviateEndpoint  # noqa: E402

pytestmark = pytest.mark.weaviate

NS = uuid.UUID("6f1f6c7e-4d2a-5b7e-9a51-2f0c3c1d9e10")
DOCS = [  # (user, kind, text, vector)
    ("u1", "semantic", "prefers oat milk in coffee", [0.9, 0.1, 0.0, 0.0]),
    ("u1", "semantic", "lives in Lisbon", [0.0, 0.9, 0.1, 0.0]),
    ("u1", "episodic", "asked about coffee grinders yesterday", [0.7, 0.0, 0.3, 0.0]),
    ("u1", "episodic", "booked a train to Porto", [0.0, 0.5, 0.5, 0.0]),
    ("u2", "semantic", "drinks coffee black", [0.8, 0.0, 0.0, 0.2]),
    ("u2", "episodic", "mentioned a coffee allergy joke", [0.6, 0.2, 0.0, 0.2]),
]


def doc_id(tenant: str, index: int) -> uuid.UUID:
    return uuid.uuid5(NS, f"{tenant}/memory/{index}")


@pytest.fixture
def client(weaviate_endpoint: WeaviateEndpoint) -> Iterator[Any]:
    c = weaviate_endpoint.connect()
    try:
        assert c.is_ready()
        yield c
    finally:
        c.close()


@pytest.fixture
def collection(client: Any) -> Iterator[Any]:
    name = f"EngramSmoke{uuid.uuid4().hex[:10]}"
    coll = client.collections.create(
        name,
        multi_tenancy_config=wvc.config.Configure.multi_tenancy(enabled=True),
        vector_config=wvc.config.Configure.Vectors.self_provided(),
        properties=[
            wvc.config.Property(name="text", data_type=wvc.config.DataType.TEXT),
            wvc.config.Property(name="user_id", data_type=wvc.config.DataType.TEXT,
                                tokenization=wvc.config.Tokenization.FIELD),
            wvc.config.Property(name="kind", data_type=wvc.config.DataType.TEXT,
                                tokenization=wvc.config.Tokenization.FIELD),
        ],
    )
    coll.tenants.create([wvc.tenants.Tenant(name="tenant-a"), wvc.tenants.Tenant(name="tenant-b")])
    try:
        yield coll
    finally:
        client.collections.delete(name)


def batch_insert(tenant_coll: Any, tenant: str) -> None:
    with tenant_coll.batch.fixed_size(batch_size=4) as batch:
        for i, (user, kind, text, vector) in enumerate(DOCS):
            batch.add_object(properties={"text": text, "user_id": user, "kind": kind},
                             uuid=doc_id(tenant, i), vector=vector)
    assert not tenant_coll.batch.failed_objects, tenant_coll.batch.failed_objects


def count(tenant_coll: Any) -> int:
    return int(tenant_coll.aggregate.over_all(total_count=True).total_count)


def test_multi_tenant_batch_hybrid_delete_and_isolation(collection: Any) -> None:
    a = collection.with_tenant("tenant-a")
    b = collection.with_tenant("tenant-b")

    batch_insert(a, "tenant-a")
    batch_insert(a, "tenant-a")  # same deterministic ids: a replay upserts, adds nothing
    assert count(a) == len(DOCS)
    stored = a.query.fetch_object_by_id(doc_id("tenant-a", 1), include_vector=True)
    assert stored is not None and stored.properties["text"] == "lives in Lisbon"
    assert stored.vector["default"] == pytest.approx(DOCS[1][3], abs=1e-6)

    hits = a.query.hybrid(
        query="coffee", vector=[1.0, 0.0, 0.0, 0.0], alpha=0.5, limit=10,
        filters=wvc.query.Filter.by_property("user_id").equal("u1"),
        return_metadata=wvc.query.MetadataQuery(score=True),
    ).objects
    assert hits, "hybrid query found nothing"
    assert {o.properties["user_id"] for o in hits} == {"u1"}
    assert hits[0].uuid == doc_id("tenant-a", 0)
    assert {o.uuid for o in hits[:2]} == {doc_id("tenant-a", 0), doc_id("tenant-a", 2)}

    deleted = a.data.delete_many(where=wvc.query.Filter.by_property("kind").equal("episodic"))
    assert deleted.successful == 3 and deleted.failed == 0
    assert count(a) == 3
    assert {o.properties["kind"] for o in a.query.fetch_objects(limit=10).objects} == {"semantic"}

    assert count(b) == 0
    assert b.query.fetch_object_by_id(doc_id("tenant-a", 0)) is None
    assert b.query.hybrid(query="coffee", vector=[1.0, 0.0, 0.0, 0.0], limit=10).objects == []
