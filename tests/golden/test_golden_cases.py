"""The numbered acceptance cases (case01 ... below) that need no LLM and no server, through the normal ingest path."""

from __future__ import annotations

from datetime import timedelta

from engram.recall.service import RecallRequest
from engram.schemas.base import stable_id
from engram.schemas.codec import encode
from engram.schemas.events import GlobalCardSaved, MemoryChanged, TurnSkipped
from engram.schemas.memory import GlobalCard, MemoryType
from engram.recall.context import REFERENCE_CLAUSE_EN, REFERENCE_CLAUSE_ZH
from tests.drivers import T0, Driver, turn, user_turns


def _active(engram: Driver, tenant: str = "t1", user: str = "u1"):
    return engram.memories(tenant, user)


def _of_type(memories, memory_type: MemoryType):
    return [m for m in memories if m.type == memory_type]


def _recall(engram: Driver, question: str, tenant: str = "t1", user: str = "u1", session: str = "s1",
            agent: str = "a1"):
    return engram.recall(RecallRequest(tenant, user, agent, session, question, T0 + timedelta(days=1)))


def test_case01_one_message_yields_profile_goal_and_constraint(engram: Driver) -> None:
    engram.ingest(user_turns("我是 Java 开发工程师，最近准备 3 个月内跳槽，晚上 8 点后才有时间学习。"))
    memories = _active(engram)
    profile = _of_type(memories, MemoryType.USER_PROFILE)
    goals = _of_type(memories, MemoryType.USER_GOAL)
    constraints = _of_type(memories, MemoryType.USER_CONSTRAINT)
    assert any("Java" in m.content and m.slot == "user_profile.occupation" for m in profile)
    assert any("跳槽" in m.content for m in goals)
    assert any("8" in m.content for m in constraints)
    assert len(memories) >= 3


def test_case02_chit_chat_yields_no_memory_and_each_skip_is_counted(engram: Driver) -> None:
    texts = ["哈哈", "好的", "继续", "这是什么意思？", "thanks", "ok"]
    engram.ingest(user_turns(*texts))
    assert _active(engram) == []
    skips = [e for e in engram.events(("TurnSkipped",)) if isinstance(e, TurnSkipped)]
    assert len(skips) == len(texts)
    assert all(s.reason for s in skips)


def test_case03_java_preference_and_push_request(engram: Driver) -> None:
    engram.ingest(user_turns("我喜欢java编程，我希望你以后对话推送java知识"))
    memories = _active(engram)
    prefs = _of_type(memories, MemoryType.USER_PREFERENCE)
    assert any("java" in m.content.lower() for m in prefs)
    push = [m for m in memories if m.type in (MemoryType.USER_GOAL, MemoryType.USER_PREFERENCE)
            and "推送" in m.content and "java" in m.content.lower()]
    assert push


def test_case05_assistant_greeting_is_not_a_decision(engram: Driver) -> None:
    engram.ingest([turn("你好，我是AI助手", role="assistant")])
    assert _active(engram) == []
    assert engram.events(("TurnSkipped",))


def test_case06_new_occupation_replaces_old_and_history_keeps_it(engram: Driver) -> None:
    engram.ingest(user_turns("我是后端开发"))
    engram.ingest(user_turns("我是前端开发"))
    occupations = [m for m in _active(engram) if m.slot == "user_profile.occupation"]
    assert len(occupations) == 1 and "前端" in occupations[0].content
    everything = engram.memories("t1", "u1", ("active", "replaced"))
    replaced = [m for m in everything if m.status == "replaced"]
    assert any("后端" in m.content for m in replaced)
    changes = [e for e in engram.events(("MemoryChanged",)) if isinstance(e, MemoryChanged)]
    assert any(c.change == "replaced" and c.before and "后端" in c.before.content for c in changes)


def test_case07_reversed_preference_replaces_the_old_stance(engram: Driver) -> None:
    engram.ingest(user_turns("我喜欢Java"))
    engram.ingest(user_turns("我喜欢Python"))
    engram.ingest(user_turns("我不喜欢Java了"))
    prefs = _of_type(_active(engram), MemoryType.USER_PREFERENCE)
    java = [m for m in prefs if "java" in m.content.lower()]
    assert len(java) == 1 and java[0].negated
    assert any("python" in m.content.lower() and not m.negated for m in prefs)


