"""Life domains of a text (food, health, family, …). Pure.

A task implies what it needs without naming it: "what can I bake this weekend" needs the diet, "plan a
weekend trip" the family and the budget. Both the question and each memory are given the domains whose
cue words they contain, from one bilingual vocabulary: an English cue matches a word that starts with it
("allerg" → allergy, allergic; "tea$" only the whole word), a Chinese cue matches as a substring. The recall scorer's `domain`
component is the overlap of the two sets.

Which statements are sensitive, and which tasks may see them, is `core.sensitive`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from engram.schemas.memory import SINGLE_VALUED_SLOTS, MemoryType
from engram.core.text_caches import registered

DOMAIN_CUES: dict[str, tuple[str, ...]] = {
    "food": (
        "food", "eat$", "eats$", "eating", "eaten", "ate$", "meal", "lunch", "dinner", "breakfast", "brunch", "snack", "dessert", "cook",
        "recipe", "restaurant", "cafe", "café", "order", "menu", "dish", "cuisine", "bake", "grocer", "diet",
        "vegan", "vegetarian", "allerg", "lactose", "gluten", "celiac", "coeliac", "dairy", "milk", "pork", "beef", "chicken", "fish",
        "seafood", "shellfish", "peanut", "nut$", "nuts$", "egg", "cheese", "meat", "spicy", "sugar", "halal", "kosher",
        "fruit", "vegetable", "coffee", "tea$", "drink", "wine", "beer", "alcohol", "cilantro", "coriander",
        "takeout", "takeaway", "picnic", "bbq", "barbecue", "party", "potluck", "catering", "pizza", "sushi",
        "吃", "喝", "饭", "餐", "菜", "食", "饮", "午饭", "晚饭", "早饭", "早餐", "午餐", "晚餐", "夜宵", "零食",
        "甜点", "甜品", "水果", "蔬菜", "过敏", "素", "忌口", "不吃", "乳糖", "乳糜泻", "麸质", "牛奶", "奶", "猪肉", "牛肉", "海鲜",
        "花生", "坚果", "鸡蛋", "辣", "糖", "清真", "咖啡", "茶", "酒", "香菜", "外卖", "点单", "点菜", "烹饪", "做饭",
        "菜谱", "食谱", "餐厅", "饭店", "聚餐", "聚", "烧烤", "蛋糕", "芒果",
    ),
    "health": (
        "health", "doctor", "hospital", "medic", "pill", "injur", "hurt", "pain", "knee", "back$", "ankle",
        "shoulder", "wrist", "hip$", "surgery", "sick", "ill$", "illness", "symptom", "diabet", "asthma", "blood", "pregnan",
        "workout", "exercise", "gym", "fitness", "train", "run$", "runs$", "running", "runner", "jog", "yoga", "hike", "hiking", "swim", "sport",
        "marathon", "triathlon", "race day", "race$", "races$", "cycling",
        "stretch", "physio", "allerg", "sleep", "weight", "cancer", "heart", "migraine", "disab", "wheelchair",
        "健康", "医生", "医院", "药", "受伤", "伤", "疼", "痛", "膝盖", "腰", "脚踝", "肩", "手术", "生病", "病",
        "症状", "糖尿病", "哮喘", "血压", "怀孕", "锻炼", "运动", "健身", "训练", "跑步", "瑜伽", "爬山", "徒步",
        "游泳", "体检", "睡眠", "失眠", "减肥", "体重", "过敏", "马拉松", "半马", "全马", "越野跑", "骑行",
    ),
    "mental": (
        "depress", "anxiety", "anxious", "therap", "counsel", "mental", "stress", "burnout", "panic", "adhd",
        "bipolar", "mood", "ptsd", "psychiatr", "wellbeing", "well-being", "lonely", "grief", "cope$", "coping",
        "motivat", "focus", "procrastinat", "overwhelm", "can't sleep", "sober", "drink", "get going",
        "抑郁", "焦虑", "心理", "咨询师", "压力", "情绪", "失眠", "惊恐", "双相", "孤独", "崩溃", "胡思乱想",
        "睡不着", "心慌", "没动力", "拖延", "专注", "喝酒",
    ),
    "religion": (
        "religio", "church", "mosque", "temple", "synagogue", "pray", "faith", "muslim", "christian",
        "catholic", "jewish", "hindu", "buddhis", "ramadan", "sabbath", "bible", "quran", "worship", "lent$",
        "halal", "kosher", "shabbat",
        "宗教", "教会", "教堂", "清真", "寺庙", "祈祷", "祷告", "信仰", "穆斯林", "基督", "天主教", "佛教", "斋月", "礼拜", "斋戒",
        "回族",
    ),
    "sexuality": (
        "gay", "lesbian", "bisexual", "queer", "transgender", "sexual", "coming out", "lgbt",
        "同性恋", "双性恋", "性取向", "跨性别", "出柜",
    ),
    "money": (
        "money", "budget", "price", "cost", "cheap", "expensive", "afford", "spend", "buy", "purchase", "save",
        "saving", "salary", "income", "pay", "debt", "loan", "owe", "mortgage", "credit", "rent", "invest",
        "bank", "tax$", "taxes", "$", "€", "£", "¥", "dollar", "euro", "gift", "present$", "presents$", "bankrupt",
        "钱", "预算", "价格", "多少钱", "便宜", "贵", "花费", "买", "购", "省钱", "存钱", "工资", "收入", "付",
        "债", "贷款", "欠", "房贷", "信用卡", "房租", "租", "投资", "理财", "元", "礼物", "月薪", "入手", "降价", "划算", "值不值", "剁手",
    ),
    "family": (
        "family", "wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fianc", "kid$", "kids$", "child",
        "children", "son$", "sons$", "daughter", "baby", "toddler", "mom", "mother", "dad", "father", "parent", "brother",
        "sister", "sibling", "grandm", "grandp", "grandparent", "aunt", "uncle", "cousin", "in-law", "niece",
        "nephew", "twins", "birthday", "anniversary", "gift", "present$", "presents$", "wedding",
        "家人", "家里", "家庭", "老婆", "妻子", "太太", "老公", "丈夫", "爱人", "对象", "男朋友", "女朋友", "孩子",
        "儿子", "女儿", "宝宝", "小孩", "妈妈", "母亲", "爸爸", "父亲", "父母", "哥哥", "姐姐", "弟弟", "妹妹",
        "爷爷", "奶奶", "外公", "外婆", "姥姥", "姥爷", "生日", "纪念日", "礼物", "婚礼", "全家", "岁", "娃" "我妈", "我爸", "她妈", "他妈", "他爸", "她爸",
    ),
    "pets": (
        "pet$", "pets$", "dog", "puppy", "cat$", "cats$", "kitten", "rabbit", "hamster", "parrot", "bird", "fish tank", "vet$",
        "retriever", "labrador", "poodle", "terrier", "beagle", "corgi", "husky", "spaniel", "greyhound", "walkies",
        "宠物", "狗", "猫", "兔子", "仓鼠", "鹦鹉", "兽医", "遛狗", "柯基",
    ),
    "home": (
        "home", "house", "apartment", "lease", "new place", "live", "living", "moved", "move", "moving",
        "relocat", "city",
        "town", "neighbo",
        "nearby", "near me", "local", "around here", "our part of", "our area", "my area", "where we live",
        "where i live", "weather", "climate", "commute", "address", "district",
        "家", "住在", "住的", "住哪", "住处", "住所", "居住", "入住", "租住", "我住", "搬", "城市", "附近", "周边", "本地", "当地", "天气", "气候", "通勤", "小区", "区",
        # where to go and what to do around: an outing needs the city the user lives in
        "outing", "day trip", "getaway", "spots", "places to", "things to do", "walks$", "brunch",
        "restaurant", "saturday", "sunday", "weekend", "去哪", "哪儿玩", "哪里玩", "周末", "周六", "周日",
        "餐厅", "饭店", "出门",
        # the weather and climate of where the user lives
        "winter", "summer", "rain", "snow", "humid", "冬天", "夏天", "下雨", "下雪", "潮湿", "热死",
    ),
    "travel": (
        "travel", "trip", "vacation", "holiday", "flight", "fly", "hotel", "visit", "abroad", "tour", "weekend",
        "getaway", "beach", "road trip", "honeymoon", "passport", "visa", "itinerary", "destination",
        "旅行", "旅游", "出游", "度假", "假期", "机票", "航班", "酒店", "出差", "签证", "周末", "行程", "景点",
        "去玩", "玩一趟", "改去", "飞去", "出门", "pack$", "packing",
    ),
    "work": (
        "work$", "works$", "working", "worked", "workplace", "job", "office", "boss", "manager", "colleague", "coworker", "team", "client", "meeting",
        "project", "deadline", "career", "company", "employer", "career", "resume", "interview", "promotion",
        "email", "report", "presentation", "spec$", "specs$", "code", "program", "licen", "shift", "engineer", "teacher",
        "nurse", "accountant", "developer", "designer", "lawyer", "startup", "business",
        "工作", "上班", "公司", "老板", "领导", "经理", "同事", "团队", "客户", "会议", "开会", "项目", "截止",
        "职业", "简历", "面试", "升职", "辞职", "跳槽", "换工作", "兼职", "邮件", "报告", "汇报", "演讲", "代码", "编程", "执照", "证书", "值班",
        "工程师", "老师", "护士", "会计", "医生", "律师", "设计师", "创业", "单位",
    ),
    "schedule": (
        "schedule", "calendar", "week", "weekday", "weekend", "morning", "afternoon", "evening", "tonight",
        "tomorrow", "today", "time", "o'clock", "am$", "pm$", "plan", "routine", "available", "free time", "busy",
        "call$", "calls$", "appointment", "meeting", "timezone", "time zone", "monday", "tuesday", "wednesday", "thursday",
        "friday", "saturday", "sunday", "shift", "early", "late",
        "日程", "安排", "计划", "时间", "几点", "点钟", "早上", "上午", "中午", "下午", "晚上", "今晚", "明天", "今天",
        "周一", "周二", "周三", "周四", "周五", "周六", "周日", "周末", "每周", "每天", "工作日", "有空", "忙",
        "约", "预约", "时区", "值班", "早起",
    ),
    "learning": (
        "learn", "study", "course", "class", "lesson", "school", "university", "college", "exam", "degree",
        "language", "practice", "tutor", "homework", "book", "read$", "reading", "test$", "certificat",
        "ielts", "toefl", "gre$", "gmat", "jlpt", "hsk", "japanese", "spanish", "french", "german", "korean",
        "italian", "podcast", "thesis", "phd",
        "学习", "学", "课程", "上课", "学校", "大学", "考试", "学位", "语言", "练习", "家教", "作业", "书", "读",
        "备考", "雅思", "托福", "考研", "高考", "日语", "韩语", "法语", "德语", "西班牙语", "播客", "论文",
    ),
    "communication": (
        "answer", "repl", "respond", "explain", "tell me", "write", "summar", "short", "brief", "concise",
        "detail", "bullet", "format", "english", "chinese", "mandarin", "language", "tone", "formal", "casual",
        "recommend", "suggest", "help", "idea", "advice", "plan",
        "回答", "回复", "解释", "告诉", "写", "总结", "简短", "简洁", "详细", "要点", "格式", "英文", "中文",
        "英语", "汉语", "语气", "正式", "推荐", "建议", "帮我", "帮忙", "想法", "主意", "计划", "安排",
    ),
}
"""Cue words of each domain. Broad on purpose: a false domain only lets a memory compete on its score."""

def cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    latin = sorted((c for c in cues if c.isascii()), key=len, reverse=True)
    # "cue$": a whole word ("tea$" is not "team"); any other English cue starts a word
    other = sorted((c for c in cues if not c.isascii()), key=len, reverse=True)
    parts = []
    if latin:
        parts.append(r"(?<![a-z0-9])(?:" + "|".join(re.escape(c[:-1]) + r"(?![a-z])" if len(c) > 1 and c.endswith("$") else re.escape(c)
                                               for c in latin) + ")")
    if other:
        parts.append("(?:" + "|".join(re.escape(c) for c in other) + ")")
    return re.compile("|".join(parts))


_DOMAIN_PATTERNS = {name: cue_pattern(cues) for name, cues in DOMAIN_CUES.items()}
GENERIC_DOMAINS = frozenset({"communication", "schedule"})
"""Domains almost every request touches ("help me plan…"): alone they are half a domain match."""


NOT_PLACES = ("January|February|March|April|May|June|July|August|September|October|November|December|Monday|"
               "Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|English|Chinese|Mandarin|Cantonese|Spanish|French|"
               "German|Japanese|Korean|Italian|Portuguese|Python|Java|Excel|Q[1-4]|I|The|A|An|My|Our")
HOME_PLACE = re.compile(
    r"(?<![A-Za-z])in the (?!(?:" + NOT_PLACES + r")\b)[A-Z][a-z]+ (?:flat|apartment|house|suburbs?)\b|"
    r"\b(?:new|my|our) flat\b|"
    r"住在|base在|定居|在\S{1,8}(?:住|生活|读研|读博|读书|念书|长大|定居)|\S{2,6}(?:这边|那边)(?:的|住|生活)|"
    r"(?:搬|调|来|到)(?:到|去)\S{2,8}")
"""Where the user lives, said as such: "in the Glasgow flat", "住在…", "在…生活", "搬到…"."""
ARRIVAL = re.compile(
    r"\b(?:arrived|landed|settled|settling) in\b|\b(?:moved|relocated|relocating|moving) (?:back )?(?:to|into)\b|"
    r"\brelocat(?:ed|ing)\b|\b(?:closed on|bought|got the keys to) (?:a|the|our|my) (?:new )?(?:house|home|flat|apartment|condo)\b|"
    r"刚到|刚来|初来|初到|搬到|搬来|搬去|搬回|落户|来\S{2,4}(?:工作|上班|读书|上学|生活|定居|发展)了", re.IGNORECASE)
"""An arrival or a move of home ("just arrived in …", "relocated", "closed on a house", "刚到…", "搬来…",
"来…工作了"): a statement of where the user lives now."""
WHEREABOUTS = re.compile(r"(?<![A-Za-z])(?:in|based in|out of|from) (?!(?:" + NOT_PLACES + r")\b)[A-Z][a-z]+")
"""Where something is: "in <Place>" (a capitalised name that is not a month, a day, a language or a
word that opens a sentence). Such a statement is about home and location even when it names no home word
("I'm in Calgary", "a bakery in Gracia, Barcelona"), though not necessarily the user's ("Markets rallied
in Asia")."""

