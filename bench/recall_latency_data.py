"""Deterministic data for the recall-latency benchmark.

Every user of a size group gets `size` current memories in the form Engram's
extractors store them ("User likes jazz", "用户不吃香菜", "Decided: ..."), about
half the users leaning Chinese and half English, with code-switching; three of
them are L3 persona memories (name, occupation, company). Each user also has
two global cards, a session summary and a ten-turn recent window in the
session the questions are asked in, so a recall assembles a full context.

Questions are realistic chat questions in the user's language (with some
switching), about topics, places, projects and people the user's memories
mention. The same seed, group and user always give the same memories and
questions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from engram.core.domains import profile_layer
from engram.projections.ports import RecentTurn
from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord, MemoryType, SummarySections

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
HISTORY_DAYS = 400
AGENT = "agent-bench"
SESSION = "s-current"

TOPICS = [("jazz", "爵士乐"), ("hiking", "爬山"), ("sushi", "寿司"), ("green tea", "绿茶"), ("coffee", "咖啡"),
          ("photography", "摄影"), ("chess", "下象棋"), ("running", "跑步"), ("sci-fi novels", "科幻小说"),
          ("board games", "桌游"), ("yoga", "瑜伽"), ("Italian food", "意大利菜"), ("spicy food", "辣的菜"),
          ("cats", "猫"), ("dogs", "狗"), ("road trips", "自驾游"), ("podcasts", "播客"), ("baking", "烘焙"),
          ("badminton", "羽毛球"), ("classical music", "古典音乐"), ("fishing", "钓鱼"), ("swimming", "游泳"),
          ("calligraphy", "书法"), ("anime", "动漫"), ("cycling", "骑行"), ("gardening", "种花"),
          ("Rust", "Rust"), ("Python", "Python"), ("Go", "Go语言"), ("Java", "Java"), ("TypeScript", "TypeScript"),
          ("Kotlin", "Kotlin"), ("hot pot", "火锅"), ("dim sum", "早茶点心"), ("museums", "博物馆"),
          ("camping", "露营"), ("table tennis", "乒乓球"), ("K-dramas", "韩剧"), ("piano", "钢琴"),
          ("skiing", "滑雪"), ("rock climbing", "攀岩"), ("mystery novels", "推理小说"), ("street food", "小吃"),
          ("craft beer", "精酿啤酒"), ("bubble tea", "奶茶"), ("tennis", "网球"), ("karaoke", "唱K"),
          ("woodworking", "木工"), ("stargazing", "看星星"), ("guitar", "吉他")]
QUALIFIERS = [("on weekends", "周末的时候"), ("with friends", "和朋友一起"), ("after work", "下班以后"),
              ("in the morning", "早上"), ("when travelling", "旅行的时候"), ("with the kids", "带孩子"),
              ("alone", "一个人"), ("in summer", "夏天"), ("in winter", "冬天"), ("every day", "每天"),
              ("twice a week", "每周两次"), ("since college", "从大学开始"), ("lately", "最近"),
              ("on holidays", "放假的时候"), ("at home", "在家里"), ("online", "在网上")]
CITIES = [("Berlin", "柏林"), ("Shanghai", "上海"), ("Toronto", "多伦多"), ("Austin", "奥斯汀"),
          ("Singapore", "新加坡"), ("Lisbon", "里斯本"), ("Seattle", "西雅图"), ("Melbourne", "墨尔本"),
          ("Beijing", "北京"), ("Shenzhen", "深圳"), ("Hangzhou", "杭州"), ("Chengdu", "成都"), ("Tokyo", "东京"),
          ("Osaka", "大阪"), ("Kyoto", "京都"), ("Paris", "巴黎"), ("London", "伦敦"), ("Xi'an", "西安"),
          ("Nanjing", "南京"), ("Guangzhou", "广州"), ("Hong Kong", "香港"), ("Taipei", "台北")]
EVENTS = [("a conference", "参加技术大会"), ("a wedding", "参加婚礼"), ("a business trip", "出差"),
          ("a family visit", "探亲"), ("a hackathon", "参加黑客松"), ("a concert", "看演唱会"),
          ("a marathon", "跑马拉松"), ("a job interview", "面试"), ("vacation", "度假"), ("a meetup", "参加线下聚会")]
MONTHS = [("January", "1月"), ("February", "2月"), ("March", "3月"), ("April", "4月"), ("May", "5月"),
          ("June", "6月"), ("July", "7月"), ("August", "8月"), ("September", "9月"), ("October", "10月"),
          ("November", "11月"), ("December", "12月")]
PROJECTS = [("the billing service", "计费系统"), ("the mobile app", "移动端App"), ("the data pipeline", "数据管道"),
            ("the search page", "搜索页面"), ("the recommendation engine", "推荐引擎"), ("the admin console", "管理后台"),
            ("the payment gateway", "支付网关"), ("the chatbot", "聊天机器人"), ("the reporting dashboard", "报表看板"),
            ("the migration", "数据迁移"), ("the onboarding flow", "新用户引导流程"), ("the inventory system", "库存系统"),
            ("the website redesign", "官网改版"), ("the API gateway", "API网关"), ("the CRM", "客户管理系统")]
TECH = [("PostgreSQL", "PostgreSQL"), ("Kafka", "Kafka"), ("Redis caching", "Redis缓存"), ("React", "React"),
        ("Vue", "Vue"), ("Kubernetes", "Kubernetes"), ("a monolith first", "先做单体架构"),
        ("microservices", "微服务架构"), ("SQLite", "SQLite"), ("GitHub Actions", "GitHub Actions"),
        ("gRPC", "gRPC"), ("ClickHouse", "ClickHouse"), ("Flutter", "Flutter"), ("Terraform", "Terraform"),
        ("sharding", "分库分表方案")]
STEPS = [("write the design doc", "写设计文档"), ("set up CI", "搭好CI"), ("finish the load test", "完成压测"),
         ("review the schema", "评审表结构"), ("ship the beta", "发布测试版"), ("fix the flaky tests", "修复不稳定的测试"),
         ("migrate the old data", "迁移旧数据"), ("prepare the demo", "准备演示"), ("update the docs", "更新文档"),
         ("benchmark the queries", "给查询做性能测试")]
WEEKDAYS = [("Monday", "周一"), ("Tuesday", "周二"), ("Wednesday", "周三"), ("Thursday", "周四"), ("Friday", "周五"),
            ("next week", "下周"), ("the end of the month", "月底"), ("the next sprint", "下个迭代")]
GOALS = [("switch jobs", "跳槽"), ("run a half marathon", "跑完半程马拉松"), ("learn Rust", "学会Rust"),
         ("pass the AWS certification", "考过AWS认证"), ("read 30 books", "读完30本书"), ("save for a house", "攒钱买房"),
         ("learn to cook Thai food", "学会做泰国菜"), ("get promoted to senior engineer", "升到高级工程师"),
         ("lose five kilos", "减重五公斤"), ("learn Japanese", "学日语"), ("publish a blog series", "写一个博客系列"),
         ("build a side project", "做一个业余项目")]
FOODS = [("peanuts", "花生"), ("shellfish", "海鲜"), ("gluten", "麸质"), ("dairy", "牛奶"), ("cilantro", "香菜"),
         ("chili", "辣椒"), ("mushrooms", "蘑菇"), ("eggs", "鸡蛋")]
PEOPLE = [("Alice", "小王"), ("Bob", "李雷"), ("Carol", "韩梅梅"), ("David", "张伟"), ("Emma", "王芳"),
          ("Frank", "刘洋"), ("Grace", "陈静"), ("Henry", "杨帆"), ("Ivy", "赵敏"), ("Jack", "周杰")]
RELATIONS = [("colleague", "同事"), ("manager", "领导"), ("sister", "姐姐"), ("brother", "弟弟"), ("friend", "朋友"),
             ("neighbour", "邻居"), ("mentor", "导师"), ("partner", "对象")]
REASONS = [("because it helps them relax", "因为能放松"), ("because a friend recommended it", "因为朋友推荐"),
           ("since the pandemic", "疫情以后开始的"), ("mostly to stay healthy", "主要是为了健康"),
           ("because of the kids", "因为孩子"), ("after a trip to Japan", "去了一趟日本之后"),
           ("for work reasons", "因为工作需要"), ("because it is cheap", "因为便宜"), ("for the community", "为了认识朋友"),
           ("to keep learning", "为了多学点东西")]
JOBS = [("backend engineer", "后端开发"), ("frontend developer", "前端开发"), ("data scientist", "数据分析师"),
        ("product manager", "产品经理"), ("nurse", "护士"), ("teacher", "老师"), ("designer", "设计师"),
        ("DevOps engineer", "运维工程师")]
COMPANIES = [("a fintech startup", "一家金融科技创业公司"), ("a game studio", "一家游戏公司"), ("a hospital", "一家医院"),
             ("a university", "一所大学"), ("an e-commerce company", "一家电商公司"), ("a bank", "一家银行")]

# Share of each kind of memory (sums to 1).
KINDS: dict[str, float] = {"preference": 0.30, "travel": 0.12, "goal": 0.07, "constraint": 0.08, "person": 0.08,
                           "decision": 0.17, "plan": 0.12, "fact": 0.06}


@dataclass(frozen=True)
class UserContext:
    """Everything one user has besides memories: cards, a summary and the recent window."""

    cards: list[GlobalCard]
    summary: SummarySnapshotted
    turns: list[RecentTurn]


def group_tenant(size: int) -> str:
    """One Engram tenant (so one Weaviate tenant, one mem0 collection) per size group."""
    return f"bench-n{size}"


def user_id(index: int) -> str:
    return f"u{index:05d}"


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random("/".join(str(p) for p in (seed, *parts)))


def _zh_user(seed: int, tenant: str, user: str) -> bool:
    return _rng(seed, tenant, user, "lang").random() < 0.5


def _memory_text(rng: random.Random, kind: str, zh: bool) -> tuple[MemoryType, str, tuple[str, ...]]:
    """(type, content, keywords) of one memory in the stored third-person form."""
    i = 1 if zh else 0

    def pick(options: list[tuple[str, str]]) -> str:
        return rng.choice(options)[i]

    if kind == "preference":
        topic, qual, reason = pick(TOPICS), pick(QUALIFIERS), pick(REASONS)
        form = rng.randrange(4)
        if zh:
            text = [f"用户喜欢{qual}{topic}，{reason}", f"用户{qual}不太喜欢{topic}，{reason}",
                    f"用户最近迷上了{topic}，{qual}经常去，{reason}",
                    f"用户比较偏好{topic}（{reason}），推荐内容可以多往这个方向"][form]
        else:
            text = [f"User likes {topic} {qual} {reason}", f"User doesn't like {topic} {qual}",
                    f"User has been into {topic} {qual} {reason}",
                    f"User prefers {topic} {reason}, so suggestions should lean that way"][form]
        return MemoryType.USER_PREFERENCE, text, (topic,)
    if kind == "travel":
        city, event, month, day = pick(CITIES), pick(EVENTS), pick(MONTHS), rng.randrange(1, 29)
        text = f"用户{month}{day}日去了{city}{event}" if zh else f"User went to {city} on {month} {day} for {event}"
        return MemoryType.USER_FACT, text, (city,)
    if kind == "goal":
        goal, when, why = pick(GOALS), pick(WEEKDAYS + MONTHS), pick(REASONS)
        text = f"用户的目标是{when}前{goal}，{why}" if zh else f"User's goal is to {goal} by {when} {why}"
        return MemoryType.USER_GOAL, text, (goal,)
    if kind == "constraint":
        form = rng.randrange(3)
        food, hour, weekday = pick(FOODS), rng.randrange(6, 12), pick(WEEKDAYS[:5])
        if zh:
            text = [f"用户不吃{food}，{pick(REASONS)}", f"用户{weekday}晚上{hour}点以后才有空",
                    f"用户每周最多花{hour - 4}个小时在{pick(TOPICS)}上"][form]
        else:
            text = [f"User is allergic to {food} {pick(REASONS)}", f"User is only free after {hour} pm on {weekday}",
                    f"User can spend at most {hour - 4} hours a week on {pick(TOPICS)}"][form]
        return MemoryType.USER_CONSTRAINT, text, ((food,) if form == 0 else ())
    if kind == "person":
        name, rel, topic, city = pick(PEOPLE), pick(RELATIONS), pick(TOPICS), pick(CITIES)
        text = (f"用户的{rel}{name}住在{city}，也喜欢{topic}" if zh else
                f"User's {rel} {name} lives in {city} and is also into {topic}")
        return MemoryType.USER_FACT, text, (name, topic)
    if kind == "decision":
        tech, project, budget = pick(TECH), pick(PROJECTS), rng.randrange(3, 60)
        text = (f"已确认：{project}采用{tech}，预算控制在{budget}万元以内" if zh else
                f"Decided to use {tech} for {project}, with the budget under {budget}k dollars")
        return MemoryType.ASSISTANT_DECISION, text, (tech, project)
    if kind == "plan":
        step, project, when, who = pick(STEPS), pick(PROJECTS), pick(WEEKDAYS), pick(PEOPLE)
        text = (f"计划：{when}前和{who}一起{step}（{project}）" if zh else
                f"Plan: {step} for {project} with {who} by {when}")
        return MemoryType.ASSISTANT_PLAN, text, (project,)
    topic, city = pick(TOPICS), pick(CITIES)
    form = rng.randrange(3)
    if zh:
        text = [f"用户在{city}住过{rng.randrange(2, 12)}年", f"用户养了一只猫，叫{pick(PEOPLE)}，{pick(REASONS)}",
                f"用户在{city}参加过一个{topic}兴趣小组，{pick(MONTHS)}开始的"][form]
    else:
        text = [f"User lived in {city} for {rng.randrange(2, 12)} years",
                f"User has a cat named {pick(PEOPLE)} {pick(REASONS)}",
                f"User joined a {topic} club in {city} in {pick(MONTHS)}"][form]
    return MemoryType.USER_FACT, text, (city,)


def _persona(seed: int, tenant: str, user: str, zh: bool) -> list[tuple[str, str]]:
    rng = _rng(seed, tenant, user, "persona")
    i = 1 if zh else 0
    name, job, company = rng.choice(PEOPLE)[i], rng.choice(JOBS)[i], rng.choice(COMPANIES)[i]
    if zh:
        return [("name", f"用户叫{name}"), ("occupation", f"用户是{job}"), ("company", f"用户在{company}工作")]
    return [("name", f"User's name is {name}"), ("occupation", f"User is a {job}"),
            ("company", f"User works at {company}")]


def generate_memories(seed: int, tenant: str, user: str, size: int) -> list[MemoryRecord]:
    """`size` active memories of one user: 3 L3 persona memories, then facts and preferences in the
    standing profile (L3) as consolidation files them (`core.domains.profile_layer`), the rest L1."""
    zh_lean = _zh_user(seed, tenant, user)
    rng = _rng(seed, tenant, user, "memories")
    kinds, weights = zip(*KINDS.items())
    records: list[MemoryRecord] = []
    persona = _persona(seed, tenant, user, zh_lean)[: max(0, min(3, size // 10))]
    for n, (attribute, text) in enumerate(persona):
        at = NOW - timedelta(days=HISTORY_DAYS - n)
        records.append(MemoryRecord(
            memory_id=f"p-{attribute}", tenant_id=tenant, user_id=user, agent_id=AGENT, layer="L3",
            type=MemoryType.USER_PROFILE, slot=f"user_profile.{attribute}", content=text, confidence=0.9,
            importance=0.9, source_count=2, created_at=at, updated_at=at, last_seen_at=at,
            source_message_ids=(f"{user}-m{n:06d}",)))
    seen_texts: set[str] = set()
    for n in range(size - len(persona)):
        for _attempt in range(30):  # current memory is consolidated: no two active memories say the same
            kind = rng.choices(kinds, weights)[0]
            zh = zh_lean if rng.random() > 0.15 else not zh_lean
            memory_type, text, keywords = _memory_text(rng, kind, zh)
            if text not in seen_texts:
                break
        seen_texts.add(text)
        created = NOW - timedelta(minutes=rng.randrange(60, HISTORY_DAYS * 24 * 60))
        seen = min(NOW, created + timedelta(minutes=rng.randrange(0, 60 * 24 * 30)))
        records.append(MemoryRecord(
            memory_id=f"m{n:06d}", tenant_id=tenant, user_id=user, agent_id=AGENT,
            layer="L3" if profile_layer(memory_type, memory_type.value, text) else "L1",
            session_id=f"s{rng.randrange(1, 1 + max(1, size // 20)):04d}", type=memory_type,
            slot=memory_type.value, content=text, confidence=round(rng.uniform(0.6, 0.95), 2),
            importance=round(rng.uniform(0.2, 0.9), 2), source_count=1 + int(rng.random() < 0.2),
            keywords=tuple(k.lower() for k in keywords), created_at=created, updated_at=seen, last_seen_at=seen,
            source_message_ids=(f"{user}-m{100 + n:06d}",)))
    return records


def generate_context(seed: int, tenant: str, user: str) -> UserContext:
    """Two global cards, the current session's summary and its last ten turns."""
    zh = _zh_user(seed, tenant, user)
    rng = _rng(seed, tenant, user, "context")
    i = 1 if zh else 0
    topic, project, tech, goal = (rng.choice(TOPICS)[i], rng.choice(PROJECTS)[i], rng.choice(TECH)[i],
                                  rng.choice(GOALS)[i])
    at = NOW - timedelta(days=30)
    cards = [
        GlobalCard(card_id="card-profile", tenant_id=tenant, user_id=user, name="profile",
                   profile=("后端开发，关注性能和成本" if zh else "Backend engineer who cares about performance and cost"),
                   long_term_goal=goal, preferred_language="中文" if zh else "English",
                   created_at=at, updated_at=at),
        GlobalCard(card_id="card-style", tenant_id=tenant, user_id=user, name="style",
                   answer_style=("回答简洁，先给结论" if zh else "Be concise; lead with the answer"),
                   preferences=topic, tags=(topic.lower(), "style"), created_at=at, updated_at=at),
    ]
    if zh:
        lines = [("user", f"我们继续讨论{project}吧"), ("assistant", f"好的，上次说到{project}打算用{tech}。"),
                 ("user", "预算方面还有什么要注意的？"), ("assistant", "主要是运维成本和人力投入，我列了一个清单。"),
                 ("user", "好的，另外我周末想去" + topic), ("assistant", "听起来不错，天气预报周六是晴天。"),
                 ("user", "提醒我周一前把设计文档发出去"), ("assistant", "好的，我记下了：周一前发设计文档。"),
                 ("user", "谢谢"), ("assistant", "不客气，还有别的需要吗？")]
        sections = SummarySections(current_topic=(f"{project}的技术选型",), confirmed_facts=(f"{project}采用{tech}",),
                                   todo_items=("周一前发设计文档",), user_constraints=("预算有限",),
                                   open_questions=("上线时间待定",))
    else:
        lines = [("user", f"Let's continue with {project}"), ("assistant", f"Sure, last time we leaned to {tech}."),
                 ("user", "Anything to watch on the budget?"),
                 ("assistant", "Mostly operating cost and people time; here is a short checklist."),
                 ("user", f"Ok. Also I want to do some {topic} this weekend"),
                 ("assistant", "Sounds good, Saturday looks sunny."),
                 ("user", "Remind me to send the design doc by Monday"),
                 ("assistant", "Noted: send the design doc by Monday."), ("user", "thanks"),
                 ("assistant", "You're welcome. Anything else?")]
        sections = SummarySections(current_topic=(f"choosing the stack for {project}",),
                                   confirmed_facts=(f"{project} will use {tech}",),
                                   todo_items=("send the design doc by Monday",),
                                   user_constraints=("tight budget",), open_questions=("launch date",))
    start = NOW - timedelta(minutes=30)
    turns = [RecentTurn(SESSION, f"{user}-t{n:03d}", role, content, start + timedelta(minutes=2 * n), n)  # type: ignore[arg-type]
             for n, (role, content) in enumerate(lines)]
    summary = SummarySnapshotted(
        event_id=f"sum-{user}", occurred_at=start + timedelta(minutes=15), tenant_id=tenant, user_id=user,
        agent_id=AGENT, session_id=SESSION, summary_id=f"summary-{user}-{SESSION}", version=1,
        range_start_message_id=turns[0].message_id, range_end_message_id=turns[5].message_id,
        source_message_count=6, total_message_count=6, source_message_ids=tuple(t.message_id for t in turns[:6]),
        sections=sections)
    return UserContext(cards, summary, turns)