def test_case08_more_specific_statement_is_kept_as_one_memory(engram: Driver) -> None:
    engram.ingest(user_turns("我喜欢Java"))
    engram.ingest(user_turns("我喜欢Java编程"))
    prefs = _of_type(_active(engram), MemoryType.USER_PREFERENCE)
    assert len(prefs) == 1
    assert "Java编程" in prefs[0].content
    assert prefs[0].source_count == 2


def test_case09_repeats_across_sessions_reinforce_one_memory(engram: Driver) -> None:
    for session in ("s1", "s2", "s3"):
        engram.ingest([turn("我不吃香菜", session=session)])
    memories = [m for m in _active(engram) if "香菜" in m.content]
    assert len(memories) == 1
    assert memories[0].source_count == 3
    first = [e for e in engram.events(("MemoryChanged",)) if isinstance(e, MemoryChanged)][0]
    assert first.after is not None and memories[0].importance > first.after.importance


def test_case10_name_and_occupation_are_different_slots(engram: Driver) -> None:
    engram.ingest(user_turns("我是Java开发"))
    engram.ingest(user_turns("我叫八千代"))
    slots = {m.slot: m for m in _active(engram)}
    assert "八千代" in slots["user_profile.name"].content
    assert "Java" in slots["user_profile.occupation"].content


def test_case11_phone_number_never_stored_and_audited(engram: Driver) -> None:
    engram.ingest(user_turns("我的电话是13800138000，以后有事打给我"))
    derived = [e for e in engram.events() if e.type != "TurnRecorded"]
    assert derived, "the turn produced no events at all"
    assert not any(b"13800138000" in encode(e) for e in derived)
    assert not any("13800138000" in m.content for m in engram.memories("t1", "u1", ("active", "replaced")))
    audits = engram.events(("GuardFired",))
    assert any("phone" in a.rule for a in audits)  # type: ignore[attr-defined]
    recalled = _recall(engram, "我的电话是多少")
    assert "13800138000" not in recalled.memory_section
    assert all("13800138000" not in m["content"] for m in recalled.recent)