AGE_OF_NAMED = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?: is| just| turned| turns| will be)+ (?:\d{1,2}|one|two|three|four|five|six|"
                          r"seven|eight|nine|ten|eleven|twelve)\b(?![:.]?\d| ?(?:am|pm|%|percent|dollars|hours|minutes|times|x\b))")
"""Someone named with an age ("Rufus is 11", "Clara just turned 5"): a person of the user's family."""


@registered
@lru_cache(maxsize=65536)
def cue_domains(text: str) -> frozenset[str]:
    """The domains whose cue words occur in `text` (no where-statement: "Markets rallied in Asia" is news)."""
    low = text.lower()
    return frozenset(name for name, pattern in _DOMAIN_PATTERNS.items() if pattern.search(low))


ZH_TRIP = re.compile(r"(?:去|到)[\u4e00-\u9fff]{1,4}?(?:玩|旅游|旅行|度假|自驾)|"
                     r"(?:玩|待|住|逛)(?:一|两|三|四|五|六|七|八|九|十|几|半|\d+)(?:个)?(?:周|天|晚|星期|礼拜)")
"""A trip said by its destination and purpose or its length, with no word of travel ("去大理玩三天", "到青岛住两晚")."""


@registered
@lru_cache(maxsize=65536)
def stated_domains(text: str) -> frozenset[str]:
    """The domains `text` states itself in: its cue words, "home" for a home named as such (`HOME_PLACE`),
    "travel" for a trip said by its destination or length (`ZH_TRIP`), "family" for someone named with an
    age (`AGE_OF_NAMED`)."""
    found = cue_domains(text)
    if "travel" not in found and ZH_TRIP.search(text):
        found |= {"travel"}
    if "home" not in found and (HOME_PLACE.search(text) or ARRIVAL.search(text)):
        found |= {"home"}
    return found | {"family"} if "family" not in found and AGE_OF_NAMED.search(text) else found


