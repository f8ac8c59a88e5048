"""`engram replay --projection weaviate` rebuilds Weaviate from the embedded log."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli

pytestmark = pytest.mark.weaviate
DEMO = Path(__file__).resolve().parents[2] / "cli" / "demo.jsonl"


def test_replay_into_weaviate_reproduces_the_embedded_state(weaviate_endpoint, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_WEAVIATE_URL", weaviate_endpoint.url)
    monkeypatch.setenv("ENGRAM_WEAVIATE_GRPC_PORT", str(weaviate_endpoint.grpc_port))
    runner = CliRunner()
    data = str(tmp_path / "data")
    assert runner.invoke(cli, ["--data", data, "ingest", str(DEMO)], obj={}).exit_code == 0
    result = runner.invoke(cli, ["--data", data, "replay", "--projection", "weaviate"], obj={})
    assert result.exit_code == 0, result.output
    assert "identical to the embedded projection" in result.output


def test_replay_into_weaviate_without_an_endpoint_says_what_is_missing(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_WEAVIATE_URL", raising=False)
    result = CliRunner().invoke(cli, ["--data", str(tmp_path), "replay", "--projection", "weaviate"], obj={})
    assert result.exit_code != 0 and "ENGRAM_WEAVIATE_URL" in result.output
