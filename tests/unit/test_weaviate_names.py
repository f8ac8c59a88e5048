"""Weaviate collection names: one namespace, one set of collections; two namespaces never share a name."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from engram.projections.weaviate_schema import COLLECTIONS, collection_prefix

CLASS_NAME = re.compile(r"^[A-Z][_0-9A-Za-z]*$")


def names(namespace: str) -> set[str]:
    return {collection_prefix(namespace) + name for name in COLLECTIONS}


def test_look_alike_prefixes_are_three_namespaces() -> None:
    prefixes = ["probe-a", "probe_a", "probeA", "probe.a", "Probe-a", "probea"]
    seen = [collection_prefix(p) for p in prefixes]
    assert len(set(seen)) == len(prefixes), seen
    assert len(set().union(*(names(p) for p in prefixes))) == len(prefixes) * len(COLLECTIONS)


def test_the_default_namespace_keeps_the_plain_names() -> None:
    assert names("") == set(COLLECTIONS)


@given(st.text(max_size=24))
def test_every_name_is_a_valid_weaviate_class_name(namespace: str) -> None:
    for name in names(namespace):
        assert CLASS_NAME.match(name), name


@given(st.text(max_size=16), st.text(max_size=16))
def test_different_namespaces_never_share_a_collection_even_ignoring_case(a: str, b: str) -> None:
    if a == b:
        return
    assert not {n.lower() for n in names(a)} & {n.lower() for n in names(b)}


def test_generations_of_a_namespace_do_not_collide_with_other_prefixes() -> None:
    from engram.distributed.projector import weaviate_prefix
    from engram.distributed.topics import Namespace

    spaces = [Namespace("a"), Namespace("a", 1), Namespace("ag1"), Namespace("a", 2), Namespace("", 1), Namespace("g1")]
    prefixes = [collection_prefix(weaviate_prefix(ns)) for ns in spaces]
    assert len(set(prefixes)) == len(set(spaces)), prefixes