ZH_WHEREABOUTS = re.compile(
    r"在(?!家|公司|单位|学校|网上|线上|这|那|外面|路上|车上|床上|店里|医院|附近|楼下|楼上|一家|一个|准备|考虑|想|学|做|看)"
    r"[\u4e00-\u9fff]{2,3}?(?:开(?!会|车|心|始|玩笑)|做(?!饭|作业)|跑|送|当|读|念|教|打工|工作|上班|创业|摆摊|实习|留学|带娃)")
"""Where the user is, said by what they do there: "在重庆开火锅店", "在西安读考古的研究生", "在郑州送快递" (not
"在家做饭", "在公司上班", "在考虑…": no place)."""


@registered
@lru_cache(maxsize=65536)
def domains_of(text: str) -> frozenset[str]:
    """The domains of `text` (`stated_domains`), with "home" also for any statement of where (`WHEREABOUTS`,
    `ZH_WHEREABOUTS`)."""
    found = stated_domains(text)
    if "home" in found:
        return found
    return found | {"home"} if WHEREABOUTS.search(text) or ZH_WHEREABOUTS.search(text) else found


IMPLIED: dict[str, frozenset[str]] = {"travel": frozenset({"health"})}
"""What a task in one domain needs from another, for ranking: a trip or an outing needs the body's limits (a
bad knee, a pregnancy). (Whether a sensitive fact may be shown at all is `core.sensitive.REACH`.)"""


