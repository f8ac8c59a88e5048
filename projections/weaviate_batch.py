"""Batch upserts to Weaviate with the gRPC messages built here, not by the client.

The client's `insert_many` turns every property into protobuf through a chain of
`isinstance` tests and one `Struct.update` per property, then builds a `UUID` per
object for its reply: about 120 µs of Python per object, the largest single cost
of a projector's flush (measured with `bench.projector_cost`). The properties this
store writes have few types (text, numbers, booleans, aware datetimes, text lists),
so `batch_object` maps them directly, into the same message the client would send
(`tests/unit/test_weaviate_batch.py` compares the messages, and
`tests/contract/test_weaviate_batch_objects.py` what Weaviate then holds). A flush
sends one request for all its collections and tenants (a `BatchObject` names both),
not one per collection and tenant: each round trip costs ~1 ms of CPU. An object with
any other value, or a client without the gRPC call used here, goes through
`insert_many` unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np

Item = tuple[str, dict[str, Any], Any, int]
"""(uuid, properties, vector or None, version) of one buffered object."""
MAX_RETRIES = 2
"""As `insert_many` asks of the connection."""

try:
    from google.protobuf.struct_pb2 import Struct
    from weaviate.proto.v1 import base_pb2, batch_pb2
except ImportError:  # pragma: no cover - a client without these modules takes the `insert_many` path
    batch_pb2 = None  # type: ignore[assignment]


def batch_object(collection: str, tenant: str | None, uid: str, props: dict[str, Any],
                 vector: Any) -> Any | None:
    """The `BatchObject` the client would build for this object, or None for a value type it is not built for."""
    struct = Struct()
    fields = struct.fields  # set in place, as `Struct.update` does, without its per-value type tests
    texts: list[Any] = []
    empty: list[str] = []
    for key, value in props.items():
        kind = type(value)
        if kind is str:
            fields[key].string_value = value
        elif kind is int or kind is float:
            fields[key].number_value = value
        elif kind is bool:
            fields[key].bool_value = value
        elif kind is datetime and value.tzinfo is not None:
            fields[key].string_value = value.isoformat(sep="T", timespec="microseconds")
        elif kind is list and not value:
            empty.append(key)
        elif kind is list and all(type(v) is str for v in value):
            texts.append(base_pb2.TextArrayProperties(prop_name=key, values=value))
        else:
            return None
    properties = batch_pb2.BatchObject.Properties(non_ref_properties=struct,
                                                  text_array_properties=texts, empty_list_props=empty)
    return batch_pb2.BatchObject(collection=collection, uuid=uid, properties=properties, tenant=tenant,
                                 vector_bytes=_vector_bytes(vector))


def _vector_bytes(vector: Any) -> bytes | None:
    """The client's packing (`struct.pack("{n}f", ...)`, native order) of a flat vector."""
    if vector is None:
        return None
    return np.asarray(vector, dtype=np.float32).tobytes()


Group = tuple[Any, list[Item]]
"""A tenant collection handle (`collections.get(name).with_tenant(t)`) and the objects to upsert into it."""


def insert(groups: list[Group], chunk: int) -> list[tuple[str, str]]:
    """Upsert every group's objects (by uuid) in gRPC batches of at most `chunk` objects, collections and
    tenants mixed in one request (one round trip a flush, not one per collection); the (collection, error)
    of each object Weaviate rejected."""
    objects = _objects(groups)
    if objects is None:
        return [(coll.data.name, error) for coll, items in groups for error in _insert_many(coll, items)]
    data = groups[0][0].data
    connection, rejected = data._connection, []
    for start in range(0, len(objects), chunk):
        part = objects[start:start + chunk]
        request = batch_pb2.BatchObjectsRequest(objects=part, consistency_level=data._consistency_level)
        errors = connection.grpc_batch_objects(request=request, timeout=connection.timeout_config.insert,
                                               max_retries=MAX_RETRIES)
        rejected += [(part[index].collection, error) for index, error in sorted(errors.items())]
    return rejected


def _objects(groups: list[Group]) -> list[Any] | None:
    """Every group's `BatchObject`s, or None when one cannot be built here (then `insert_many` sends them)."""
    if batch_pb2 is None or not groups:
        return None
    first = groups[0][0].data
    if getattr(getattr(first, "_connection", None), "grpc_batch_objects", None) is None:
        return None
    out = []
    for coll, items in groups:
        data = coll.data
        if data._connection is not first._connection or data._consistency_level != first._consistency_level:
            return None
        for uid, props, vector, _version in items:
            built = batch_object(data.name, data._tenant, uid, props, vector)
            if built is None:
                return None
            out.append(built)
    return out


def _insert_many(coll: Any, items: list[Item]) -> list[str]:
    from weaviate.classes.data import DataObject

    result = coll.data.insert_many([DataObject(properties=props, uuid=uid, vector=_plain(vector))
                                    for uid, props, vector, _version in items])
    return [error.message for _index, error in sorted(result.errors.items())]


def _plain(vector: Any) -> list[float] | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tolist()
