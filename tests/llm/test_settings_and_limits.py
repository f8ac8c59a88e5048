"""Configuration from the environment, adapter selection, and the client-side limits."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone

import pytest

from engram.core.embedding import HashingEmbedder
from engram.llm import settings as settings_module
from engram.llm.client import ModelClient
from engram.llm.embedder import OpenAIEmbedder
from engram.llm.extractor import LLMExtractor
from engram.llm.judge import LLMJudge
from engram.llm.limits import Gate, LimitExceeded, TokenBudget
from engram.llm.settings import settings_from_env
from engram.llm.summarizer import LLMSummarizer
from engram.runtime.context import default_context
from engram.schemas.inputs import to_turn_event
from engram.streams.rule_extractor import RuleExtractor
from engram.streams.summarizer import ExtractiveSummarizer

from tests.drivers import turn

from .conftest import EXTRACT, scripted_settings
from .models import memories
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm


@pytest.fixture
def fresh_notices(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    monkeypatch.setattr(settings_module, "_noticed", set())
    caplog.set_level(logging.INFO, logger="engram.llm")
    return caplog


def test_nothing_configured_means_the_rule_path_with_a_notice(fresh_notices: pytest.LogCaptureFixture) -> None:
    assert settings_from_env({}) is None
    assert settings_from_env({}) is None
    [notice] = [r for r in fresh_notices.records if "no LLM configured" in r.getMessage()]
    assert notice.levelno == logging.INFO and "\n" not in notice.getMessage()
    ctx = default_context(env={})
    assert isinstance(ctx.extractor, RuleExtractor) and ctx.judge is None
    assert isinstance(ctx.summarizer, ExtractiveSummarizer) and isinstance(ctx.embedder, HashingEmbedder)


def test_an_ambient_openai_key_alone_does_not_send_turns_to_a_model() -> None:
    assert settings_from_env({"OPENAI_API_KEY": "sk-ambient"}) is None


def test_llm_requested_without_a_key_falls_back_with_a_warning(fresh_notices: pytest.LogCaptureFixture) -> None:
    assert settings_from_env({"ENGRAM_LLM_BASE_URL": "http://127.0.0.1:9/v1", "ENGRAM_LLM_MODEL": "m"}) is None
    [warning] = [r for r in fresh_notices.records if "no API key" in r.getMessage()]
    assert warning.levelno == logging.WARNING


def test_the_switch_turns_everything_off() -> None:
    assert settings_from_env({"ENGRAM_LLM": "off", "ENGRAM_LLM_API_KEY": "k"}) is None


def test_variables_set_models_per_task_and_limits() -> None:
    settings = settings_from_env({
        "ENGRAM_LLM_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_API_KEY": "sk-x", "ENGRAM_LLM_MODEL": "qwen",
        "ENGRAM_LLM_MODEL_JUDGE": "off", "ENGRAM_LLM_MODEL_SUMMARIZE": "qwen-long", "ENGRAM_LLM_MODEL_EMBED": "bge",
        "ENGRAM_LLM_EMBED_DIMENSIONS": "512", "ENGRAM_LLM_TIMEOUT_S": "7.5", "ENGRAM_LLM_RETRIES": "2",
        "ENGRAM_LLM_CONCURRENCY": "2", "ENGRAM_LLM_TPM": "90000", "ENGRAM_LLM_JSON_MODE": "off",
    })
    assert settings is not None
    assert (settings.extract_model, settings.judge_model, settings.summarize_model, settings.embed_model) == (
        "qwen", None, "qwen-long", "bge")
    assert (settings.embed_dimensions, settings.timeout_s, settings.retries) == (512, 7.5, 2)
    assert (settings.concurrency, settings.tokens_per_minute, settings.json_mode) == (2, 90000, "off")
    assert "sk-x" not in repr(settings)


def test_the_engram_key_alone_selects_the_default_models() -> None:
    settings = settings_from_env({"ENGRAM_LLM_API_KEY": "k"})
    assert settings is not None and settings.base_url is None
    assert settings.extract_model == settings.judge_model == settings.summarize_model == "gpt-4o-mini"
    assert settings.embed_model is None


def test_the_default_context_picks_llm_adapters_when_configured(llm_server: ScriptedServer) -> None:
    env = {"ENGRAM_LLM_BASE_URL": llm_server.base_url, "ENGRAM_LLM_API_KEY": "k", "ENGRAM_LLM_MODEL": "chat",
           "ENGRAM_LLM_MODEL_EMBED": "emb"}
    ctx = default_context(env=env)
    assert isinstance(ctx.extractor, LLMExtractor) and isinstance(ctx.judge, LLMJudge)
    assert isinstance(ctx.summarizer, LLMSummarizer) and isinstance(ctx.embedder, OpenAIEmbedder)
    assert ctx.extractor.client is ctx.judge.client is ctx.summarizer.client  # one budget for all tasks
    assert [r.model for r in llm_server.requests] == ["emb"]  # only the dimension probe so far


def test_the_token_budget_waits_for_the_window_then_refuses() -> None:
    now = [0.0]
    budget = TokenBudget(1000, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    first = budget.reserve(600, max_wait_s=1)
    budget.settle(first, 700)
    assert budget.used() == 700
    with pytest.raises(LimitExceeded):
        budget.reserve(400, max_wait_s=5)  # frees only after 60 s
    assert budget.reserve(400, max_wait_s=90) is not None
    assert now[0] >= 60.0


def test_an_exhausted_budget_takes_the_rule_path_without_a_request(llm_server: ScriptedServer) -> None:
    settings = scripted_settings(llm_server, tokens_per_minute=100, timeout_s=0.05)
    client = ModelClient(settings)
    client.gate.budget.reserve(100, max_wait_s=0)
    llm_server.queue(EXTRACT, memories())
    extraction = LLMExtractor(client, EXTRACT).extract(to_turn_event(turn("我是后端开发"), datetime.now(timezone.utc)))
    assert extraction.extractor == "rule"
    [call] = extraction.calls
    assert call.outcome == "fallback" and call.error.startswith("limit: tokens-per-minute budget")
    assert llm_server.requests == []


def test_the_gate_limits_requests_in_flight(llm_server: ScriptedServer) -> None:
    settings = scripted_settings(llm_server, concurrency=2, timeout_s=2.0)
    client = ModelClient(settings)
    for _ in range(4):
        llm_server.queue(EXTRACT, Reply.slow(0.2, '{"memories": []}'))
    threads = [threading.Thread(target=client.ask, args=("extract", EXTRACT, [{"role": "user", "content": "x"}],
                                                         lambda t: ([], 0))) for _ in range(4)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started >= 0.39  # two waves of two


def test_a_gate_without_a_free_slot_refuses_after_the_wait() -> None:
    gate = Gate(1, TokenBudget(0))
    with gate.admit(10, 0.01):
        with pytest.raises(LimitExceeded):
            with gate.admit(10, 0.01):
                pass
