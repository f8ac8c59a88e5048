"""Deterministic synthetic chat traffic for the ingest benchmark.

Mixed Chinese / English conversations of many users and sessions, generated
from a seed: about 30 % chit-chat, the rest preferences, profile facts, goals,
constraints, facts, confirmed assistant decisions, contradictions (a like
turned into a dislike, a new job, a move) and repeats of earlier statements.
Turns of all users are interleaved by event time, as a chat platform would
deliver them. The same seed and size always give the same turns.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from engram.schemas.inputs import TurnInput

T0 = datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc)

# Share of each kind of turn (sums to 1).
MIX: dict[str, float] = {
    "chitchat": 0.30,
    "preference": 0.15,
    "profile": 0.09,
    "goal": 0.07,
    "constraint": 0.07,
    "fact": 0.04,
    "decision": 0.14,
    "contradiction": 0.07,
    "repeat": 0.07,
}

TOPICS_EN = ["Java", "Python", "Go", "Rust", "TypeScript", "Kotlin", "jazz", "hiking", "sushi", "tea",
             "coffee", "photography", "chess", "running", "sci-fi novels", "board games", "yoga",
             "cooking Italian food", "spicy food", "cats", "dogs", "road trips", "podcasts", "baking"]
TOPICS_ZH = ["Java", "Python", "Go语言", "Rust", "前端开发", "爵士乐", "爬山", "寿司", "喝茶", "咖啡", "摄影",
             "下象棋", "跑步", "科幻小说", "桌游", "瑜伽", "做饭", "辣的菜", "猫", "狗", "自驾游", "播客", "烘焙",
             "羽毛球", "古典音乐", "钓鱼"]
JOBS_EN = ["backend engineer", "frontend developer", "data scientist", "product manager", "nurse",
           "teacher", "designer", "Java developer", "student", "accountant", "DevOps engineer"]
JOBS_ZH = ["后端开发", "前端开发", "数据分析师", "产品经理", "护士", "老师", "设计师", "Java开发工程师", "研究生",
           "会计", "运维工程师"]
CITIES_EN = ["Berlin", "Shanghai", "Toronto", "Austin", "Singapore", "Lisbon", "Seattle", "Melbourne"]
CITIES_ZH = ["上海", "北京", "深圳", "杭州", "成都", "广州", "南京", "西安"]
NAMES_EN = ["Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Ivy", "Jack"]
NAMES_ZH = ["小王", "李雷", "韩梅梅", "八千代", "张伟", "王芳", "刘洋", "陈静", "杨帆", "赵敏"]
GOALS_EN = ["switch jobs within three months", "run a half marathon this year", "learn Rust by summer",
            "pass the AWS certification", "read 30 books this year", "save for a house",
            "learn to cook Thai food", "get promoted to senior engineer"]
GOALS_ZH = ["3个月内跳槽", "今年跑完半程马拉松", "暑假前学会Rust", "考过软考高级", "今年读完30本书", "攒钱买房",
            "学会做川菜", "明年升到高级工程师"]
FOODS_EN = ["peanuts", "shellfish", "gluten", "dairy", "cilantro"]
FOODS_ZH = ["香菜", "花生", "海鲜", "辣椒", "牛奶"]
TECH_EN = ["PostgreSQL", "microservices", "a monolith first", "Kafka", "Redis caching", "React", "Vue",
           "GitHub Actions", "Kubernetes", "SQLite"]
TECH_ZH = ["微服务架构", "单体架构", "PostgreSQL", "Kafka", "Redis缓存", "React", "Vue", "Kubernetes",
           "分库分表方案", "SQLite"]

CHITCHAT_USER_EN = ["thanks", "ok", "lol", "got it", "cool, thanks!", "haha nice", "sounds good",
                    "what does that mean?", "continue", "hmm", "nice one", "ok thanks a lot",
                    "Good morning! How is it going today?", "That is funny, tell me another joke please."]
CHITCHAT_USER_ZH = ["哈哈", "好的", "继续", "嗯嗯", "谢谢", "这是什么意思？", "ok", "厉害", "哈哈哈哈太好笑了",
                    "早上好呀", "明白了", "你好", "再讲一个笑话吧，刚才那个挺有意思的"]
CHITCHAT_ASSISTANT_EN = ["Glad to help! Let me know if anything else comes up.",
                         "Sure thing. Happy to keep going whenever you are ready.",
                         "Haha, here is another one: why did the developer go broke? Because he used up all his cache.",
                         "You're welcome! Have a great day."]
CHITCHAT_ASSISTANT_ZH = ["不客气，有问题随时找我。", "好的，我们继续。", "哈哈，再给你讲一个：程序员最怕什么？怕需求改了又改。",
                         "早上好！今天有什么可以帮你的吗？"]
FILLER_EN = ["Honestly", "By the way", "Just so you know", "Oh and", "Also", ""]
FILLER_ZH = ["对了，", "顺便说一下，", "其实", "说实话，", ""]
EXPLAIN_EN = ("There are a few trade-offs to weigh here: operational cost, the team's familiarity with the "
              "stack, how the load is expected to grow and how much time there is before the first release. ")
EXPLAIN_ZH = "这里需要权衡几个因素：运维成本、团队对技术栈的熟悉程度、后续的负载增长，以及第一个版本上线前还有多少时间。"


@dataclass
class _User:
    tenant: str
    user: str
    agent: str
    zh: bool
    likes: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)


def _pick(rng: random.Random, zh: bool, en_list: list[str], zh_list: list[str]) -> str:
    return rng.choice(zh_list if zh else en_list)


def _user_text(rng: random.Random, u: _User, kind: str) -> str:
    """One user message of the given kind, in the user's language (with some code-switching)."""
    zh = u.zh if rng.random() > 0.15 else not u.zh
    if kind == "chitchat":
        return _pick(rng, zh, CHITCHAT_USER_EN, CHITCHAT_USER_ZH)
    if kind == "repeat" and u.said:
        return rng.choice(u.said)
    if kind == "contradiction" and u.likes:
        topic = rng.choice(u.likes)
        u.likes.remove(topic)
        return (rng.choice([f"我不喜欢{topic}了", f"其实我现在不太喜欢{topic}了，换个别的吧"]) if zh else
                rng.choice([f"Actually I don't like {topic} anymore.",
                            f"I used to love {topic}, but honestly I don't like {topic} these days."]))
    if kind == "contradiction":  # nothing to contradict yet: a new job or a move
        kind = "profile"
    filler = _pick(rng, zh, FILLER_EN, FILLER_ZH)
    if kind == "preference":
        topic = _pick(rng, zh, TOPICS_EN, TOPICS_ZH)
        u.likes.append(topic)
        text = (rng.choice([f"我喜欢{topic}", f"我最近特别喜欢{topic}，周末经常花时间在这上面",
                            f"我比较偏好{topic}，以后推荐内容可以多往这个方向", f"我不喜欢{topic}"]) if zh else
                rng.choice([f"I love {topic}.", f"I really like {topic}, I spend most weekends on it.",
                            f"I prefer {topic} over most other things, so keep that in mind for suggestions.",
                            f"I don't like {topic}."]))
    elif kind == "profile":
        what = rng.randrange(3)
        if what == 0:
            job = _pick(rng, zh, JOBS_EN, JOBS_ZH)
            text = f"我是{job}，平时工作比较忙" if zh else f"I'm a {job} and work keeps me pretty busy."
        elif what == 1:
            name = _pick(rng, zh, NAMES_EN, NAMES_ZH)
            text = f"我叫{name}" if zh else f"My name is {name}."
        else:
            city = _pick(rng, zh, CITIES_EN, CITIES_ZH)
            text = f"我住在{city}" if zh else f"I live in {city} now."
    elif kind == "goal":
        goal = _pick(rng, zh, GOALS_EN, GOALS_ZH)
        text = (rng.choice([f"我计划{goal}", f"我的目标是{goal}，希望你能帮我盯着进度"]) if zh else
                rng.choice([f"My goal is to {goal}.", f"I plan to {goal}, please help me keep track of it."]))
    elif kind == "constraint":
        hour = rng.randrange(7, 11)
        food = _pick(rng, zh, FOODS_EN, FOODS_ZH)
        text = (rng.choice([f"我晚上{hour}点后才有时间学习", f"我不吃{food}", "不要在工作日白天给我发消息",
                            f"我每天最多只能花{hour - 5}个小时在这上面"]) if zh else
                rng.choice([f"I can only study after {hour} pm on weekdays.", f"I'm allergic to {food}.",
                            "Please never schedule anything for me before 9 am.",
                            f"I need to keep the budget under {hour * 100} dollars."]))
    else:  # fact
        topic = _pick(rng, zh, TOPICS_EN, TOPICS_ZH)
        text = (rng.choice([f"我有两个孩子，老大今年上小学", f"我上周去了一趟{_pick(rng, True, CITIES_EN, CITIES_ZH)}",
                            f"我养了一只猫，叫{_pick(rng, True, NAMES_EN, NAMES_ZH)}"]) if zh else
                rng.choice(["I have two kids, the older one just started school.",
                            f"I went to {_pick(rng, False, CITIES_EN, CITIES_ZH)} last week for a {topic} meetup.",
                            f"I have a cat named {_pick(rng, False, NAMES_EN, NAMES_ZH)}."]))
    if filler and zh:
        text = f"{filler}{text}"
    elif filler:
        keep = text.startswith(("I ", "I'"))
        text = f"{filler}, {text if keep else text[0].lower() + text[1:]}"
    u.said.append(text)
    if len(u.said) > 20:
        u.said.pop(0)
    return text