QUESTIONS_EN = ["What do I like to do {qual}?", "Do I like {topic}?", "Recommend something to do this weekend.",
                "Where did I go in {month}?", "What did we decide for {project}?", "What are my goals this year?",
                "Is there any food I can't eat?", "What's the plan for {project}?", "Who else likes {topic}?",
                "Remind me what I told you about {city}.", "Which database did we pick in the end?",
                "When am I free in the evening?", "Can you suggest a gift for my {rel}?",
                "What should I cook for dinner tonight?", "How is {project} going?"]
QUESTIONS_ZH = ["我{qual}喜欢做什么？", "我喜欢{topic}吗？", "这个周末有什么推荐的活动？", "我{month}去了哪里？",
                "{project}最后定了什么方案？", "我今年的目标是什么？", "我有什么忌口吗？", "{project}的计划是什么？",
                "还有谁也喜欢{topic}？", "我之前跟你说过{city}的什么事？", "我们最后选了哪个数据库？",
                "我晚上几点以后有空？", "给我{rel}送什么礼物比较好？", "今晚做什么菜好？", "{project}进展怎么样了？"]


def generate_queries(seed: int, tenant: str, users: list[str], count: int) -> list[tuple[str, str]]:
    """`count` (user, question) pairs over the given users, each in its user's language (15 % switched)."""
    rng = _rng(seed, tenant, "queries", count)
    out = []
    for _ in range(count):
        user = rng.choice(users)
        zh = _zh_user(seed, tenant, user)
        zh = zh if rng.random() > 0.15 else not zh
        i = 1 if zh else 0
        template = rng.choice(QUESTIONS_ZH if zh else QUESTIONS_EN)
        question = template.format(qual=rng.choice(QUALIFIERS)[i], topic=rng.choice(TOPICS)[i],
                                   month=rng.choice(MONTHS)[i], project=rng.choice(PROJECTS)[i],
                                   city=rng.choice(CITIES)[i], rel=rng.choice(RELATIONS)[i])
        out.append((user, question))
    return out


def iter_users(count: int) -> Iterator[str]:
    return (user_id(i) for i in range(count))


def generate_history(records: list[MemoryRecord], user: str, turns_per_memory: int) -> list[RecentTurn]:
    """Past conversation behind the memories: `turns_per_memory` turns per memory, alternating the user
    (saying the memory in the first person) and the assistant (replying about it), 20 memories a session,
    all before the current session. Recall searches them as evidence beside the memories."""
    turns: list[RecentTurn] = []
    start = NOW - timedelta(days=400)
    for k, record in enumerate(records):
        said = record.content.replace("User's", "My").replace("User", "I").replace("用户", "我")
        for j in range(turns_per_memory):
            n = k * turns_per_memory + j
            role = "user" if j % 2 == 0 else "assistant"
            content = said if j == 0 else (f"About that: {said}. Shall I keep it in mind for next time?"
                                           if role == "assistant" else f"Yes, and more on this later ({j}).")
            turns.append(RecentTurn(f"history-{k // 20}", f"{user}-h{n:06d}", role, content,  # type: ignore[arg-type]
                                    start + timedelta(minutes=n), n))
    return turns
