"""`engram replay --kafka`: a new generation rebuilt from the beginning of the turns topic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engram.distributed.replay import state_hash
from engram.distributed.topics import Namespace
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import as_dicts, edge_events, reference


def test_replay_rebuilds_the_same_state_in_a_new_generation(cluster: Cluster, tmp_path: Path) -> None:
    events = edge_events(seed=61, turns=300, users=4)
    cluster.produce(events)
    live = cluster.worker().start()
    cluster.wait_idle()
    live.stop()
    before = state_hash(cluster.bootstrap, cluster.ns)

    env = {**os.environ, "ENGRAM_KAFKA_BOOTSTRAP": cluster.bootstrap, "ENGRAM_KAFKA_PREFIX": cluster.ns.prefix,
           "ENGRAM_DATA": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", "from engram.cli.main import main; main()", "replay", "--kafka"],
                          env=env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "generation 1" in done.stdout and done.stdout.strip().endswith("identical"), done.stdout
    assert f"state hash after:  {before}" in done.stdout

    rebuilt = Namespace(cluster.ns.prefix, 1)
    assert state_hash(cluster.bootstrap, rebuilt) == before
    assert as_dicts(cluster.derived(rebuilt)) == as_dicts(reference(events))
