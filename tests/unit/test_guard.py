from __future__ import annotations

import hashlib
import hmac

from engram.core.config import GuardConfig
from engram.schemas.memory import Candidate, MemoryType
from engram.streams.guard import Guard, score_importance

T = MemoryType
GUARD = Guard()


def cand(content: str, kind: MemoryType = T.USER_FACT, **extra: object) -> Candidate:
    return Candidate(type=kind, content=content, confidence=extra.pop("confidence", 0.9), **extra)  # type: ignore[arg-type]


def test_clean_candidate_passes_unchanged_with_an_importance() -> None:
    c = cand("用户喜欢Java编程", T.USER_PREFERENCE, topic="java")
    result = GUARD.check([c], "user", "我喜欢Java编程")
    assert result.audits == () and result.rejected == 0
    (admitted,) = result.accepted
    assert admitted.candidate is c and 0.0 < admitted.importance <= 1.0


def test_type_outside_the_whitelist_is_rejected_with_a_reason() -> None:
    result = GUARD.check([{"type": "custom", "content": "whatever", "confidence": 0.9}], "user", "x")
    assert result.accepted == () and result.rejected == 1
    (audit,) = result.audits
    assert audit.rule == "whitelist.type" and audit.action == "rejected"
    assert "custom" in audit.detail and audit.original_sha256 == ""


def test_something_that_is_not_a_candidate_is_rejected_not_raised() -> None:
    result = GUARD.check(["just a string", None], "user", "x")  # type: ignore[list-item]
    assert result.accepted == () and [a.rule for a in result.audits] == ["whitelist.invalid"] * 2


def test_raw_proposals_with_a_known_type_are_validated() -> None:
    ok = GUARD.check([{"type": "user_goal", "content": "用户计划学Rust", "confidence": 0.8}], "user", "x")
    assert ok.accepted[0].candidate.type is T.USER_GOAL
    bad = GUARD.check([{"type": "user_goal", "content": "学Rust", "confidence": 7}], "user", "x")
    assert bad.accepted == () and bad.audits[0].rule == "whitelist.invalid"
    assert "confidence" in bad.audits[0].detail


def test_golden_11_phone_is_audited_and_the_bare_label_rejected() -> None:
    original = "用户的电话是13800138000"
    c = cand(original, attribute="contact", topic="电话", entities=("13800138000",))
    result = GUARD.check([c], "user", "我的电话是13800138000，以后有事打给我")
    assert result.accepted == ()
    redacted, rejected = result.audits
    assert (redacted.rule, redacted.action) == ("pii.phone", "redacted")
    assert redacted.original_sha256 == ""
    keyed = Guard(audit_key=b"k").check([c], "user", "x").audits[0]
    assert keyed.original_sha256 == hmac.new(b"k", b"13800138000", hashlib.sha256).hexdigest()
    assert (rejected.rule, rejected.action) == ("empty_after_redaction", "rejected")
    assert all("13800138000" not in a.detail for a in result.audits)


def test_golden_11_importance_is_scored_on_the_original_text() -> None:
    original = "用户的电话是13800138000"
    on_original = score_importance(T.USER_FACT, original, "contact", 0.9)
    on_redacted = score_importance(T.USER_FACT, "用户的电话是[PHONE]", "contact", 0.9)
    assert on_original > on_redacted
    result = GUARD.check([cand(original, attribute="contact")], "user", original)
    assert all(f"importance={on_original}" in a.detail for a in result.audits)


def test_redacted_candidate_with_meaning_left_is_kept_without_the_secret() -> None:
    c = cand("Bob asked to be reached at bob@example.com for urgent deployment issues",
             entities=("bob@example.com", "Bob", "Robert"), keywords=("bob@example.com", "deployment"))
    result = GUARD.check([c], "user", "x")
    (admitted,) = result.accepted
    kept = admitted.candidate
    assert "bob@example.com" not in kept.model_dump_json()
    assert "[EMAIL]" in kept.content and kept.entities == ("Bob",) and kept.keywords == ("deployment",)
    assert [a.rule for a in result.audits] == ["pii.email"]


def test_labels_that_held_part_of_a_redacted_secret_are_dropped() -> None:
    c = cand("用户在银行的密码是A00000", entities=("A00000",), keywords=("a00000", "密码"), topic="密码")
    (admitted,) = GUARD.check([c], "user", "x").accepted
    kept = admitted.candidate
    assert "a00000" not in kept.model_dump_json().lower()
    assert kept.entities == () and kept.keywords == ("密码",) and kept.topic == "密码"


def test_secret_only_in_labels_is_still_redacted_and_audited() -> None:
    c = cand("用户提供了工作邮箱", keywords=("a@b.com",))
    result = GUARD.check([c], "user", "x")
    assert result.accepted[0].candidate.keywords == ()
    assert [(a.rule, a.detail) for a in result.audits] == [("pii.email", "field=labels")]


def test_assistant_candidates_need_an_assistant_type_and_a_confirmation() -> None:
    decision = cand("采用微服务架构", T.ASSISTANT_DECISION)
    ok = GUARD.check([decision], "assistant", "已确认采用微服务架构")
    assert len(ok.accepted) == 1
    unconfirmed = GUARD.check([decision], "assistant", "微服务架构也许更好一些，你可以考虑一下")
    assert unconfirmed.accepted == () and unconfirmed.audits[0].rule == "assistant.no_confirmation"
    wrong_type = GUARD.check([cand("用户喜欢Java", T.USER_PREFERENCE)], "assistant", "已确认采用微服务架构")
    assert wrong_type.audits[0].rule == "assistant.type"
    from_user = GUARD.check([decision], "user", "已确认采用微服务架构")
    assert from_user.audits[0].rule == "user.assistant_type"


def test_importance_rises_with_persistence_emphasis_and_single_valued_slots() -> None:
    base = score_importance(T.USER_PREFERENCE, "用户喜欢喝咖啡", None, 0.9)
    assert score_importance(T.USER_PREFERENCE, "用户以后一定要喝咖啡", None, 0.9) > base
    assert score_importance(T.USER_PROFILE, "用户是Java开发", "occupation", 0.9) > score_importance(
        T.USER_PROFILE, "用户是Java开发", None, 0.9
    )
    assert score_importance(T.USER_FACT, "I went hiking", None, 0.45) < score_importance(
        T.USER_FACT, "I went hiking", None, 0.9
    )
    assert score_importance(T.USER_FACT, "x", None, 1.0) == score_importance(T.USER_FACT, "x", None, 1.0)


def test_minimum_importance_and_max_length_come_from_config() -> None:
    guard = Guard(GuardConfig(min_importance=0.95, max_content_chars=20))
    low = guard.check([cand("用户喜欢喝咖啡")], "user", "x")
    assert low.accepted == () and low.audits[0].rule == "importance.low"
    long_guard = Guard(GuardConfig(max_content_chars=20))
    (admitted,) = long_guard.check([cand("a fairly long statement about the user " * 3)], "user", "x").accepted
    assert len(admitted.candidate.content) <= 20
