"""Global card selection (acceptance cases 16-17)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from engram.core.config import GlobalConfig
from engram.core.embedding import HashingEmbedder
from engram.recall.global_cards import (
    SelectedCard,
    eligible_cards,
    question_keywords,
    select_cards,
    tag_hits,
)
from engram.schemas.memory import GlobalCard

T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
CONFIG = GlobalConfig()
EMBEDDER = HashingEmbedder()


def card(card_id: str, *, minutes: int = 0, **fields: Any) -> GlobalCard:
    fields.setdefault("agent_ids", ("agent-1",))
    fields.setdefault("preferences", f"notes of {card_id}")
    return GlobalCard(
        card_id=card_id, tenant_id="t1", user_id="u1", name=card_id,
        created_at=T0, updated_at=T0 + timedelta(minutes=minutes), **fields,
    )


def select(cards: list[GlobalCard], question: str, **kwargs: Any) -> list[SelectedCard]:
    config = GlobalConfig(**kwargs) if kwargs else CONFIG
    return select_cards(cards, "agent-1", question, embedder=EMBEDDER, config=config)


def ids(selected: list[SelectedCard]) -> list[str]:
    return [s.card.card_id for s in selected]


def fillers(n: int, start: int = 0) -> list[GlobalCard]:
    return [card(f"plain-{i}", tags=("旅行",)) for i in range(start, start + n)]


def test_three_bound_cards_are_all_recalled() -> None:
    cards = [card("a"), card("b", tags=("python",)), card("c", profile="后端开发")]
    selected = select(cards, "今天天气怎么样")
    assert sorted(ids(selected)) == ["a", "b", "c"]
    assert {s.mode for s in selected} == {"all"}
    assert ids(selected)[0] == "c"  # the mandatory card leads


def test_ten_cards_give_the_mandatory_ones_then_java_tagged_ones_five_at_most() -> None:
    cards = [
        card("profile", profile="Java后端开发，5年经验"),
        card("goal", long_term_goal="3个月学会K8s"),
        card("java-1", tags=("java",), minutes=1),
        card("java-2", tags=("java", "知识"), minutes=2),
        card("java-3", tags=("java",), minutes=3),
        card("java-4", tags=("javascript",), minutes=4),
        card("python", tags=("python",)),
        card("coffee", tags=("咖啡",)),
        card("travel", tags=("旅行",)),
        card("untagged"),
    ]
    selected = select(cards, "推荐点java知识")
    assert len(selected) == 5
    assert set(ids(selected)[:2]) == {"profile", "goal"}
    assert [s.reason for s in selected[:2]] == ["mandatory", "mandatory"]
    assert ids(selected)[2:] == ["java-2", "java-4", "java-3"]
    assert all(s.mode == "tag" for s in selected)


def test_tag_score_is_base_plus_step_per_hit() -> None:
    cards = [card("two", tags=("java", "知识")), card("one", tags=("java",))] + fillers(5)
    selected = {s.card.card_id: s for s in select(cards, "推荐点java知识")}
    assert abs(selected["two"].score - 0.20) < 1e-9
    assert abs(selected["one"].score - 0.15) < 1e-9
    assert selected["two"].matched_tags == ("java", "知识")


def test_cards_without_a_matching_tag_are_left_out_in_tag_mode() -> None:
    cards = [card("java", tags=("java",))] + fillers(6)
    assert ids(select(cards, "推荐点java知识")) == ["java"]


def test_mandatory_cards_count_in_the_limit() -> None:
    mandatory = [card(f"m{i}", profile=f"profile {i}") for i in range(4)]
    java = [card(f"java-{i}", tags=("java",), minutes=i) for i in range(3)]
    selected = select(mandatory + java, "java 入门")
    assert len(selected) == 5
    assert ids(selected)[4] == "java-2"


def test_mandatory_cards_are_returned_even_beyond_the_limit() -> None:
    mandatory = [card(f"m{i}", long_term_goal=f"goal {i}") for i in range(7)]
    selected = select(mandatory + [card("java", tags=("java",))], "java")
    assert sorted(ids(selected)) == sorted(f"m{i}" for i in range(7))


def test_disabled_deleted_and_unbound_cards_are_never_candidates() -> None:
    cards = [
        card("ok", tags=("java",)),
        card("off", tags=("java",), enabled=False, profile="x"),
        card("gone", tags=("java",), deleted=True, profile="x"),
        card("other-agent", tags=("java",), agent_ids=("agent-2",), profile="x"),
    ]
    assert ids(select(cards, "java")) == ["ok"]
    assert [c.card_id for c in eligible_cards(cards, "agent-1")] == ["ok"]


def test_excluded_cards_do_not_count_towards_the_mode() -> None:
    cards = [card(f"plain-{i}") for i in range(5)] + [
        card(f"off-{i}", enabled=False) for i in range(10)
    ]
    assert {s.mode for s in select(cards, "java")} == {"all"}


def test_only_the_newest_version_of_a_card_is_used() -> None:
    old = card("c", tags=("java",), minutes=0)
    new = old.model_copy(update={"version": 2, "tags": ("go",), "updated_at": T0 + timedelta(1)})
    [only] = eligible_cards([new, old], "agent-1")
    assert only.version == 2 and only.tags == ("go",)


def test_a_long_question_still_matches_the_java_tag() -> None:
    cards = [card("java", tags=("Java",))] + fillers(6)
    assert ids(select(cards, "我是一名新入门的程序员，可以多和我交流一下java吗")) == ["java"]
    assert "java" in question_keywords("我是一名新入门的程序员，可以多和我交流一下java吗")


def test_chinese_tags_match_questions_that_contain_them() -> None:
    cards = [card("fit", tags=("健身",)), card("arch", tags=("微服务架构",))] + fillers(5)
    assert ids(select(cards, "周末去健身房练什么好")) == ["fit"]
    assert ids(select(cards, "微服务怎么拆分")) == ["arch"]


def test_tag_matching_follows_words_not_substrings() -> None:
    assert tag_hits(("go",), "I want to go home") == ("go",)
    assert tag_hits(("go",), "how do I use google maps") == ()
    assert tag_hits(("springboot",), "spring 怎么配置") == ("springboot",)
    assert tag_hits(("服务员",), "微服务架构") == ()


def test_ties_are_broken_by_most_recent_update_then_card_id() -> None:
    cards = [
        card("b", tags=("java",), minutes=1), card("a", tags=("java",), minutes=1),
        card("c", tags=("java",), minutes=5),
    ] + fillers(4)
    assert ids(select(cards, "java")) == ["c", "a", "b"]


def test_many_cards_use_vectors_with_tags_as_the_fallback() -> None:
    near = card("near", preferences="推荐点java知识和java编程技巧", minutes=1)
    tagged = card("tagged", preferences="在用Spring全家桶做项目", tags=("java",))
    unrelated = card("far", preferences="喜欢喝咖啡", tags=("咖啡",))
    cards = [near, tagged, unrelated] + fillers(20)
    question = "推荐点java知识"
    similarity = float(np.dot(*EMBEDDER.embed([question, near.text()])))
    assert similarity >= CONFIG.vector_min_cosine
    selected = {s.card.card_id: s for s in select(cards, question)}
    assert set(selected) == {"near", "tagged"}
    assert selected["near"].reason == "vector" and abs(selected["near"].score - similarity) < 1e-6
    assert selected["tagged"].reason == "tag" and selected["tagged"].mode == "vector"


def test_vector_mode_keeps_mandatory_cards_and_the_limit() -> None:
    mandatory = [card(f"m{i}", profile=f"profile {i}") for i in range(3)]
    tagged = [card(f"t{i}", tags=("java",), minutes=i) for i in range(5)]
    selected = select(mandatory + tagged + fillers(15), "java")
    assert len(selected) == 5
    assert {s.mode for s in selected} == {"vector"}
    assert ids(selected) == ["m0", "m1", "m2", "t4", "t3"]
    assert [s.reason for s in selected[3:]] == ["tag", "tag"]


def test_mode_thresholds_come_from_config() -> None:
    cards = [card("java", tags=("java",))] + fillers(3)
    assert {s.mode for s in select(cards, "java", show_all_up_to=2)} == {"tag"}
    assert {s.mode for s in select(cards, "java", show_all_up_to=2, tag_mode_up_to=3)} == {"vector"}


def test_selection_is_deterministic_whatever_the_input_order() -> None:
    cards = [card(f"java-{i}", tags=("java",), minutes=i % 3) for i in range(12)]
    forward = ids(select(cards, "java"))
    assert forward == ids(select(list(reversed(cards)), "java"))
    assert forward == ["java-11", "java-2", "java-5", "java-8", "java-1"]
