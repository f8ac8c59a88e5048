"""The config file: found where the docs say, applied on both runtimes, refused whole when wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.core.config_file import ConfigError, config_path, effective, load_config
from engram.runtime.engine import EmbeddedRuntime
from engram.streams.context import default_context


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_is_looked_for_in_the_documented_order(tmp_path: Path) -> None:
    data, home = tmp_path / "data", tmp_path / "xdg"
    env = {"XDG_CONFIG_HOME": str(home)}
    assert config_path(data, env) is None and load_config(data, env).recall.deadline_ms == 300
    user_file = _write(home / "engram" / "engram.toml", "[recall]\ndeadline_ms = 200\n")
    assert config_path(data, env) == user_file and load_config(data, env).recall.deadline_ms == 200
    data_file = _write(data / "engram.toml", "[recall]\ndeadline_ms = 250\n")
    assert config_path(data, env) == data_file and load_config(data, env).recall.deadline_ms == 250
    named = _write(tmp_path / "elsewhere.toml", "[recall]\npool_size = 8\n")
    chosen = load_config(data, {**env, "ENGRAM_CONFIG": str(named)})
    assert (chosen.recall.pool_size, chosen.recall.deadline_ms) == (8, 300)  # one file, not a merge
    with pytest.raises(ConfigError, match="ENGRAM_CONFIG=.*no such file"):
        load_config(data, {**env, "ENGRAM_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize(("text", "message"), [
    ("[recal]\ndeadline_ms = 1\n", "unknown key recal (known sections: filters, guard"),
    ("[recall]\ndeadline = 1\n", "unknown key recall.deadline (known in [recall]: weights"),
    ("[recall]\ndeadline_ms = 'fast'\n", "recall.deadline_ms: Input should be a valid number"),
    ("[embedder]\nkind = 'bert'\n", "embedder.kind: Input should be 'hashing' or 'use'"),
    ("[recall.weights]\nmatch = 0.9\n", "must sum to 1"),
    ("[recall\n", "not valid TOML"),
])
def test_unknown_keys_and_bad_values_are_refused_with_the_file_and_key(tmp_path: Path, text: str,
                                                                      message: str) -> None:
    path = _write(tmp_path / "engram.toml", text)
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path, {})
    assert str(path) in str(refused.value) and message in str(refused.value)


def test_each_value_says_where_it_came_from(tmp_path: Path) -> None:
    _write(tmp_path / "engram.toml", "[recall]\ndeadline_ms = 250\n[embedder]\nkind = 'hashing'\n")
    found = {s.key: s for s in effective(tmp_path, {"ENGRAM_EMBEDDER": "use"})}
    assert (found["recall.deadline_ms"].value, found["recall.deadline_ms"].source) == (250, "file")
    assert (found["embedder.kind"].value, found["embedder.kind"].source) == ("use", "env")
    assert found["embedder.kind"].origin == "ENGRAM_EMBEDDER"
    assert (found["recall.pool_size"].value, found["recall.pool_size"].source) == (64, "default")


def test_both_runtimes_build_their_context_from_the_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / "engram.toml", "[recall]\ndeadline_ms = 250\ncontext_turns_top = 1\n")
    with EmbeddedRuntime(data) as runtime:
        assert (runtime.ctx.config.recall.deadline_ms, runtime.ctx.config.recall.context_turns_top) == (250, 1)
    # a worker's projector child finds it through ENGRAM_DATA (`engram worker` exports its --data)
    assert default_context(env={"ENGRAM_DATA": str(data)}).config.recall.deadline_ms == 250
    from engram.distributed.backend import DistributedBackend

    backend = DistributedBackend.from_env(data, {"ENGRAM_KAFKA_BOOTSTRAP": "127.0.0.1:1"})  # connects lazily
    assert backend.config.recall.deadline_ms == 250


def test_engram_config_shows_the_sources_and_every_command_refuses_a_bad_file(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_DATA", str(tmp_path))  # restored after: `engram worker` exports its --data
    runner = CliRunner()
    _write(tmp_path / "engram.toml", "[recall]\ndeadline_ms = 250\n")
    shown = runner.invoke(cli, ["--data", str(tmp_path), "config"], obj={})
    assert shown.exit_code == 0 and f"config file: {tmp_path / 'engram.toml'}" in shown.output
    assert "recall.deadline_ms" in shown.output and "250.0  [file]" in shown.output
    body = json.loads(runner.invoke(cli, ["--data", str(tmp_path), "config", "--json"], obj={}).output)
    assert {"key": "recall.pool_size", "value": 64, "source": "default", "origin": ""} in body["settings"]
    _write(tmp_path / "engram.toml", "[recall]\ndeadlin_ms = 250\n")
    (tmp_path / "engram.db").touch()  # a data folder (reads refuse a missing one first)
    for command in (["config"], ["memories", "--user", "u"], ["ingest", "-"],
                    ["worker", "--bootstrap", "127.0.0.1:1"]):
        refused = runner.invoke(cli, ["--data", str(tmp_path), *command], obj={}, input="")
        assert refused.exit_code == 1 and "unknown key recall.deadlin_ms" in refused.output, command
        assert "Traceback" not in refused.output
