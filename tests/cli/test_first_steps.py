"""What a new user hits first: a missing file, a mistyped folder, an empty question, the demo's hint."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from engram.cli.demo import engram_command
from engram.cli.main import cli


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), obj={})
    return result.exit_code, result.output


def test_a_missing_file_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    code, output = _run("--data", str(tmp_path / "d"), "ingest", str(tmp_path / "nofile.jsonl"))
    assert code == 2 and "does not exist" in output and "Traceback" not in output


def test_a_mistyped_data_folder_is_not_created_by_a_read(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    for command in (["memories", "--user", "u"], ["recall", "--user", "u", "hi"], ["search", "--user", "u", "x"]):
        code, output = _run("--data", str(typo), *command)
        assert code == 1 and f"no Engram data in {typo}" in output, command
    assert not typo.exists()


def test_an_empty_question_is_refused_as_on_every_other_door(tmp_path: Path) -> None:
    line = '{"tenant":"t","user":"u","message_id":"1","content":"I prefer green tea"}\n'
    (tmp_path / "one.jsonl").write_text(line, encoding="utf-8")
    assert _run("--data", str(tmp_path / "d"), "ingest", str(tmp_path / "one.jsonl"))[0] == 0
    code, output = _run("--data", str(tmp_path / "d"), "recall", "--tenant", "t", "--user", "u", "")
    assert code == 1 and "question" in output and "at least 1 character" in output


def test_the_demo_suggests_a_command_this_shell_can_run() -> None:
    command = engram_command()
    assert command == "engram" or Path(command).name == "engram" and Path(command).exists()
