"""Incremental LLM summaries: previous sections + new messages only, five sections, failures recorded."""

from __future__ import annotations

import json

import pytest

from engram.core.ports import SummaryMessage
from engram.llm.client import ModelClient
from engram.llm.summarizer import LLMSummarizer
from engram.schemas.events import LLMCallRecorded, SummarySnapshotted
from engram.schemas.memory import SummarySections
from tests.drivers import Driver, turn

from .conftest import SUMMARIZE, DriverFactory, scripted_settings
from .models import section_summarizer
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm

SECTIONS = {"current_topic": ["订单服务拆分"], "confirmed_facts": ["采用微服务架构"], "todo_items": ["迁移数据库"],
            "user_constraints": ["预算10万以内"], "open_questions": ["接口怎么兼容？"]}


def _messages(start: int, count: int) -> list:
    return [turn(f"第{start + i}条：我们继续讨论订单服务拆分的第{start + i}个细节。",
                 role="user" if i % 2 == 0 else "assistant", message_id=f"sm{start + i:03d}")
            for i in range(count)]


def _snapshots(engram: Driver) -> list[SummarySnapshotted]:
    return [e for e in engram.events(("SummarySnapshotted",)) if isinstance(e, SummarySnapshotted)]


@pytest.fixture
def summaries_only(llm_driver: DriverFactory) -> Driver:
    return llm_driver(extract_model=None, judge_model=None)


def test_each_summary_sends_the_previous_sections_and_only_the_new_messages(
        summaries_only: Driver, llm_server: ScriptedServer) -> None:
    llm_server.queue(SUMMARIZE, Reply.json(SECTIONS))
    llm_server.route(SUMMARIZE, section_summarizer)
    summaries_only.ingest(_messages(0, 12))
    summaries_only.ingest(_messages(12, 10))
    first, second = llm_server.requests_for(SUMMARIZE)
    assert "第0条" in first.prompt and "第11条" in first.prompt
    assert "第11条" not in second.prompt and "第12条" in second.prompt and "第21条" in second.prompt
    previous = json.loads(second.prompt.split("Previous summary:\n", 1)[1].split("\n\nNew messages:", 1)[0])
    assert previous == SECTIONS
    v1, v2 = _snapshots(summaries_only)
    assert (v1.version, v1.status, v1.summarizer, v1.source_message_count) == (1, "ok", "llm", 12)
    assert v1.sections == SummarySections(**{k: tuple(v) for k, v in SECTIONS.items()})
    assert (v2.version, v2.range_start_message_id, v2.source_message_count) == (2, "sm012", 10)
    assert summaries_only.summary("t1", "u1", "s1") == v2


def test_a_failed_summary_is_recorded_and_retried_on_the_next_trigger(
        summaries_only: Driver, llm_server: ScriptedServer) -> None:
    llm_server.queue(SUMMARIZE, Reply.malformed(), Reply.server_error(), Reply.json(SECTIONS))
    summaries_only.ingest(_messages(0, 10))
    [failed] = _snapshots(summaries_only)
    assert (failed.status, failed.version, failed.summarizer) == ("failed", 1, "llm")
    assert "http 500" in failed.error and failed.latency_ms > 0
    assert summaries_only.summary("t1", "u1", "s1") is None
    calls = [e for e in summaries_only.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]
    assert [(c.task, c.outcome, c.processor) for c in calls] == [
        ("summarize", "retried", "summarize"), ("summarize", "error", "summarize")]
    summaries_only.ingest(_messages(10, 1))
    ok = _snapshots(summaries_only)[-1]
    assert (ok.status, ok.version, ok.source_message_count) == ("ok", 1, 11)
    assert "第0条" in llm_server.requests_for(SUMMARIZE)[-1].prompt


def _summarizer(server: ScriptedServer) -> LLMSummarizer:
    return LLMSummarizer(ModelClient(scripted_settings(server)), SUMMARIZE)


NEW = [SummaryMessage("m1", "user", "我们把订单服务拆出来吧"), SummaryMessage("m2", "assistant", "已确认，下周开始。")]


@pytest.mark.parametrize("bad", [
    {k: v for k, v in SECTIONS.items() if k != "open_questions"},
    {**SECTIONS, "analysis": ["extra"]},
    {**SECTIONS, "todo_items": 3},
], ids=["missing", "extra", "not-a-list"])
def test_anything_but_the_five_sections_is_malformed(llm_server: ScriptedServer, bad: dict) -> None:
    llm_server.queue(SUMMARIZE, Reply.json(bad), Reply.json(bad))
    result = _summarizer(llm_server).summarize(None, NEW)
    assert not result.ok and "summary sections invalid" in result.error
    assert [c.outcome for c in result.calls] == ["retried", "error"]


def test_the_bracketed_section_form_is_accepted(llm_server: ScriptedServer) -> None:
    text = ("[CURRENT_TOPIC]\n- 订单服务拆分\n[CONFIRMED_FACTS]\n- 下周开始拆分\n[TODO_ITEMS]\n- (none)\n"
            "[USER_CONSTRAINTS]\n- (none)\n[OPEN_QUESTIONS]\n- (none)\n")
    llm_server.queue(SUMMARIZE, Reply.text(text))
    result = _summarizer(llm_server).summarize(None, NEW)
    assert result.ok and result.summarizer == "llm"
    assert result.sections == SummarySections(current_topic=("订单服务拆分",), confirmed_facts=("下周开始拆分",))


def test_sections_are_bounded_and_deduplicated(llm_server: ScriptedServer) -> None:
    many = {**SECTIONS, "confirmed_facts": [f"事实{i}" for i in range(8)] + ["事实7"], "todo_items": ["x" * 300]}
    llm_server.queue(SUMMARIZE, Reply.json(many))
    sections = _summarizer(llm_server).summarize(None, NEW).sections
    assert sections.confirmed_facts == ("事实3", "事实4", "事实5", "事实6", "事实7")
    assert len(sections.todo_items[0]) == 120 and sections.todo_items[0].endswith("…")
