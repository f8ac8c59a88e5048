"""Topics from the catalogue, created idempotently on a real broker."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import ConfigResource, NewTopic, ResourceType

from engram.distributed.admin import TopicMismatch, admin_client, ensure_topics
from engram.distributed.topics import Namespace, all_specs, changelog_specs
from engram.schemas import topics as t
from tests.distributed.conftest import Cluster


def _configs(bootstrap: str, topic: str) -> dict[str, str]:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    admin = admin_client(bootstrap)  # keep the client alive until the future resolves
    found = admin.describe_configs([resource])[resource].result(timeout=30)
    return {name: entry.value for name, entry in found.items()}


def test_names_put_derived_topics_and_changelogs_in_a_generation_but_not_the_l0_topics() -> None:
    ns = Namespace("acme.", generation=2)
    assert ns.topic(t.TURNS) == "acme.engram.turns" and ns.topic(t.COMMANDS) == "acme.engram.commands"
    assert ns.topic(t.CANDIDATES) == "acme.engram.candidates.g2"
    assert ns.changelog("processors", "consolidate") == "acme.engram-processors-g2-consolidate-state-changelog"
    assert ns.catalogue_name("acme.engram.memory-changes.g2") == t.MEMORY_CHANGES.name
    assert {s.configs["cleanup.policy"] for s in changelog_specs(ns, "processors")} == {"compact"}


def test_catalogue_topics_exist_with_partitions_retention_and_compaction(cluster: Cluster) -> None:
    names = admin_client(cluster.bootstrap).list_topics(timeout=30).topics
    for spec in all_specs(cluster.ns):
        assert len(names[spec.name].partitions) == spec.partitions == t.TURNS.partitions
    turns = _configs(cluster.bootstrap, cluster.ns.topic(t.TURNS))
    assert turns["retention.ms"] == "-1" and turns["cleanup.policy"] == "delete"  # L0 is kept forever
    changelog = _configs(cluster.bootstrap, cluster.ns.changelog("processors", "consolidate"))
    assert changelog["cleanup.policy"] == "compact"
    assert _configs(cluster.bootstrap, cluster.ns.topic(t.DEAD_LETTERS))["cleanup.policy"] == "delete"


def test_ensuring_topics_again_creates_nothing_and_changes_nothing(cluster: Cluster) -> None:
    before = _configs(cluster.bootstrap, cluster.ns.topic(t.RECALLS))
    report = ensure_topics(cluster.bootstrap, all_specs(cluster.ns))
    assert report.created == [] and len(report.existing) == len(all_specs(cluster.ns))
    assert _configs(cluster.bootstrap, cluster.ns.topic(t.RECALLS)) == before


def test_a_topic_with_the_wrong_partition_count_is_refused(cluster: Cluster) -> None:
    ns = Namespace(cluster.ns.prefix + "bad.")
    admin = admin_client(cluster.bootstrap)
    admin.create_topics([NewTopic(ns.topic(t.TURNS), num_partitions=1, replication_factor=1)])[
        ns.topic(t.TURNS)].result(timeout=30)
    with pytest.raises(TopicMismatch, match="1 partitions"):
        ensure_topics(cluster.bootstrap, all_specs(ns))