def implied(question: frozenset[str]) -> frozenset[str]:
    """The question's domains and those they imply (`IMPLIED`)."""
    return question.union(*(IMPLIED.get(d, frozenset()) for d in question))


def domain_overlap(question: frozenset[str], memory: frozenset[str]) -> float:
    """1 when the memory is in a specific domain the question implies, else 0 (generic domains alone
    count half: nearly every request is a plan or asks for an answer)."""
    shared = implied(question) & memory
    if not shared:
        return 0.0
    return 1.0 if shared - GENERIC_DOMAINS else 0.5


PROFILE_TYPES = frozenset({MemoryType.USER_PROFILE, MemoryType.USER_CONSTRAINT, MemoryType.USER_FACT,
                           MemoryType.USER_PREFERENCE})
MENTION_PREFIX = "User mentioned: "
"""The extractor's note of something said in passing (`streams.rules.mention`)."""


RECURRING = re.compile(r"\b(?:every|each) (?:mon|tues|wednes|thurs|fri|satur|sun|week|morning|evening|night)|"
                       r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\bweekends off\b|\bweekdays\b|"
                       r"每周|每天|每晚|每个?月|工作日|周[一二三四五六日末](?:都|休息|固定)|天天", re.IGNORECASE)
"""A schedule that recurs ("Mondays and Wednesdays 7 to 8:30", "每周四过去", "周一休息")."""

