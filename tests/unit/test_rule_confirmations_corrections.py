"""Accepted commitments and named choices (rules/commitments, rules/assistant), corrections in more shapes
(rules/corrections), a repeated mishap as irony (rules/irony) and strong Chinese intensifiers (rules/degree),
on sentences written for these tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.schemas.base import stable_id
from engram.schemas.events import MemoryChanged, MemoryProposed
from engram.schemas.memory import Candidate, MemoryType as T
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.filters import has_decision_signal
from engram.streams.processor import ProcessorContext
from engram.streams.rules.commitments import affirmed_commitment
from engram.streams.rules.corrections import corrected_content, holds_value, named_correction
from engram.streams.rules.irony import is_ironic

from tests.unit.rule_helpers import contents, notes

T0 = datetime(2026, 5, 1, tzinfo=timezone.utc)


def test_an_accepted_commitment_confirms_itself() -> None:
    assert affirmed_commitment("Sure - I'll compile the sponsor list and send it Monday.")
    assert affirmed_commitment("好的，我每天晚上八点提醒你喝药。")
    assert has_decision_signal("Yes, I'll archive the old tickets tonight.")
    assert notes("Yes, I'll archive the old tickets tonight.", "assistant") == [
        (T.ASSISTANT_ACTION, "I'll archive the old tickets tonight", False)]


def test_an_explanation_promised_inside_the_answer_is_no_commitment() -> None:
    assert not affirmed_commitment("Sure, I'll explain how mortgage points work.")
    assert not has_decision_signal("Of course, I'll walk you through the difference between the two plans.")
    assert not affirmed_commitment("I'll rename the branch later.")  # no acceptance: not confirmed by itself


def test_a_named_choice_is_a_decision_and_the_promise_after_it_an_action() -> None:
    assert has_decision_signal("Alright, Terraform it is - I'll write the first module tomorrow.")
    found = notes("Alright, Terraform it is - I'll write the first module tomorrow.", "assistant")
    assert found == [(T.ASSISTANT_DECISION, "Going with Terraform", False),
                     (T.ASSISTANT_ACTION, "I'll write the first module tomorrow", False)]


def test_a_promise_is_an_action_even_when_it_names_a_limit() -> None:
    found = notes("Yep, I'll keep a log of the refunds and flag any above 200 euros within a day.", "assistant")
    assert [kind for kind, _, _ in found] == [T.ASSISTANT_ACTION]


def test_a_chinese_settled_choice_is_a_decision() -> None:
    found = notes("行，就定周四发版，我下午把发布说明写好。", "assistant")
    assert found[0] == (T.ASSISTANT_DECISION, "就定周四发版", False)


def test_more_correction_shapes_name_both_values() -> None:
    assert named_correction("Hmm, I said 27 before - I'm actually 28.") == ("27", "28")
    assert named_correction("Correction: it's a Mazda CX-5, not a Rav4.") == ("Rav4", "Mazda CX-5")
    assert named_correction("oops 写错了，是 Oracle 不是 SAP。") == ("SAP", "Oracle")
    assert "用户更正：厦门→福州" in contents("抱歉，说错了，我是在福州上班，不在厦门。")


def test_a_latin_value_inside_chinese_text_is_found_and_a_name_replaced_whole() -> None:
    assert holds_value("用户在Oracle工作", "Oracle")
    assert not holds_value("User works at Oracles", "Oracle")
    assert corrected_content("User rides a Yamaha MT-07", "MT-07", "Honda Rebel") == "User rides a Honda Rebel"
    assert corrected_content("User lives in Lyon", "Lyon", "Nice") == "User lives in Nice"


def _proposal(n: int, content: str, memory_type: T = T.USER_FACT, attribute: str | None = None) -> MemoryProposed:
    candidate = Candidate(type=memory_type, attribute=attribute, content=content, confidence=0.8,
                          source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(hours=n), tenant_id="t",
                          user_id="u", agent_id="a", session_id="s", candidate=candidate, importance=0.5)


def test_consolidation_corrects_a_latin_employer_in_a_chinese_note() -> None:
    state: UserMemories | None = None
    changes: list[MemoryChanged] = []
    proc, ctx = ConsolidateProcessor(), ProcessorContext()
    for event in (_proposal(1, "用户在SAP工作", T.USER_PROFILE, "company"), _proposal(2, 'User corrected "SAP" to "Oracle"')):
        state, produced = proc.process(state, event, ctx)
        changes.extend(e for e in produced if isinstance(e, MemoryChanged))
    assert state is not None
    assert [m.content for m in state.memories.values()] == ["用户在Oracle工作"]


def test_a_mishap_told_again_and_praised_is_irony() -> None:
    assert is_ironic("哇，电梯又坏了，真是太棒了，我最喜欢爬十楼了。")
    assert contents("呵呵，快递又丢了，我可太爱这家快递了。") == []
    assert not is_ironic("我又长高了，好喜欢现在的自己。")  # "again" alone is no irony


def test_strong_chinese_intensifiers_are_kept() -> None:
    assert contents("我非常喜欢吃榴莲。") == ["用户非常喜欢吃榴莲"]
    assert contents("我很喜欢吃榴莲。") == ["用户喜欢吃榴莲"]  # 很 is filler


def test_a_rejected_number_is_corrected_by_the_number_and_a_chinese_apology_is_a_cue() -> None:
    assert 'User corrected "four" to "three"' in contents("Let me fix that: I speak three languages, not four.")
    assert "用户更正：85年的→86年的" in contents("不对，我是86年的，不是85年的。")


def test_a_plan_held_until_someone_else_approves_is_deferred() -> None:
    assert notes("Understood, we'll pause the migration until your CFO approves.", "assistant") == []
    assert notes("好的，这个需要你们财务审批后再执行，我先不下单。", "assistant") == []


def test_an_english_mishap_again_then_pronoun_praise_is_an_ironic_turn() -> None:
    assert contents("Brilliant, the boiler broke down again. Love that for me.") == []
    assert contents("Perfect, the bus is late as usual. Just what I needed.") == []
    assert contents("Sure, I'd ADORE another weekend of grading essays.") == []
    assert contents("I ADORE long walks on the beach.") == ["User adores long walks on the beach"]


def test_a_negated_degree_with_zenme_is_a_statement_not_a_question() -> None:
    assert contents("我不怎么吃甜食。") == ["用户不怎么吃甜食"]
    assert contents("怎么做红烧肉？") == []


def test_reminders_with_dont_forget_and_a_final_particle_restate_the_fact() -> None:
    assert contents("Don't forget I'm allergic to latex.") == ["User is allergic to latex",
                                                               "User repeated: I'm allergic to latex"]
    assert contents("提醒一下，我榛子过敏哈。") == ["用户对榛子过敏", "用户重申：我榛子过敏"]  # a repeat note too
    assert "用户对" not in "".join(contents("我有点过敏。"))  # a degree word is no allergen
    assert contents("我轻度乳糖不耐受。")[0].startswith("用户轻度")


def test_a_chinese_disposal_promise_and_an_english_locked_in_choice() -> None:
    assert notes("行，明天中午前我把合同改好发你。", "assistant")[0][0] is T.ASSISTANT_ACTION
    found = notes("Perfect. The Lisbon venue is locked in, and I'll send the deposit on Friday.", "assistant")
    assert found == [(T.ASSISTANT_DECISION, "The Lisbon venue is locked in", False),
                     (T.ASSISTANT_ACTION, "I'll send the deposit on Friday", False)]
    assert notes("Sounds good, we'll keep the retro on Thursdays.", "assistant")[0][0] is T.ASSISTANT_DECISION
