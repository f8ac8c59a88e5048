"""What small local models do to structured output, and how the adapters keep it usable.

Answers seen from Qwen2.5 0.5B/1.5B on llama.cpp and from endpoints without
a JSON mode: cut off at the token limit, trailing commas, unclosed fences,
keys in another casing or under synonyms, types without their role prefix,
confidence in words. Also: the JSON-schema request format with its
downgrade, prompts fitted to a small context window, and the language the
memories must be written in named in the prompt.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from engram.core.ports import SummaryMessage
from engram.core.text import estimate_tokens
from engram.llm.client import ModelClient
from engram.llm.extractor import LLMExtractor
from engram.llm.parsing import load_json, normalise_keys
from engram.llm.prompts import CLIPPED, extraction_messages, language_of, memory_schema, summary_messages
from engram.llm.settings import settings_from_env
from engram.llm.summarizer import LLMSummarizer
from engram.schemas.inputs import to_turn_event
from engram.schemas.memory import MemoryType
from tests.drivers import turn

from .conftest import EXTRACT, SUMMARIZE, scripted_settings
from .models import memories
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm
NOW = datetime(2026, 1, 5, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[2]


def _extract(server: ScriptedServer, text: str, role: str = "user", **overrides: object):  # type: ignore[no-untyped-def]
    extractor = LLMExtractor(ModelClient(scripted_settings(server, **overrides)), EXTRACT)
    return extractor.extract(to_turn_event(turn(text, role=role), NOW))


def test_an_answer_cut_off_at_the_token_limit_keeps_its_complete_items() -> None:
    cut = '{"memories": [{"type": "user_goal", "content": "a"}, {"type": "user_fact", "content": "b"}, {"type": "us'
    assert load_json(cut) == [{"type": "user_goal", "content": "a"}, {"type": "user_fact", "content": "b"}]


@pytest.mark.parametrize("text, expected", [
    ('{"memories": [{"content": "a",},],}', {"memories": [{"content": "a"}]}),
    ('```json\n{"relation": "same"}', {"relation": "same"}),
    ('{"relation": "new"} and {"relation": "same"} listed', [{"relation": "new"}, {"relation": "same"}]),
    ('<think>unclosed reasoning {"x": 1}', None),
])
def test_trailing_commas_unclosed_fences_and_prose(text: str, expected: object) -> None:
    if expected is None:
        with pytest.raises(ValueError):
            load_json(text)
    else:
        assert load_json(text) == expected


def test_keys_are_matched_in_any_casing_and_under_synonyms() -> None:
    item = normalise_keys({"Memory Type": "x", "Text": "y", "content-x": 1}, {"memory_type": "type", "text": "content"})
    assert item == {"type": "x", "content": "y", "content_x": 1}
    assert normalise_keys({"type": "a", "category": "b"}, {"category": "type"}) == {"type": "a", "category": "b"}


def test_odd_casing_prefixless_types_and_worded_confidence_still_make_memories(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.json({"Memories": [
        {"Type": "Preference", "Text": "用户喜欢Rust", "Confidence": "high", "Topic": ["Rust"]},
        {"memory_type": "user goal", "content": "用户打算学习嵌入式", "confidence": 85, "negated": None},
    ]}))
    extraction = _extract(llm_server, "我喜欢Rust，打算学习嵌入式")
    assert extraction.extractor == "llm"
    got = [(c.type, c.content, c.confidence) for c in extraction.candidates]
    assert got == [(MemoryType.USER_PREFERENCE, "用户喜欢Rust", 0.9), (MemoryType.USER_GOAL, "用户打算学习嵌入式", 0.85)]
    assert extraction.candidates[0].topic == "Rust"  # the first string of a list


def test_a_single_item_under_a_singular_key_counts(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.json({"memory": {"type": "user_fact", "content": "用户养了一只猫"}}))
    assert [c.content for c in _extract(llm_server, "我养了一只猫").candidates] == ["用户养了一只猫"]


def test_schema_mode_sends_the_role_schema_and_steps_down_when_rejected(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.failure(400, "response_format type json_schema is not supported"),
                     Reply.failure(400, "response_format json_object is not supported"),
                     memories({"type": "user_fact", "content": "用户养了一只猫"}))
    extraction = _extract(llm_server, "我养了一只猫", json_mode="schema")
    assert [c.content for c in extraction.candidates] == ["用户养了一只猫"]
    formats = [r.body.get("response_format") for r in llm_server.requests_for(EXTRACT)]
    assert formats[0]["type"] == "json_schema"
    schema = formats[0]["json_schema"]["schema"]
    assert schema == memory_schema("user")
    enum = schema["properties"]["memories"]["items"]["properties"]["type"]["enum"]
    assert set(enum) == {t.value for t in MemoryType if not t.is_assistant}
    assert formats[1:] == [{"type": "json_object"}, None]
    assert [c.outcome for c in extraction.calls] == ["retried", "retried", "ok"]


def test_assistant_schema_allows_only_assistant_types() -> None:
    enum = memory_schema("assistant")["properties"]["memories"]["items"]["properties"]["type"]["enum"]
    assert set(enum) == {t.value for t in MemoryType if t.is_assistant}


def test_a_long_message_is_clipped_to_fit_the_context_window(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories({"type": "user_fact", "content": "用户住在杭州"}))
    long_text = "我住在杭州。" + "今天天气不错，" * 2000
    _extract(llm_server, long_text, context_tokens=4096, max_output_tokens=512)
    [request] = llm_server.requests_for(EXTRACT)
    sent = sum(estimate_tokens(m["content"]) for m in request.messages)
    assert sent <= 4096 - 512
    assert request.prompt.endswith(CLIPPED) and "我住在杭州。" in request.prompt


def test_without_a_window_the_message_is_sent_whole() -> None:
    text = "我住在杭州。" * 3000
    assert extraction_messages("user", text)[-1]["content"].endswith(text)


def test_a_summary_keeps_the_newest_messages_that_fit(llm_server: ScriptedServer) -> None:
    msgs = [SummaryMessage(f"m{i}", "user", f"第{i}条消息：" + "内容" * 300) for i in range(20)]
    [_, user] = summary_messages(None, msgs, budget=2000)
    assert estimate_tokens(user["content"]) <= 2000
    assert "第19条消息" in user["content"] and "第0条消息" not in user["content"]
    llm_server.queue(SUMMARIZE, Reply.json({"current_topic": ["x"], "confirmed_facts": [], "todo_items": [],
                                             "user_constraints": [], "open_questions": []}))
    client = ModelClient(scripted_settings(llm_server, context_tokens=4096, json_mode="schema"))
    result = LLMSummarizer(client, SUMMARIZE).summarize(None, msgs)
    assert result.ok
    [request] = llm_server.requests_for(SUMMARIZE)
    assert sum(estimate_tokens(m["content"]) for m in request.messages) <= 4096 - 800
    assert request.body["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("text, language", [("我是后端开发", "Chinese"), ("I'm a backend engineer", "English"),
                                            ("Je suis ingénieur à Paris, très content", "English"),
                                            ("Ich möchte später in München wohnen, später", "English"),
                                            ("Я инженер", "the language of the message")])
def test_the_prompt_names_the_language_to_write_in(text: str, language: str) -> None:
    assert language_of(text) == language
    assert f"write the memories in {language}" in extraction_messages("user", text)[-1]["content"]


def test_settings_for_a_local_model_come_from_the_environment() -> None:
    settings = settings_from_env({"ENGRAM_LLM_BASE_URL": "http://127.0.0.1:8181/v1", "ENGRAM_LLM_API_KEY": "local",
                                  "ENGRAM_LLM_JSON_MODE": "schema", "ENGRAM_LLM_CONTEXT_TOKENS": "4096",
                                  "ENGRAM_LLM_MAX_TOKENS": "512"})
    assert settings is not None
    assert (settings.json_mode, settings.context_tokens, settings.max_output_tokens) == ("schema", 4096, 512)
    assert ModelClient(settings).prompt_budget == 4096 - 512


def test_real_model_tests_are_deselected_unless_the_marker_is_asked_for() -> None:
    def collect(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               *args], cwd=REPO, capture_output=True, text=True, timeout=120)

    plain = collect("tests/real_llm", "tests/llm/test_settings_and_limits.py")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "tests/real_llm" not in plain.stdout and "deselected" in plain.stdout
    asked = collect("-m", "real_llm", "tests/real_llm")
    assert "tests/real_llm/test_golden_real_llm.py::test_case01" in asked.stdout, asked.stdout + asked.stderr
