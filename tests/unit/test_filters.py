from __future__ import annotations

import pytest

from engram.core.config import FilterConfig
from engram.streams.filters import filter_turn, has_decision_signal, has_user_signal, is_chit_chat


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("哈哈", "too_short"),
        ("好的", "too_short"),
        ("继续", "too_short"),
        ("ok", "too_short"),
        ("thanks", "chit_chat"),
        ("哈哈哈哈哈哈", "chit_chat"),
        ("好的谢谢你", "chit_chat"),
        ("thank you so much!", "chit_chat"),
        ("这是什么意思？", "no_signal"),
        ("what is rust", "no_signal"),
    ],
)
def test_golden_2_chit_chat_and_questions_are_skipped_with_a_reason(text: str, reason: str) -> None:
    assert filter_turn("user", text) == reason


@pytest.mark.parametrize(
    "text",
    ["我喜欢Java", "我不吃香菜", "I like Go", "never use tabs", "以后用中文", "这段代码为什么在生产环境里跑得这么慢呢，本地却很快"],
)
def test_user_text_passes_on_a_signal_or_length(text: str) -> None:
    assert filter_turn("user", text) is None


def test_golden_5_assistant_greeting_is_not_a_decision() -> None:
    assert filter_turn("assistant", "你好，我是AI助手") == "too_short"
    assert filter_turn("assistant", "你好，我是AI助手，有什么可以帮你的吗？请随时告诉我") == "no_decision_signal"


def test_assistant_passes_on_confirmation_or_length() -> None:
    assert filter_turn("assistant", "已确认采用微服务架构，预算控制在10万以内。") is None
    assert filter_turn("assistant", "Agreed, we'll go with Rust for the service.") is None
    assert filter_turn("assistant", "x" * 121) is None


def test_thresholds_come_from_config() -> None:
    strict = FilterConfig(min_user_chars=12, user_pass_length=100)
    assert filter_turn("user", "我喜欢Java", strict) == "too_short"
    assert filter_turn("user", "what is rust used for", strict) == "no_signal"


def test_english_signals_respect_word_boundaries() -> None:
    assert has_user_signal("I took it")
    assert not has_user_signal("hi there")
    assert has_decision_signal("ok")
    assert has_decision_signal("Okay, we will go with Rust")
    assert not has_decision_signal("book a room for the bookkeeper")
    assert not has_decision_signal("请你确认一下需求")


def test_chit_chat_detection_needs_only_pleasantries() -> None:
    assert is_chit_chat("好的呀，继续吧")
    assert is_chit_chat("ok thanks!!")
    assert not is_chit_chat("好的，我喜欢Java")
    assert not is_chit_chat("thanks, I live in Berlin")


def test_a_short_chinese_statement_passes_the_basic_filter() -> None:
    # four characters say as much as "I like cats": each Chinese character counts twice
    assert filter_turn("user", "我喜欢猫") is None
    assert filter_turn("user", "abcd") == "too_short"