def _assistant_text(rng: random.Random, u: _User, kind: str) -> str:
    zh = u.zh
    if kind == "decision":
        tech = _pick(rng, zh, TECH_EN, TECH_ZH)
        budget = rng.randrange(3, 30)
        return (rng.choice([f"已确认：我们采用{tech}，项目预算控制在{budget}万元以内。",
                            f"好的，最终确定用{tech}，下周一可以开始执行。",
                            f"{EXPLAIN_ZH}综合来看，我建议直接采用{tech}，就按这个方案执行，没问题。"]) if zh else
                rng.choice([f"Confirmed: we'll go with {tech}, and keep the budget under {budget}k dollars.",
                            f"Agreed, we decided to use {tech}; I'll start on the migration plan on Monday.",
                            f"{EXPLAIN_EN}Weighing all that, we'll go with {tech}. Decided."]))
    if kind == "chitchat" and rng.random() < 0.5:
        return _pick(rng, zh, CHITCHAT_ASSISTANT_EN, CHITCHAT_ASSISTANT_ZH)
    # an ordinary answer: long, informative, no decision signal
    return (EXPLAIN_ZH + "你可以先列一个清单，再逐项比较。" if zh else
            EXPLAIN_EN + "A short list of options compared side by side usually makes the choice clearer.")


