"""`-m "not kafka"` deselects every test that needs Kafka, at collection (not once the test runs).

The suite is collected in a subprocess with a small plugin that lists, for every
test, whether `-m` kept it and which fixtures it uses (its whole fixture closure)
and with which params; no test kept may reach the Kafka fixture, directly, through
another fixture, or through the `engram` fixture's distributed param.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
import json, os
kept, dropped = [], []

def _row(item):
    spec = getattr(item, "callspec", None)
    params = {k: str(v) for k, v in spec.params.items()} if spec else {}
    return {"id": item.nodeid, "fixtures": list(getattr(item, "fixturenames", ())), "params": params,
            "marks": sorted({m.name for m in item.iter_markers()})}

def pytest_deselected(items):
    dropped.extend(_row(i) for i in items)

def pytest_collection_finish(session):
    kept.extend(_row(i) for i in session.items)
    with open(os.environ["COLLECTED_JSON"], "w") as fh:
        json.dump({"kept": kept, "dropped": dropped}, fh)
'''


def _collect(tmp_path: Path, marker_expression: str) -> dict[str, list[dict[str, object]]]:
    (tmp_path / "collected_probe.py").write_text(PLUGIN)
    out = tmp_path / "collected.json"
    env = {**os.environ, "COLLECTED_JSON": str(out),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "collected_probe", "-m", marker_expression,
         "tests"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, list[dict[str, object]]] = json.loads(out.read_text())
    return result


def _needs_kafka(row: dict[str, object]) -> bool:
    fixtures = row["fixtures"]
    params = row["params"]
    assert isinstance(fixtures, list) and isinstance(params, dict)
    uses_kafka = bool({"kafka_bootstrap", "private_kafka", "cluster"} & set(fixtures))
    return uses_kafka or params.get("engram") == "distributed"


def test_not_kafka_deselects_every_kafka_test_at_collection(tmp_path: Path) -> None:
    collected = _collect(tmp_path, "not kafka")
    kept, dropped = collected["kept"], collected["dropped"]
    leaking = [row["id"] for row in kept if _needs_kafka(row)]
    assert leaking == [], f"{len(leaking)} Kafka test(s) survive -m 'not kafka': {leaking[:10]}"
    assert any(str(row["id"]).endswith("[distributed]") for row in dropped), "no distributed golden case found"
    assert any("tests/distributed/" in str(row["id"]) for row in dropped)
    # real_llm tests are deselected by their own rule (tests/real_llm/conftest.py), Kafka or not
    assert all("kafka" in row["marks"] for row in dropped if "real_llm" not in row["marks"])  # type: ignore[operator]
    assert any(row["params"].get("engram") == "embedded" for row in kept)  # type: ignore[union-attr]
