"""The `engram` command line as a user drives it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.access.models import RecallResponse
from engram.cli.main import cli

MEMORY_FIELDS = {"memory_id", "type", "slot", "content", "confidence", "importance", "source_count", "status",
                 "source_message_ids", "created_at", "updated_at"}


def _line(message_id: str, content: str, *, role: str = "user", session: str = "s1", user: str = "u1") -> str:
    return json.dumps({"tenant": "t1", "user": user, "agent": "a1", "session": session, "message_id": message_id,
                       "role": role, "content": content, "ts": f"2026-03-01T10:{int(message_id[1:]):02d}:00Z"},
                      ensure_ascii=False)


@pytest.fixture()
def run(tmp_path: Path):
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None):
        return runner.invoke(cli, ["--data", str(tmp_path / "data"), *args], input=stdin, obj={})

    return invoke


@pytest.fixture()
def turns_file(tmp_path: Path) -> Path:
    lines = [
        _line("m1", "我是后端开发"),
        "{this is not json",
        _line("m2", "我喜欢Java编程"),
        json.dumps({"tenant": "t1", "user": "u1", "agent": "a1", "session": "s1", "message_id": "m3",
                    "role": "robot", "content": "hi"}),
        "",
        _line("m4", "我是前端开发"),
        json.dumps({"tenant": "t 1", "user": "u1", "agent": "a1", "session": "s1", "message_id": "m5",
                    "role": "user", "content": "我喜欢猫"}),
    ]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ingest_reports_bad_lines_by_number_and_keeps_the_valid_ones(run, turns_file: Path) -> None:
    result = run("ingest", str(turns_file))
    assert result.exit_code == 1
    assert ":2: not valid JSON" in result.output
    assert ":4: role" in result.output
    assert ":7: tenant" in result.output
    assert "ingested 3 turns" in result.output
    memories = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)
    assert {m["content"] for m in memories} >= {c for c in (m["content"] for m in memories) if "前端" in c}
    assert any("前端" in m["content"] for m in memories)


def test_reingesting_the_same_file_adds_nothing(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    before = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)
    again = run("ingest", str(turns_file))
    assert "ingested 0 turns (3 already known" in again.output
    after = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)
    assert after == before


def test_memories_json_has_the_documented_fields(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    memories = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)
    assert memories and all(MEMORY_FIELDS <= set(m) for m in memories)
    occupation = [m for m in memories if m["slot"] == "user_profile.occupation"]
    assert len(occupation) == 1 and occupation[0]["source_message_ids"] == ["m4"]


def test_unknown_user_has_no_memories_and_is_told_so(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    result = run("memories", "--tenant", "t1", "--user", "nobody")
    assert result.exit_code == 0 and "nothing is recorded for user 'nobody' in tenant 't1'" in result.output
    assert json.loads(run("memories", "--tenant", "t1", "--user", "nobody", "--json").output) == []
    named = run("history", "--tenant", "t1", "--user", "nobody", "abcd")
    assert named.exit_code == 1 and "unknown_user" in named.output


def test_recall_json_is_the_http_answer(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    result = run("recall", "--tenant", "t1", "--user", "u1", "--agent", "a1", "--session", "s1", "--json",
                 "我喜欢什么编程语言")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert set(body) == set(RecallResponse.model_fields)
    long_term = [item for item in body["items"] if item["kind"] in ("memory", "persona")]
    assert any("Java" in item["text"] for item in long_term)
    assert all({"score", "source_message_ids", "memory_id"} <= set(item) for item in long_term)
    assert body["retrieval_ms"] >= 0 and "仅供参考" in body["context"]
    assert body["degraded"] is False and body["missed"] == []


def test_summary_history_and_replay(run, tmp_path: Path) -> None:
    lines = [_line(f"m{i}", f"第{i}条消息：我计划把订单服务拆成微服务，需要先梳理数据库依赖和接口。") for i in range(1, 13)]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert run("ingest", str(path)).exit_code == 0
    summary = run("summary", "--tenant", "t1", "--session", "s1", "--json")
    assert summary.exit_code == 0, summary.output
    assert json.loads(summary.output)["source_message_count"] == 12
    assert run("summary", "--tenant", "t1", "--session", "nope").exit_code != 0
    memory = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)[0]
    history = run("history", "--tenant", "t1", "--user", "u1", "--json", memory["memory_id"])
    steps = json.loads(history.output)
    assert steps[0]["change"] == "created" and steps[0]["turns"][0]["message_id"] in memory["source_message_ids"]
    replay = run("replay")
    assert replay.exit_code == 0 and "identical" in replay.output


def test_ingest_reads_stdin(run) -> None:
    result = run("ingest", "-", stdin=_line("m1", "我叫八千代") + "\n")
    assert result.exit_code == 0 and "ingested 1 turns" in result.output


def test_demo_runs_as_an_installed_command(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "engram"
    done = subprocess.run([str(exe), "--data", str(tmp_path / "demo"), "demo"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "memories of demo/alice" in done.stdout and "summary of s-zh-1" in done.stdout
    assert "13800138000" not in done.stdout


def test_recall_in_a_new_session_or_for_a_new_user_is_normal(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    fresh = run("recall", "--tenant", "t1", "--user", "u1", "--agent", "a1", "--session", "brand-new", "--json",
                "我喜欢什么编程语言")
    assert fresh.exit_code == 0, fresh.output
    body = json.loads(fresh.output)
    assert (body["user_known"], body["session_known"], body["recent"]) == (True, False, [])
    assert any("Java" in item["text"] for item in body["items"] if item["kind"] == "memory")
    nobody = run("recall", "--tenant", "t1", "--user", "nobody", "--agent", "a1", "--session", "s1", "hello")
    assert nobody.exit_code == 0 and "new user" in nobody.output and "nothing recalled" in nobody.output


def test_search_correct_pin_unpin_and_forget_take_the_short_ids_the_list_shows(run, tmp_path: Path) -> None:
    turns = tmp_path / "controls.jsonl"
    turns.write_text("\n".join([_line("m1", "I prefer green tea in the morning"), _line("m2", "I live in Porto"),
                                _line("m3", "I work as a nurse in Lisbon")]) + "\n", encoding="utf-8")
    run("ingest", str(turns))
    found = json.loads(run("search", "--tenant", "t1", "--user", "u1", "--json", "tea").output)
    tea = found["results"][0]["memory"]["memory_id"]
    assert found["results"][0]["memory"]["content"] == "User prefers green tea in the morning"
    assert found["user_known"] is True  # the HTTP API's search answer
    short = tea[:8]
    assert "prefix_too_short" in run("memory", "--tenant", "t1", "--user", "u1", tea[:3]).output
    assert json.loads(run("memory", "--tenant", "t1", "--user", "u1", "--json", short).output)["memory_id"] == tea
    corrected = run("correct", "--tenant", "t1", "--user", "u1", short, "User prefers jasmine tea")
    assert corrected.exit_code == 0 and "1 memory changed" in corrected.output and "jasmine" in corrected.output
    assert "pinned" in run("pin", "--tenant", "t1", "--user", "u1", short).output
    assert "unpinned" in run("unpin", "--tenant", "t1", "--user", "u1", short).output
    history = run("history", "--tenant", "t1", "--user", "u1", short)
    assert history.exit_code == 0 and "corrected" in history.output
    gone = run("forget", "--tenant", "t1", "--user", "u1", "--json", short)
    assert json.loads(gone.output)["affected"] == 1
    again = run("forget", "--tenant", "t1", "--user", "u1", short)
    assert again.exit_code != 0 and "no active memory" in again.output
    assert run("forget", "--tenant", "t1", "--user", "u1").exit_code == 2
    preview = json.loads(run("forget", "--tenant", "t1", "--user", "u1", "--everything", "--dry-run", "--json").output)
    assert (preview["affected"], preview["dry_run"]) == (2, True)
    assert "unknown_user" in run("forget", "--user", "u1", "--everything").output  # tenant `default` by default
    everything = run("forget", "--tenant", "t1", "--user", "u1", "--everything")
    assert "2 memories changed" in everything.output


def test_version_and_data_after_the_subcommand(tmp_path: Path, turns_file: Path) -> None:
    runner = CliRunner()
    version = runner.invoke(cli, ["--version"], obj={})
    assert version.exit_code == 0 and "0.1.0" in version.output
    data = str(tmp_path / "late")
    assert runner.invoke(cli, ["ingest", "--data", data, str(turns_file)], obj={}).exit_code == 1  # bad lines
    listed = runner.invoke(cli, ["memories", "--tenant", "t1", "--user", "u1", "--data", data, "--json"], obj={})
    assert listed.exit_code == 0 and json.loads(listed.output)
    assert (tmp_path / "late" / "engram.db").exists()


def test_a_command_is_refused_while_a_server_holds_the_folder(tmp_path: Path, turns_file: Path) -> None:
    from engram.access.backend import EmbeddedBackend

    data = tmp_path / "data"
    engram = [sys.executable, "-m", "engram.cli.main", "--data", str(data)]
    subprocess.run([*engram, "ingest", str(turns_file)], capture_output=True, text=True, timeout=120)
    server = EmbeddedBackend.open(data)  # what `engram serve` holds
    try:
        forgot = subprocess.run([*engram, "forget", "--tenant", "t1", "--user", "u1", "--everything"],
                                capture_output=True, text=True, timeout=120)
        listed = subprocess.run([*engram, "memories", "--tenant", "t1", "--user", "u1"],
                                capture_output=True, text=True, timeout=120)
    finally:
        server.close()
    assert forgot.returncode != 0 and "in use by process" in forgot.stderr and "Traceback" not in forgot.stderr
    # reads too: a command opens the runtime (which may finish a forget) and a recall logs its observation
    assert listed.returncode != 0 and "in use by process" in listed.stderr and "Traceback" not in listed.stderr
    assert "前端" in subprocess.run([*engram, "memories", "--tenant", "t1", "--user", "u1"], capture_output=True,
                                  text=True, timeout=120).stdout


def test_ingest_and_replay_go_through_the_runtime_port(run, tmp_path: Path) -> None:
    """Like the other writes: refused while a server holds the folder, counted through the port when not."""
    from engram.runtime.backend import EmbeddedBackend

    path = tmp_path / "one.jsonl"
    path.write_text(_line("m1", "I live in Porto") + "\n", encoding="utf-8")
    with EmbeddedBackend.open(tmp_path / "data"):  # what `engram serve` holds
        busy = run("ingest", str(path))
        assert busy.exit_code == 1 and "in use by process" in busy.output
        assert run("replay").exit_code == 1
    assert run("ingest", str(path)).exit_code == 0
    replay = run("replay")
    assert replay.exit_code == 0, replay.output
    replayed = int(replay.output.split()[1])
    assert replayed >= 2 and "identical" in replay.output  # the turn and what it derived


def test_the_json_names_ids_as_every_other_surface(run, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(_line("m1", "I live in Porto") + "\n", encoding="utf-8")
    run("ingest", str(path))
    memory = json.loads(run("memories", "--tenant", "t1", "--user", "u1", "--json").output)[0]
    assert memory["memory_id"] and memory["id"] == memory["memory_id"]  # `id`: deprecated alias
    recall = json.loads(run("recall", "--tenant", "t1", "--user", "u1", "--agent", "a1", "--session", "s2",
                            "--json", "Where do I live?").output)
    item = next(i for i in recall["items"] if i["kind"] == "memory")
    assert item["item_id"] == item["memory_id"] == memory["memory_id"] == item["id"]


def test_profile_lists_the_standing_entries(run, turns_file: Path) -> None:
    run("ingest", str(turns_file))
    profile = json.loads(run("profile", "--tenant", "t1", "--user", "u1", "--json").output)
    assert profile["user_known"] and profile["entries"]
    assert any(e["slot"] == "user_profile.occupation" for e in profile["entries"])
    text = run("profile", "--tenant", "t1", "--user", "u1").output
    assert profile["entries"][0]["memory_id"][:8] in text
