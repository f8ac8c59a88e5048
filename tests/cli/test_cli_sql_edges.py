"""`engram sql` at its edges: the clickhouse extra missing, and a chDB folder another process holds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli

ENGRAM = Path(sys.executable).parent / "engram"
LINEAGE = ["sql", "memory_lineage", "-p", "memory_id=m", "-p", "tenant=t", "-p", "user=u"]
HOLD = """
import sys, time
from engram.projections.clickhouse_client import chdb_target, open_connection
conn = open_connection(chdb_target(sys.argv[1]))
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.close()
"""


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    (tmp_path / "t.jsonl").write_text('{"tenant_id":"t","user_id":"u","agent":"a","session_id":"s","message_id":"m1","role":"user",'
                                      '"content":"I moved to Lisbon last spring"}\n', encoding="utf-8")
    done = CliRunner(env={"ENGRAM_ANALYTICS": "off"}).invoke(
        cli, ["--data", str(tmp_path / "d"), "ingest", str(tmp_path / "t.jsonl")], obj={})
    assert done.exit_code == 0, done.output
    return tmp_path / "d"


def _hold(data: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(data), str(seconds)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _sql(data: Path, wait: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return subprocess.run([str(ENGRAM), "--data", str(data), *LINEAGE], capture_output=True, text=True,
                          timeout=120, env={**env, "ENGRAM_SQL_WAIT": wait})


def test_sql_without_the_clickhouse_extra_gives_the_install_hint(data: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "clickhouse_connect", None)  # import now raises ImportError
    result = CliRunner().invoke(cli, ["--data", str(data), *LINEAGE], obj={})
    assert result.exit_code == 1
    assert "engram sql needs the clickhouse extra: pip install 'engram[clickhouse]'" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_sql_on_a_held_chdb_folder_says_so_in_one_line_after_the_bounded_wait(data: Path) -> None:
    holder = _hold(data, 60)
    try:
        started = time.monotonic()
        result = _sql(data, "1")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "held by another Engram process" in lines[0] and "waited 1s" in lines[0], lines
    assert waited < 60  # bounded: it gave up long before the holder let go


def test_sql_waits_for_a_holder_that_lets_go_and_then_answers(data: Path) -> None:
    holder = _hold(data, 2)
    try:
        result = _sql(data, "60")
    finally:
        holder.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(no rows)" and "Traceback" not in result.stderr
