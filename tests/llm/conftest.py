"""Fixtures of the LLM tests: the scripted server, settings pointing at it, and runtime drivers.

`llm_driver` builds embedded drivers whose processor context talks to the
scripted server. These cases build a context per test in-process (settings
overrides, `label_with_rules`), which a worker process cannot be handed; a
distributed worker builds its context from ENGRAM_LLM_*, which
`test_distributed_llm.py` checks against the scripted server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from engram.llm.context import llm_context
from engram.llm.extractor import LLMExtractor
from engram.llm.settings import LLMSettings
from engram.runtime.engine import EmbeddedRuntime
from engram.streams.processor import ProcessorContext
from tests.drivers import Driver, EmbeddedDriver

from .scripted_server import ScriptedServer

EXTRACT, JUDGE, SUMMARIZE, EMBED = "extract-model", "judge-model", "summarize-model", "embed-model"


class ContextDriver(EmbeddedDriver):
    """The embedded driver with a given processor context."""

    def __init__(self, folder: Path, ctx: ProcessorContext) -> None:
        self.runtime = EmbeddedRuntime(folder, ctx=ctx)


def make_driver(runtime: str, folder: Path, ctx: ProcessorContext) -> Driver:
    """A driver of `runtime` whose processors use `ctx` (one branch per runtime)."""
    if runtime == "embedded":
        return ContextDriver(folder, ctx)
    # A distributed driver would start its workers with ENGRAM_LLM_BASE_URL / _API_KEY / _MODEL_*
    # pointing at the scripted server (workers build their context with default_context()).
    pytest.fail(f"no LLM driver for runtime {runtime!r} yet", pytrace=False)


@pytest.fixture
def llm_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


def scripted_settings(server: ScriptedServer, **overrides: object) -> LLMSettings:
    """Settings for the scripted server: one model name per task, short timeout, fast backoff."""
    values: dict[str, object] = dict(
        base_url=server.base_url, api_key="test-key", extract_model=EXTRACT, judge_model=JUDGE,
        summarize_model=SUMMARIZE, embed_model=None, timeout_s=0.5, retries=1, backoff_s=0.01,
    )
    values.update(overrides)
    return LLMSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def llm_settings(llm_server: ScriptedServer) -> LLMSettings:
    return scripted_settings(llm_server)


DriverFactory = Callable[..., Driver]


LLM_RUNTIMES = ["embedded"]


@pytest.fixture(params=LLM_RUNTIMES)
def llm_driver(request: pytest.FixtureRequest, tmp_path: Path, llm_server: ScriptedServer) -> Iterator[DriverFactory]:
    """Makes drivers of one runtime against the scripted server: `llm_driver(**settings_overrides)`.

    `label_with_rules=False` keeps the model's candidates exactly as answered
    (no topic filled in from the rules), so more merge pairs are left to the judge.
    """
    made: list[Driver] = []

    def factory(label_with_rules: bool = True, **overrides: object) -> Driver:
        ctx = llm_context(scripted_settings(llm_server, **overrides))
        if not label_with_rules and isinstance(ctx.extractor, LLMExtractor):
            ctx = replace(ctx, extractor=LLMExtractor(ctx.extractor.client, EXTRACT, label_with_rules=False))
        driver = make_driver(request.param, tmp_path / f"engram{len(made)}", ctx)
        made.append(driver)
        return driver

    yield factory
    for driver in made:
        driver.close()  # type: ignore[attr-defined]


@pytest.fixture
def llm_engram(llm_driver: DriverFactory) -> Driver:
    """An Engram on one runtime with every chat task on the scripted server."""
    return llm_driver()
