"""The projector role on real Kafka, Weaviate and chDB: split roles, SIGKILLs, and a rebuild that agrees."""

from __future__ import annotations

import random
import time

from tests.distributed.conftest import Cluster
from tests.distributed.helpers import edge_events
from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

from engram.distributed.applied import AppliedWaiter  # noqa: E402
from engram.distributed.facade import DistributedRuntime, Endpoints  # noqa: E402
from engram.distributed.rebuild import rebuild_clickhouse, rebuild_weaviate  # noqa: E402
from engram.projections.clickhouse import ClickHouseProjector  # noqa: E402
from engram.projections.clickhouse_client import chdb_target  # noqa: E402
from engram.projections.clickhouse_shared import shared_connection  # noqa: E402


def test_projectors_killed_mid_run_end_equal_to_a_rebuild(cluster: Cluster,
                                                          weaviate_endpoint: WeaviateEndpoint) -> None:
    endpoint = ("--weaviate-url", weaviate_endpoint.url, "--weaviate-grpc-port", str(weaviate_endpoint.grpc_port))
    cluster.worker("--role", "processors").start()
    projector = cluster.worker("--role", "projectors", "--commit-interval", "0.2", *endpoint, name="projector").start()
    events = edge_events(seed=11, turns=600, users=4)
    producer = cluster.produce(events)
    rng = random.Random(5)
    for _ in range(2):
        time.sleep(rng.uniform(1.0, 4.0))
        projector.kill()
        projector.start()
    target = chdb_target(cluster.folder / "data")
    endpoints = Endpoints(cluster.bootstrap, cluster.ns, weaviate_endpoint.url, weaviate_endpoint.grpc_port, target)
    with AppliedWaiter(cluster.bootstrap, cluster.ns) as waiter:
        waiter.wait(producer.delivered, timeout=240)
    projector.stop()
    assert projector.starts == 3

    with DistributedRuntime(endpoints) as runtime:
        try:
            live = runtime.store.state_hash()
            assert any(runtime.store.list_memories(f"tenant{t}", f"user{u}", ("active", "replaced")) for t in range(2) for u in range(4)), "nothing projected"
            rebuilt = rebuild_weaviate(cluster.bootstrap, cluster.ns, runtime.store, runtime.ctx.embedder)
            assert rebuilt.before == live and rebuilt.after == live, cluster.logs()
        finally:
            runtime.store.drop()

    with shared_connection(target) as conn:
        counts = ClickHouseProjector(conn).table_counts()
    assert counts["turns"] == sum(1 for e in events if e.type == "TurnRecorded")
    report = rebuild_clickhouse(cluster.bootstrap, cluster.ns, target)
    assert report.before == report.after