def _session_messages(count: int, chars_each: int, session: str = "s1", start: int = 0) -> list:
    out = []
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        base = f"第{start + i}条：我计划把订单服务拆分成微服务，需要考虑数据库迁移和接口兼容。" if role == "user" else \
            f"第{start + i}条：已确认，我们采用分阶段迁移方案，先拆订单再拆库存，预算控制在预期之内。"
        text = (base * (chars_each // len(base) + 1))[:chars_each]
        out.append(turn(text, role=role, session=session))
    return out


def test_cases12_to_15_incremental_summaries(engram: Driver) -> None:
    engram.ingest(_session_messages(15, 200))
    v1 = engram.summary("t1", "u1", "s1")
    assert v1 is not None and v1.version == 1 and v1.source_message_count == 15
    rendered = v1.sections.render()
    for heading in ("[CURRENT_TOPIC]", "[CONFIRMED_FACTS]", "[TODO_ITEMS]", "[USER_CONSTRAINTS]", "[OPEN_QUESTIONS]"):
        assert heading in rendered
    engram.ingest(_session_messages(7, 215, start=15))
    v2 = engram.summary("t1", "u1", "s1")
    assert v2 is not None and v2.version == 2 and v2.source_message_count == 7
    assert v2.total_message_count == 22
    engram.ingest(_session_messages(6, 80, start=22))
    v3 = engram.summary("t1", "u1", "s1")
    assert v3 is not None and v3.version == 2
    request = engram.events(("SummaryRequested",))[-1]
    again = request.model_copy(update={"event_id": stable_id("again", request.event_id)})
    engram.append([again])
    snapshots = engram.events(("SummarySnapshotted",))
    assert len(snapshots) == 2


def _card(n: int, *, tags: tuple[str, ...] = (), profile: str = "", goal: str = "", agents=("a1",)) -> GlobalCardSaved:
    card = GlobalCard(card_id=f"c{n}", tenant_id="t1", user_id="u1", name=f"card {n}", profile=profile,
                      long_term_goal=goal, preferences=f"preference {n}", tags=tags, agent_ids=agents,
                      created_at=T0, updated_at=T0 + timedelta(minutes=n))
    return GlobalCardSaved(event_id=stable_id("card", str(n)), occurred_at=T0, tenant_id="t1", user_id="u1", card=card)


def test_case16_three_bound_cards_are_all_recalled(engram: Driver) -> None:
    engram.append([_card(i) for i in range(3)])
    result = _recall(engram, "hello")
    assert sorted(i.item_id for i in result.items if i.kind == "global") == ["c0", "c1", "c2"]


def test_case17_mandatory_cards_then_java_tagged_cards(engram: Driver) -> None:
    cards = [_card(0, profile="后端工程师"), _card(1, goal="成为架构师")]
    cards += [_card(i, tags=("java",)) for i in (2, 3, 4, 5)]
    cards += [_card(i, tags=("cooking",)) for i in (6, 7, 8, 9)]
    engram.append(cards)
    chosen = [i.item_id for i in _recall(engram, "推荐点java知识").items if i.kind == "global"]
    assert len(chosen) == 5
    assert set(chosen[:2]) == {"c0", "c1"}
    assert set(chosen[2:]) <= {"c2", "c3", "c4", "c5"}


def test_case18_no_memory_means_no_memory_section(engram: Driver) -> None:
    engram.ingest([turn("hello", user="other")])
    result = _recall(engram, "What do you know about me?")
    assert result.memory_section == ""
    system = [m for m in result.messages() if m["role"] == "system"]
    assert system == []
    assert REFERENCE_CLAUSE_EN not in str(result.messages())


def test_case19_context_order_and_reference_clause(engram: Driver) -> None:
    engram.append([_card(0, profile="Java 后端工程师")])
    engram.ingest(_session_messages(12, 120))
    engram.ingest(user_turns("我喜欢Java编程，平时主要写 Spring Boot 服务"))
    result = _recall(engram, "我喜欢什么编程语言？")
    kinds = [i.kind for i in result.items]
    assert kinds.index("global") < min(kinds.index(k) for k in kinds if k in ("profile", "memory"))
    assert max(i for i, k in enumerate(kinds) if k in ("profile", "memory")) < kinds.index("summary")
    section = result.memory_section
    assert REFERENCE_CLAUSE_ZH in section
    assert section.index("全局记忆") < section.index("长期记忆") < section.index("会话摘要")
    messages = result.messages("You are helpful.")
    assert [m["role"] for m in messages].count("system") == 1
    assert messages[-1] == {"role": "user", "content": "我喜欢什么编程语言？"}
    assert len(messages) - 2 == len(result.recent) <= 10


def test_case20_other_tenant_recalls_nothing_about_cats(engram: Driver) -> None:
    engram.ingest([turn("我喜欢猫", tenant="A", user="u1"), turn("我真的很喜欢猫", tenant="A", user="u1")])
    engram.ingest([turn("hello there", tenant="B", user="u1")])
    own = _recall(engram, "我喜欢什么", tenant="A")
    assert "猫" in own.memory_section
    result = _recall(engram, "我喜欢什么", tenant="B")
    assert "猫" not in result.memory_section
    assert "猫" not in str(result.messages())


def test_case21_replay_reproduces_the_same_state(engram: Driver) -> None:
    engram.ingest(user_turns("我是后端开发", "我喜欢Java", "我不喜欢Java了", "I love Go", "我不吃香菜"))
    engram.ingest(_session_messages(12, 150))
    engram.append([_card(1, profile="x")])
    before = engram.state_hash()
    ids_before = sorted(m.memory_id for m in engram.memories("t1", "u1", ("active", "replaced")))
    after = engram.replay()
    assert after == before
    assert sorted(m.memory_id for m in engram.memories("t1", "u1", ("active", "replaced"))) == ids_before


def test_case22_english_occupation_and_reversed_go_preference(engram: Driver) -> None:
    engram.ingest(user_turns("I'm a backend engineer", "I love Go",
                             "Actually I don't like Go anymore, I prefer Rust"))
    memories = _active(engram)
    occupation = [m for m in memories if m.slot == "user_profile.occupation"]
    assert len(occupation) == 1 and "backend engineer" in occupation[0].content.lower()
    prefs = _of_type(memories, MemoryType.USER_PREFERENCE)
    go = [m for m in prefs if "go" in (m.topic or "")]
    assert len(go) == 1 and go[0].negated
    assert any("rust" in m.content.lower() and not m.negated for m in prefs)
