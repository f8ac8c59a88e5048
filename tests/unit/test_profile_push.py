"""The standing profile: pushed into every recall (new sessions too), sensitive entries only where the
question touches them, superseded entries gone, readable by the user, off with `profile_share` 0."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.core.domains import domain_overlap, domains_of, profile_layer
from engram.core.sensitive import may_show, sensitive_domains
from engram.recall.service import RecallRequest, RecallResult
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.memory import MemoryType
from engram.streams.rules import extract_drafts
from tests.drivers import T0, turn


def _runtime(tmp_path: Path, share: float | None = None) -> EmbeddedRuntime:
    config = DEFAULT_CONFIG
    if share is not None:
        config = config.model_copy(update={"recall": config.recall.model_copy(update={"profile_share": share})})
    return EmbeddedRuntime(tmp_path, ctx=default_context(config, {"ENGRAM_EMBEDDER": "hashing"}))


def _say(runtime: EmbeddedRuntime, *sessions: list[str]) -> None:
    for day, texts in enumerate(sessions):
        runtime.ingest([turn(t, session=f"s{day}", at=T0 + timedelta(days=day, minutes=n))
                        for n, t in enumerate(texts)])


def _ask(runtime: EmbeddedRuntime, question: str, session: str = "fresh") -> RecallResult:
    return runtime.recall(RecallRequest("t1", "u1", "a1", session, question, T0 + timedelta(days=30)))


def test_a_new_session_gets_the_profile_though_the_question_names_none_of_it(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    _say(runtime, ["I'm lactose intolerant and I don't eat pork."], ["I work from home in Lisbon."])
    result = _ask(runtime, "Any ideas for a quick bite?")
    assert not result.session_known
    assert "lactose" in result.memory_section and "pork" in result.memory_section
    assert "Lisbon" in result.memory_section
    kinds = {i.kind for i in result.items}
    assert "profile" in kinds
    profile = [i for i in result.items if i.kind == "profile"]
    assert all(i.item_id and "domain" in i.details and "importance" in i.details for i in profile)
    runtime.close()


def test_without_a_profile_share_nothing_unasked_is_pushed(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, share=0.0)
    _say(runtime, ["I work from home in Lisbon."])
    result = _ask(runtime, "What is a bond ladder?")
    assert "Lisbon" not in result.memory_section
    assert not [i for i in result.items if i.kind == "profile"]
    runtime.close()


def test_a_sensitive_entry_is_pushed_only_where_the_task_touches_it(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    _say(runtime, ["I've been dealing with depression since last winter."], ["I hurt my knee running last month."])
    spec = _ask(runtime, "Write a product spec for our invoicing app.")
    assert "depression" not in spec.memory_section and "knee" not in spec.memory_section
    workout = _ask(runtime, "Make me a workout plan for this week.")
    assert "knee" in workout.memory_section and "depression" not in workout.memory_section
    runtime.close()


def test_a_move_takes_the_old_home_out_of_the_profile(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    _say(runtime, ["I've lived in Leeds for six years and I love my flat there."],
         ["Moving day survived! We moved to Bristol, first night in the new flat."])
    result = _ask(runtime, "Any good walks near me this weekend?")
    assert "Bristol" in result.memory_section and "Leeds" not in result.memory_section
    runtime.close()


def test_a_new_user_gets_nothing_and_an_empty_profile_injects_nothing(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    assert _ask(runtime, "What should I cook tonight?").memory_section == ""
    runtime.close()


def test_domains_are_bilingual_and_a_task_implies_them() -> None:
    assert "food" in domains_of("What should I cook for dinner?") & domains_of("用户对芒果过敏")
    assert domain_overlap(domains_of("给我推荐点水果吧"), domains_of("User is allergic to mango")) == 1.0
    assert domain_overlap(domains_of("Explain quantum entanglement"), domains_of("User likes tea")) == 0.0
    assert "work" not in domains_of("Make me a workout plan")  # a cue is a word start, "work$" a whole word


def test_sensitive_marks_and_the_gate() -> None:
    assert sensitive_domains("用户现在背着六万的网贷") == {"money"}
    assert sensitive_domains("User is lactose intolerant") == frozenset()
    assert may_show(domains_of("Any dinner ideas?"), "User is lactose intolerant")
    assert not may_show(domains_of("Write a LinkedIn post about my promotion"), "User has depression")
    assert may_show(domains_of("今晚做什么菜好？"), "用户说：我妈糖尿病好几年，做饭挺头疼的")


@pytest.mark.parametrize(("memory_type", "content", "expected"), [
    (MemoryType.USER_FACT, "User has a beagle called Bramble", True),
    (MemoryType.USER_PREFERENCE, "User prefers short answers", True),
    (MemoryType.USER_GOAL, "User wants to learn Go", False),
    (MemoryType.USER_FACT, "User mentioned: the museum opens at 9", False),
    (MemoryType.ASSISTANT_DECISION, "Assistant will use Python", False),
])
def test_profile_membership(memory_type: MemoryType, content: str, expected: bool) -> None:
    assert profile_layer(memory_type, memory_type.value, content) is expected


def test_standing_facts_told_beside_a_task_are_kept_in_the_users_words() -> None:
    drafts = extract_drafts("user", "How early should I order a custom cake? My daughter Mila turns 6 in two weeks.")
    assert any("Mila" in d.content for d in drafts)
    assert extract_drafts("user", "Explain the difference between TCP and UDP") == ()
    zh = extract_drafts("user", "外婆膝盖不太好，走远路就疼")
    assert any("膝盖" in d.content for d in zh)


def test_a_fact_marked_sensitive_at_extraction_is_a_standing_one_though_no_domain_cue_names_it() -> None:
    assert profile_layer(MemoryType.USER_FACT, "user_fact", "用户在做试管(IVF)", ("health",))
    assert not profile_layer(MemoryType.USER_FACT, "user_fact", "用户在做试管(IVF)")
    assert not profile_layer(MemoryType.USER_FACT, "user_fact", "User mentioned: the lab results", ("health",))


@pytest.mark.parametrize("request_text", ["帮我解释一下递延所得税", "给我推荐几部纪录片", "翻译一下这句话"])
def test_a_chinese_request_to_the_assistant_is_no_standing_note(request_text: str) -> None:
    assert not extract_drafts("user", request_text)