DECIDED = re.compile(r"\b(?:decided|have started|started|switched to|from now on)\b|决定|已经开始|开始吃|改吃|不再", re.IGNORECASE)
"""A goal that is a decision already taken ("decided to start learning to swim", "决定开始学游泳"), not a wish."""

PROFILE_DOMAINS = frozenset({"food", "health", "mental", "religion", "sexuality", "money", "family", "pets", "home", "work",
                             "communication"})
"""The domains of standing facts: what the user eats and cannot, their health, the people and pets around
them, where they live, their work, money, how they want to be answered. (Schedules, trips and studies change
by the week: they stay ordinary memories, found when a question reaches them.)"""


def profile_layer(memory_type: MemoryType, slot: str, content: str, sensitive: Iterable[str] = ()) -> bool:
    """Whether a user memory belongs to the standing profile (L3): who the user is and their standing
    constraints always; a fact or preference when it is about a standing domain (`PROFILE_DOMAINS`), is
    marked sensitive at extraction (a condition, a treatment, a recovery: `core.sensitive`, whose cue words
    are not all domain cues: "在做试管(IVF)") or a single-valued slot of theirs (where they live, their
    schedule, reply language); a goal only when it is a decision already taken about a standing domain.
    Never a goal of the moment nor a note of something merely mentioned (not a fact about the user)."""
    if memory_type in (MemoryType.USER_PROFILE, MemoryType.USER_CONSTRAINT):
        return True
    if memory_type == MemoryType.USER_GOAL:  # a decision already taken changes who the user is now
        return bool(DECIDED.search(content)) and bool(domains_of(content) & PROFILE_DOMAINS)
    if RECURRING.search(content) and "schedule" in domains_of(content) and memory_type in PROFILE_TYPES:
        return True  # a standing schedule, even one said in passing, is what every plan must respect
    if memory_type not in PROFILE_TYPES or content.startswith(MENTION_PREFIX):
        return False
    return slot in SINGLE_VALUED_SLOTS or bool(domains_of(content) & PROFILE_DOMAINS) or bool(tuple(sensitive))
