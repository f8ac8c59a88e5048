"""A change is shown as its outcome unless the question looks back; writing for others sees neither the
user's family nor the names a confidentiality rule covers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.core.text import terms
from engram.core.sensitive import WRITING_FOR_OTHERS, gate_domains, may_show
from engram.recall.current_view import looks_back, masked_confidential, outcome_view, shown_text
from engram.recall.service import RecallRequest, RecallResult
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from tests.drivers import T0, turn


@pytest.mark.parametrize(("note", "shown", "left_out"), [
    ("User moved from Halifax to Moncton with their family", "User moved to Moncton with their family", "halifax"),
    ("User relocated here from Porto in May", "User relocated here in May", "porto"),
    ("User switched from Angular to Svelte", "User switched to Svelte", "angular"),
    ("用户去年从长沙搬到了厦门", "用户去年搬到了厦门", "长沙"),
    ("用户说：我们从海淀搬到了朝阳,上班近了。", "用户说：我们搬到了朝阳,上班近了。", "海淀"),
])
def test_a_change_from_one_value_to_another_is_shown_without_the_value_left(note: str, shown: str,
                                                                           left_out: str) -> None:
    view, dropped = outcome_view(note)
    assert view == shown
    assert left_out in dropped


@pytest.mark.parametrize(("note", "gone", "kept"), [
    ("用户说：女儿说小提琴不学了,现在改学游泳,周二上课。", "小提琴", "游泳"),
    ("User said: Theo quit karate, he does climbing now.", "karate", "climbing"),
])
def test_an_activity_dropped_leaves_the_line_when_the_note_says_what_replaced_it(note: str, gone: str,
                                                                                  kept: str) -> None:
    view, dropped = outcome_view(note)
    assert gone not in view and kept in view
    assert set(terms(gone)) & dropped


@pytest.mark.parametrize("note", ["User quit smoking last year", "User changed jobs in March",
                                  "用户说：儿子不学钢琴了。", "User moved to Kyoto"])
def test_a_note_that_names_no_replaced_value_is_shown_as_it_is(note: str) -> None:
    assert outcome_view(note)[0] == note


def test_a_question_that_looks_back_or_names_the_old_value_sees_the_note_whole() -> None:
    note = "User moved from Halifax to Moncton"
    assert shown_text(note, "Find me a pizza place for Friday") == "User moved to Moncton"
    assert looks_back("Where did I live before?")
    assert shown_text(note, "Where did I live before?") == note
    assert shown_text(note, "Any good bakeries in Halifax I should revisit?") == note
    assert shown_text("用户从长沙搬到了厦门", "我以前住在哪？") == "用户从长沙搬到了厦门"


@pytest.mark.parametrize(("note", "secret", "kept"), [
    ("User said: everything is under NDA for a client we call Project Osprey, so I can't say more.",
     "Osprey", "NDA"),
    ("I can't share anything about the Northwind Bank deal with anyone", "Northwind", "can't share"),
    ("用户说：在帮宏达集团做审计,事务所规定不能对外透露客户名称。", "宏达", "不能对外透露"),
])
def test_a_name_a_confidentiality_rule_covers_is_masked_and_the_rule_kept(note: str, secret: str,
                                                                          kept: str) -> None:
    masked = masked_confidential(note)
    assert secret not in masked and kept in masked


def test_names_without_a_confidentiality_rule_are_not_masked() -> None:
    assert masked_confidential("User works at Northwind Bank in Leeds") == "User works at Northwind Bank in Leeds"


def test_masking_is_for_writing_others_read_and_spares_a_name_the_question_says() -> None:
    note = "User said: everything is under NDA for a client we call Project Osprey."
    assert "Osprey" not in shown_text(note, "Write a LinkedIn post about my month")
    assert "Osprey" in shown_text(note, "Help me prepare for tomorrow's workshop")
    assert "Osprey" in shown_text(note, "Write an email to the Osprey steering group")


@pytest.mark.parametrize("task", ["Write a cover letter for a staff engineer role",
                                  "帮我写一封给客户的催款邮件", "帮我写一条朋友圈，庆祝项目上线"])
def test_writing_for_others_is_shown_nothing_of_the_users_family(task: str) -> None:
    assert WRITING_FOR_OTHERS in gate_domains(task)
    assert not may_show(gate_domains(task), "User said: my ex-husband Colm has the kids on weekends")
    assert may_show(gate_domains(task), "User is a staff engineer at a logistics firm")


@pytest.mark.parametrize("task", ["Write a birthday message for my wife", "帮我给女儿的老师写一封信",
                                  "Plan a Saturday for me and the kids"])
def test_writing_about_the_family_or_a_plan_for_it_still_sees_it(task: str) -> None:
    assert may_show(gate_domains(task), "User's wife Maeve loves tulips; their daughter is six")


def _ask(runtime: EmbeddedRuntime, question: str) -> RecallResult:
    return runtime.recall(RecallRequest("t1", "u1", "a1", "fresh", question, T0 + timedelta(days=30)))


def test_a_new_session_sees_where_the_user_lives_now_and_history_when_it_asks(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path, ctx=default_context(DEFAULT_CONFIG, {"ENGRAM_EMBEDDER": "hashing"}))
    runtime.ingest([turn("We finally moved from Halifax to Moncton last week!", session="s0", at=T0),
                    turn("I'm a landscape architect, mostly public parks.", session="s0",
                         at=T0 + timedelta(minutes=1))])
    ahead = _ask(runtime, "Recommend a few spots for dinner this Friday.")
    assert "Moncton" in ahead.memory_section and "Halifax" not in ahead.memory_section
    assert all("Halifax" not in str(i.details.get("evidence", "")) for i in ahead.items)
    back = _ask(runtime, "Where did I live before I moved?")
    assert "Halifax" in back.memory_section
    runtime.close()


@pytest.mark.parametrize("note", [
    "用户从不换手机",  # 从不 is "never": no change, and cutting it turns the fact around
    "用户从来不换发型",
    "用户从去年开始换工作",  # 从 of a time, and no value changed to
    "用户每天从家里转地铁到公司",  # a route: the train is changed, not the home
    "用户从早到晚都在换尿布",
    "用户从小就想搬到海边住",
])
def test_a_chinese_from_that_tells_of_no_change_from_one_value_to_another_is_kept(note: str) -> None:
    assert outcome_view(note) == (note, frozenset())


@pytest.mark.parametrize(("note", "shown"), [
    ("用户从销售转到了产品岗", "用户转到了产品岗"),
    ("用户从安卓换成了苹果", "用户换成了苹果"),
    ("用户从小镇搬到了省城", "用户搬到了省城"),
])
def test_a_chinese_change_to_a_new_value_is_still_shown_as_its_outcome(note: str, shown: str) -> None:
    assert outcome_view(note)[0] == shown


@pytest.mark.parametrize("note", [
    "User plans to move from Halifax to Moncton next year",  # the old value is still the current one
    "User is thinking of switching from Angular to Svelte",
    "User might relocate from Austin to Denver",
    "User never switched from Windows to Mac",
    "User changes trains from Paddington to Reading on the commute",  # a habit, no change of value
    "User transferred money from savings to checking every month",
    "User likes movies from the 1990s to the 2000s",  # a noun, no verb of change
    "用户打算明年从长沙搬到厦门",
    "用户下个月准备从海淀搬到朝阳",
    "用户每周从公司调到分部支援两天",
])
def test_a_change_not_made_yet_or_made_every_time_is_shown_whole(note: str) -> None:
    assert outcome_view(note) == (note, frozenset())


@pytest.mark.parametrize("note", [
    "User said: I quit smoking, now I feel great.",  # "now" tells how the user is, not what replaced smoking
    "User said: I stopped drinking, now I sleep better.",
    "用户说：瑜伽不练了，现在开始失眠",
    "User said: Mia quit ballet; she started high school",
])
def test_an_activity_dropped_stays_when_no_clause_says_what_replaced_it(note: str) -> None:
    assert outcome_view(note) == (note, frozenset())


def test_a_dropped_activity_cut_from_a_quote_leaves_who_said_it() -> None:
    view, dropped = outcome_view("User said: I quit piano, now I do chess twice a week.")
    assert view == "User said: now I do chess twice a week." and "piano" in dropped


@pytest.mark.parametrize("question", [
    "When can I resume running after my knee surgery?",  # resume: to start again
    "Where is the nearest post office?",
    "What was in the notice from my landlord?",  # writing read, not written
    "What should I pack for the beach trip? There was a notice about jellyfish.",
    "What time is the pitch meeting on Thursday?",
    "动态规划是什么？",  # 动态: dynamic
    "收到通知了吗？",
    "发票报销流程是什么？",
])
def test_a_question_that_composes_nothing_is_no_writing_for_others(question: str) -> None:
    assert WRITING_FOR_OTHERS not in gate_domains(question)
    assert may_show(gate_domains(question), "User said: my son Ivo is allergic to peanuts")


@pytest.mark.parametrize("task", ["Help me with my cover letter for the analyst job", "Draft a short bio for the "
                                  "conference program", "Polish this email to the landlord",
                                  "I need a caption for a photo of our product launch", "帮我发个朋友圈文案",
                                  "回复一下这封客户邮件", "帮我润色简历"])
def test_a_task_that_composes_a_piece_of_writing_is_writing_for_others(task: str) -> None:
    assert WRITING_FOR_OTHERS in gate_domains(task)


@pytest.mark.parametrize("note", [
    "User is a wedding photographer based in Leith",  # a family word that is the user's trade
    "User is a family doctor at a rural practice",
    "User practises family law at a small firm",
    "User works at a family-owned bakery",
    "User teaches kids coding on Saturdays",
    "用户是家庭医生，在社区诊所上班",
    "用户今年34岁，做了八年会计",
])
def test_writing_for_others_still_sees_a_family_word_that_names_no_relative_of_the_user(note: str) -> None:
    assert may_show(gate_domains("Write a cover letter for a clinic job"), note)


@pytest.mark.parametrize("note", ["User has two kids in primary school", "User's mum lives with them",
                                  "User said: our anniversary is in June", "用户的女儿六岁", "孩子下周开家长会",
                                  "Clara just turned 5"])
def test_writing_for_others_sees_no_relative_of_the_user(note: str) -> None:
    assert not may_show(gate_domains("Write a cover letter for a clinic job"), note)


@pytest.mark.parametrize("turn", ["I took up " + "x" * 50_000 + ", quit chess",  # one long word (a pasted key)
                                  "key " + "ab-" * 16_000 + " now, I stopped",
                                  "他说" + "a" * 50_000 + "不学了，现在改学游泳"])
def test_a_long_turn_is_shown_in_linear_time(turn: str) -> None:
    import time
    start = time.perf_counter()
    outcome_view.__wrapped__(turn)  # type: ignore[attr-defined]
    assert time.perf_counter() - start < 1.0


def test_writing_for_others_shows_a_sensitive_fact_only_when_it_is_about_that_fact() -> None:
    blurb = "Write a short bio about me for the bakery's website"
    assert WRITING_FOR_OTHERS in gate_domains(blurb)
    assert not may_show(gate_domains(blurb), "User has type 1 diabetes and wears a pump")  # food reaches health
    leave = "Draft an email to my manager asking for two days off after my knee surgery"
    assert may_show(gate_domains(leave), "User is having knee surgery in May", ("health",))


def test_writing_for_others_drops_the_clauses_about_the_family_and_keeps_the_rest() -> None:
    note = "用户说：我在家带了两年孩子,下个月回去上班,在一家律所做行政。"
    shown = shown_text(note, "帮我写一封给新同事的自我介绍邮件")
    assert "孩子" not in shown and "律所做行政" in shown and shown.startswith("用户说：")
    assert may_show(gate_domains("帮我写一封给新同事的自我介绍邮件"), note)
