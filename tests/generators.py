"""Deterministic generated conversations for replay, parity and isolation tests."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from engram.schemas.inputs import TurnInput

T0 = datetime(2026, 2, 1, 8, 0, tzinfo=timezone.utc)

USER_LINES = [
    "我是{job}", "我喜欢{thing}", "我不喜欢{thing}了", "我计划{months}个月内学会{thing}", "我不吃{food}",
    "I'm a {job_en}", "I love {thing_en}", "Actually I don't like {thing_en} anymore", "My name is {name}",
    "I live in {city}", "I only have time on weekends", "我的预算只有{money}元", "哈哈", "好的", "thanks",
    "我住在{city_zh}", "这是什么意思？", "I want to learn {thing_en} this year",
]
ASSISTANT_LINES = [
    "已确认：我们采用{thing}方案，下周开始执行。", "好的，我明白了，我们继续聊吧，这个问题还需要再想想看。",
    "Agreed, we'll go with {thing_en} for the new service and start next week.",
    "That is an interesting question, there are many possible answers to it.",
]
FILL = {
    "job": ["后端开发", "前端开发", "产品经理", "数据分析师"], "job_en": ["backend engineer", "designer", "nurse"],
    "thing": ["Java", "Python", "Go", "Rust", "摄影", "跑步"], "thing_en": ["Go", "Rust", "tennis", "jazz", "sushi"],
    "months": ["3", "6"], "food": ["香菜", "辣椒"], "name": ["Alice", "Bob", "八千代"],
    "city": ["Berlin", "Paris", "Shanghai"], "city_zh": ["上海", "北京"], "money": ["5000", "10000"],
}


def _fill(template: str, rng: random.Random) -> str:
    return template.format(**{k: rng.choice(v) for k, v in FILL.items()})


def conversations(seed: int, turns: int, tenants: int = 2, users: int = 3, sessions: int = 2) -> list[TurnInput]:
    """`turns` turns spread over tenants, users and sessions, in event-time order."""
    rng = random.Random(seed)
    out = []
    for n in range(turns):
        role = "assistant" if rng.random() < 0.25 else "user"
        template = rng.choice(ASSISTANT_LINES if role == "assistant" else USER_LINES)
        out.append(TurnInput(
            tenant=f"tenant{rng.randrange(tenants)}", user=f"user{rng.randrange(users)}", agent="agent",
            session=f"session{rng.randrange(sessions)}", message_id=f"msg{seed}-{n}", role=role,  # type: ignore[arg-type]
            content=_fill(template, rng), ts=T0 + timedelta(minutes=n),
        ))
    return out