def generate_turns(n_turns: int, seed: int = 7, users: int | None = None, tenants: int = 3) -> list[TurnInput]:
    """`n_turns` turns of `users` users (default: one per 100 turns), interleaved by event time."""
    rng = random.Random(seed)
    n_users = users or max(1, n_turns // 100)
    people = [
        _User(tenant=f"tenant-{i % tenants}", user=f"user-{i:05d}", agent=f"agent-{i % 4}", zh=rng.random() < 0.5)
        for i in range(n_users)
    ]
    kinds, weights = zip(*MIX.items())
    per_user = [n_turns // n_users + (1 if i < n_turns % n_users else 0) for i in range(n_users)]
    raw: list[tuple[datetime, int, dict[str, object]]] = []
    serial = 0
    for person, budget in zip(people, per_user):
        clock = T0 + timedelta(minutes=rng.randrange(0, 24 * 60))
        session_no = 0
        made = 0
        while made < budget:
            session_no += 1
            session = f"{person.user}-s{session_no:03d}"
            length = min(budget - made, rng.randrange(8, 40))
            for _ in range(length):
                kind = rng.choices(kinds, weights)[0]
                if kind == "decision":
                    role, text = "assistant", _assistant_text(rng, person, kind)
                elif kind == "chitchat" and rng.random() < 0.4:
                    role, text = "assistant", _assistant_text(rng, person, kind)
                else:
                    role, text = "user", _user_text(rng, person, kind)
                serial += 1
                raw.append((clock, serial, dict(
                    tenant=person.tenant, user=person.user, agent=person.agent, session=session,
                    message_id=f"m{serial:08d}", role=role, content=text, ts=clock,
                    metadata={"bench_kind": kind},
                )))
                clock += timedelta(seconds=rng.randrange(5, 90))
                made += 1
            clock += timedelta(hours=rng.randrange(2, 72))
    raw.sort(key=lambda item: (item[0], item[1]))
    return [TurnInput(**fields) for _, _, fields in raw]  # type: ignore[arg-type]


def describe(turns: list[TurnInput]) -> dict[str, object]:
    """Shape of a generated set: users, sessions, mix, average length."""
    kinds = Counter(t.metadata.get("bench_kind", "?") for t in turns)
    total = max(1, len(turns))
    return {
        "turns": len(turns),
        "users": len({(t.tenant, t.user) for t in turns}),
        "sessions": len({(t.tenant, t.user, t.session) for t in turns}),
        "assistant_share": round(sum(t.role == "assistant" for t in turns) / total, 3),
        "cjk_share": round(sum(any("\u4e00" <= ch <= "\u9fff" for ch in t.content) for t in turns) / total, 3),
        "avg_chars": round(sum(len(t.content) for t in turns) / total, 1),
        "mix": {k: round(v / total, 3) for k, v in sorted(kinds.items())},
    }
