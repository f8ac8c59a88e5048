"""The `real_llm` tests: the LLM path against a real model on an OpenAI-compatible endpoint.

They are deselected unless the marker expression names them (`-m real_llm`),
so `./dev test` never needs the 1.1 GB model; `deploy/local/llm test` starts
the local model, exports its `ENGRAM_LLM_*` settings and runs them. Run by
hand, they need those settings in the environment (`eval "$(deploy/local/llm up)"`)
and fail, never skip, without them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram.llm.client import ModelClient
from engram.llm.context import llm_context
from engram.llm.extractor import LLMExtractor, warm_up
from engram.llm.settings import LLMSettings, settings_from_env
from tests.drivers import Driver
from tests.llm.conftest import ContextDriver

MARKER = "real_llm"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the real-model tests unless `-m` names them."""
    if MARKER in (config.option.markexpr or ""):
        return
    kept = [item for item in items if item.get_closest_marker(MARKER) is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def real_settings() -> LLMSettings:
    """The endpoint the environment names (deploy/local/llm prints it)."""
    settings = settings_from_env(os.environ)
    if settings is None or not settings.base_url:
        pytest.fail("no real model configured: run `deploy/local/llm test`, or "
                    "`eval \"$(deploy/local/llm up)\"` before pytest -m real_llm", pytrace=False)
    return settings


@pytest.fixture(scope="session", autouse=True)
def warm_model(real_settings: LLMSettings) -> None:
    """Both extraction prompts cached by the server before the first case (a cold prompt is ~1 min here)."""
    warm_up(LLMExtractor(ModelClient(real_settings), real_settings.extract_model or ""))


RealFactory = Callable[..., Driver]


@pytest.fixture
def real_engram(tmp_path: Path, real_settings: LLMSettings) -> Iterator[RealFactory]:
    """Makes embedded Engrams whose extractor, judge and summarizer call the real model.

    `real_engram(**overrides)` changes settings for one driver (a tiny answer
    budget, a short timeout).
    """
    made: list[ContextDriver] = []

    def factory(**overrides: object) -> Driver:
        settings = real_settings.model_copy(update=overrides)
        driver = ContextDriver(tmp_path / f"engram{len(made)}", llm_context(settings))
        made.append(driver)
        return driver

    yield factory
    for driver in made:
        driver.close()
