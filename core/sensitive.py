"""Sensitive facts (health and mental-health conditions, addiction recovery, religion, sexuality, debts):
which statements state one, and which tasks may be shown one. Pure.

Two sources say a memory is sensitive:

- its own words (`sensitive_domains`: cue words of conditions, medications, therapy, recovery, religious
  practice and the diets and peoples tied to a faith, sexuality, debts), and
- the statement it was drawn from (`statement_sensitivity`, applied at extraction and carried on the
  memory as its `sensitive` mark): a note keeps only part of what was said ("keeps a strict bedtime at 8"
  out of "my son has epilepsy, so we keep a strict bedtime at 8"), and inherits the sensitivity of the
  whole sentence it came from.

The gate (`may_show`) opens only for the fact's sensitive domain itself or a domain of its short, named
reach (`REACH`): a diabetic's dinner, a bad knee's hike, a halal diet's restaurant. What else the
statement happens to be about (a schedule, a family) opens nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .domains import AGE_OF_NAMED, domains_of
from .text import VERBATIM_FRAME, terms
from .text_caches import registered

SENSITIVE_CUES: dict[str, tuple[str, ...]] = {
    "health": (
        "diabet", "cancer", "hiv", "asthma", "epilep", "chronic$", "chronically", "disorder", "diagnosed with",
        "diagnosed as", "was diagnosed", "been diagnosed", "got diagnosed", "diagnosis$", "injur", "hurt my",
        "surgery", "pregnan", "miscarr", "baby is due", "due date", "ivf", "disab", "knee", "back pain", "blood pressure",
        "heart condition", "first trimester", "second trimester", "third trimester", "expecting a baby", "fertility", "chemo", "dialysis", "arthritis", "crohn",
        "colitis", "multiple sclerosis", "parkinson", "dementia", "alzheimer", "seizures$", "had a seizure",
        "have a seizure", "having a seizure", "thyroid",
        # medications of long-term conditions, by class and common name
        "metformin", "insulin", "statin$", "statins$", "atorvastatin", "lisinopril", "amlodipine", "levothyroxine", "warfarin",
        "blood thinner", "inhaler", "steroid", "prednisone", "methotrexate", "immunosuppress",
        # the specialists who treat a long-term condition ("my endocrinologist says…")
        "endocrinolog", "cardiolog", "oncolog", "neurolog", "rheumatolog", "gastroenterolog", "nephrolog",
        "hematolog", "haematolog", "pulmonolog", "urolog", "obstetrician", "gynecolog", "gynaecolog",
        "内分泌科", "心内科", "肿瘤科", "神经内科", "风湿科", "消化内科", "肾内科", "血液科", "妇产科", "泌尿科", "呼吸科",
        "糖尿病", "癌", "艾滋", "哮喘", "癫痫", "确诊", "受伤", "手术", "宝宝出生", "预产期",
        "流产", "残疾", "膝盖", "腰伤", "腰疼", "高血压", "心脏病", "关节炎", "椎间盘", "腰椎", "痛风", "甲亢", "甲减", "中风",
        "化疗", "透析", "产检", "二甲双胍", "胰岛素", "降压药", "降糖药", "他汀",
    ),
    "mental": (
        "depress", "anxiety", "anxious", "therap", "counsel", "panic", "adhd", "bipolar", "ptsd", "psychiatr",
        "psychologist", "antidepress", "eating disorder", "anorexi", "bulimi", "suicid", "self-harm", "mental health",
        "burnout", "ocd$", "autis", "insomnia",
        # psychiatric medications, by class and common name
        "ssri", "snri", "sertraline", "zoloft", "fluoxetine", "prozac", "escitalopram", "lexapro", "citalopram",
        "paroxetine", "venlafaxine", "effexor", "bupropion", "wellbutrin", "mirtazapine", "quetiapine",
        "seroquel", "olanzapine", "aripiprazole", "abilify", "lamotrigine", "benzodiazepine", "xanax", "alprazolam",
        "valium", "diazepam", "klonopin", "clonazepam", "adderall", "ritalin", "concerta", "methylphenidate",
        "vyvanse", "lisdexamfetamine", "strattera", "atomoxetine", "sleeping pill",
        "抑郁", "焦虑", "心理咨询", "心理医生", "心理治疗", "看心理", "咨询师", "惊恐", "双相", "多动症", "强迫症", "自闭症",
        "自杀", "自残", "精神科", "精神病", "精神疾病", "精神障碍", "精神分裂", "厌食", "暴食", "失眠症",
        "舍曲林", "氟西汀", "百忧解", "帕罗西汀", "西酞普兰", "文拉法辛", "安非他酮", "米氮平", "碳酸锂", "喹硫平", "奥氮平",
        "阿立哌唑", "拉莫三嗪", "阿普唑仑", "劳拉西泮", "氯硝西泮", "哌甲酯", "专注达", "利他林", "择思达", "托莫西汀",
        "抗抑郁", "安眠药", "安定片",
    ),
    "recovery": (
        "sober", "sobriety", "in recovery", "12-step", "twelve-step", "aa meeting", "na meeting",
        "alcoholics anonymous", "narcotics anonymous", "alcoholi", "rehab", "addict", "relapse", "gambling problem",
        "戒酒", "戒毒", "戒赌", "成瘾", "复吸", "酒瘾", "赌瘾", "匿名戒酒",
    ),
    "religion": (
        "religio", "church$", "churches$", "churchgo", "mosque", "synagogue", "muslim", "christian", "catholic", "jewish", "hindu",
        "buddhis", "atheis", "ramadan", "pray", "halal", "kosher", "shabbat", "sabbath", "kiddush", "passover",
        "yom kippur", "eid$", "iftar", "rabbi", "imam", "pastor", "priest", "bible", "quran", "koran", "torah",
        "hijab", "mormon", "sikh", "gurdwara", "jain", "jainism", "worship",
        "宗教", "教会", "教堂", "清真", "穆斯林", "基督", "天主教", "佛教", "信佛", "信教", "信主", "受洗", "无神论", "斋月",
        "斋戒", "开斋", "吃斋", "封斋", "做礼拜", "主日", "祈祷", "祷告", "古尔邦", "回族", "维吾尔", "维族",
        "哈萨克族", "东乡族", "撒拉族", "犹太",
    ),
    "sexuality": (
        "gay", "lesbian", "bisexual", "queer", "transgender", "coming out", "came out", "lgbt", "same-sex",
        "pansexual", "asexual", "non-binary", "nonbinary",
        "同性恋", "双性恋", "性取向", "跨性别", "出柜", "同性伴侣",
    ),
    "money": (
        "debt", "owe", "owing$", "loan", "bankrupt", "overdraft", "credit card bill", "in the red", "to collections",
        "in collections", "collection agency", "collections agency", "debt collector", "maxed out",
        "payday loan", "arrears", "behind on payments", "behind on rent", "repayment",
        "负债", "欠债", "欠款", "欠钱", "贷款", "破产", "网贷", "还债", "还款", "花呗", "借呗", "白条", "催收",
        "信用卡账单", "套现",
    ),
}
"""Cue words of a sensitive fact, by the domain a task must touch for it to be shown: conditions and the
medicines taken for them, therapy and recovery, religious practice (prayer, fasting, a faith's diet) and the
peoples whose faith their name states, sexuality, debts."""

REACH: dict[str, frozenset[str]] = {
    "health": frozenset({"food", "travel"}),
    "religion": frozenset({"food"}),
    "mental": frozenset(),
    "recovery": frozenset({"mental", "food"}),
    "sexuality": frozenset(),
    "money": frozenset(),
}
"""Besides its own domain, the task domains a sensitive fact may be shown to, each for one reason:
health to food (a diabetic's dinner, a pregnancy's menu) and to travel (a bad knee on a hike, a condition on
a trip; the user's own: `gate_domains` takes travel out of a task written to others or organised for them;
sport and exercise are health's own cues); religion to food (halal, kosher, a fast); recovery from
an addiction to mental health (cravings, coping) and to food (drinks, a party, a dinner out are where it
matters); mental health, sexuality and debts to nothing but themselves (a therapy is nobody's dinner plan,
and a standing meeting of any of them is nobody's plan of the week)."""

GATE_GENERIC = frozenset({"communication"})
"""What no sensitive fact is shown for: every request asks for an answer."""

GUARDED_CUES: dict[str, tuple[str, ...]] = {
    "health": (r"慢性(?!子)", r"被?诊断(?:出|为|结果|书|证明)|被诊断", r"伤了(?!和气|感情|面子|自尊|心)", r"孕(?!育)"),
    "religion": (r"(?:佛|寺|庙|菩萨|佛堂|经书)[^。！？]{0,8}念经|念经[^。！？]{0,8}(?:佛|寺|庙|菩萨)",),
    "money": (r"欠了(?![^，。！？,]{0,6}(?:人情|情|觉))",
              r"(?:还款|账单|信用卡|贷款|房贷|车贷|网贷|花呗|借呗|白条)[^。！？]{0,10}逾期|逾期[^。！？]{0,4}(?:还款|未还|账单|罚息)"),
}
"""Chinese cues that are also everyday words, as patterns with the context that makes them the fact: 慢性
not 慢性子 (a slow temper), 诊断 of a finding not 诊断一下这个bug, 伤了 not 伤了和气, 孕 not 孕育 (to breed
an idea), 欠了 not 欠了…人情 (a favour owed), 逾期 of a bill or a loan not of a project, 念经 at a temple not
a nag's "念经"."""

SHORT_STEM = 4
"""A Latin cue this short or shorter is a whole word with its inflections ("owe", "owes", "owed"; not
"Owen"; "hiv" not "hive"): a short stem starts too many other words."""
_INFLECTION = r"(?:s|ed|d|ing|ers?|ors?)?"
NAME_CUES = frozenset({"christian", "jain"})
"""Cue words that are also people's names: capitalised outside a phrase of faith ("a devout Christian",
"Jain food", "I'm Christian"), they name someone ("my teammate Christian", "Dr. Jain")."""
_FAITH_FRAME = re.compile(
    r"(?:\b(?:a|an|am|i'm|im|is|are|was|were|as|devout|practi[cs]ing|born-again|being|raised|up|became|converted "
    r"to)\s+)$")
_FAITH_AFTER = re.compile(
    r"(?:s|ism|ity)?\b\s*(?:$|[.,;!?]|(?:faith|church|school|temple|values|community|prayers?|holidays?|festivals?|"
    r"diet|food|vegetarian|fast(?:ing)?|traditions?|beliefs?|family|upbringing|household|rules|monks?|nuns?)\b)")
_NAME_BEFORE = re.compile(r"(?:\b(?:Mr|Ms|Mrs|Dr|Prof|Miss|Mx)\.?\s+|"
                          r"(?<![.!?:]\s)(?<!^)\b(?!(?:Orthodox|Evangelical|Protestant|Devout|User)\b)[A-Z][a-z]+\s+)$")
"""A title or a given name before a capitalised cue ("Dr. Jain", "Priya Jain"): a surname."""
_FREE_OF = re.compile(r"[a-z]*-?free\b")
"""A cue followed by "-free" says it is absent ("steroid-free beef")."""


def _latin_cue(cue: str) -> str:
    if cue.endswith("$"):
        return re.escape(cue[:-1]) + r"(?![a-z])"
    if len(cue) <= SHORT_STEM and cue.isalpha():
        return re.escape(cue) + _INFLECTION + r"(?![a-z])"
    return re.escape(cue)


def sensitive_pattern(cues: tuple[str, ...], guarded: tuple[str, ...] = ()) -> re.Pattern[str]:
    """One domain's cues as one pattern (on lower-cased text): a Latin cue starts a word, "cue$" is a whole
    word, a short stem (`SHORT_STEM`) a whole word with its inflections; other cues anywhere, with the
    `GUARDED_CUES` patterns as they are."""
    latin = sorted((c for c in cues if c.isascii()), key=len, reverse=True)
    other = sorted((c for c in cues if not c.isascii()), key=len, reverse=True)
    parts = []
    if latin:
        parts.append(r"(?<![a-z0-9])(?:" + "|".join(_latin_cue(c) for c in latin) + ")")
    if other or guarded:
        parts.append("(?:" + "|".join([*(re.escape(c) for c in other), *guarded]) + ")")
    return re.compile("|".join(parts))


_SENSITIVE_PATTERNS = {name: sensitive_pattern(cues, GUARDED_CUES.get(name, ()))
                       for name, cues in SENSITIVE_CUES.items()}
_STATEMENT_END = re.compile(r"(?<=[。！？!?\n])|(?<=[.;；])\s+|(?<=[，,])\s*(?=我|I(?:['’](?:m|ve|d|ll))?\b|[Ww]e\b)")
"""Where one statement of a turn ends: a sentence's end mark, or a comma before a clause that opens with its
own subject ("我有焦虑症，我爱吃川菜"); any other comma joins clauses of one statement ("…, so we keep …")."""
_NOTE_FRAME = re.compile(r"^\s*(?:user(?:['’]s)?(?:\s+said:?)?|用户(?:说[:：]?)?)\s*", re.IGNORECASE)
"""How an extractor opens a note ("User …", "User said: …", "用户…"): no word of what was said."""
_PRIVATE = re.compile(
    r"\b(?:something private|(?:just )?between (?:you and me|us)|keep (?:this|it) (?:private|between us)|"
    r"(?:don'?t|do not|never) tell (?:anyone|anybody)|in confidence|off the record)\b|"
    r"私事|私下(?:说|跟你说)|别告诉别人|不要告诉别人|别跟别人说|只跟你说|只能跟你说|悄悄(?:跟你)?说",
    re.IGNORECASE)
"""The user saying a turn is private ("between you and me", "keep this private", "私事", "别告诉别人"):
what follows is one confidence, every clause of it as sensitive as the whole."""
SHARE_NEEDED = 3
"""A statement is a note's source when it holds at least one in this many of the note's words."""


@registered
@lru_cache(maxsize=65536)
def sensitive_domains(text: str) -> frozenset[str]:
    """The sensitive domains `text` states a fact of (empty: not sensitive)."""
    low = text.lower()
    return frozenset(name for name, pattern in _SENSITIVE_PATTERNS.items()
                     if any(_states(m, text, low) for m in pattern.finditer(low)))


def _states(match: re.Match[str], text: str, low: str) -> bool:
    """Whether a cue's match states the fact: not "<cue>-free", and a cue that is also a name
    (`NAME_CUES`) written lower-case or in a phrase of faith."""
    if _FREE_OF.match(low, match.end()):
        return False
    word = match.group(0)
    if word not in NAME_CUES or text[match.start()].islower():
        return True
    if _NAME_BEFORE.search(text, 0, match.start()):
        return False
    return bool(_FAITH_FRAME.search(low, 0, match.start()) or _FAITH_AFTER.match(low, match.end()))


def statements(text: str) -> list[str]:
    """The statements (sentences) of a turn, in order."""
    return [s.strip() for s in _STATEMENT_END.split(text) if s.strip()]


@registered
@lru_cache(maxsize=65536)
def statement_sensitivity(source: str, note: str) -> frozenset[str]:
    """The sensitive domains of a note drawn from `source` (a turn): its own, and those of the statements
    of `source` it was drawn from (the ones that share the most words with it). When no statement holds
    enough of the note's words (`SHARE_NEEDED`), the extractor reworded it ("goes to sleep before 10pm" of
    "bed by ten") and it inherits those of the whole turn: what it came from cannot be told apart. So does a
    note of a turn the user calls private (`_PRIVATE`): "between you and me: I have <condition>, I take <a
    medicine by a name no cue knows>" is one confidence."""
    found = sensitive_domains(note)
    if _PRIVATE.search(source):
        return found | sensitive_domains(source)
    words = set(terms(_NOTE_FRAME.sub("", note)))
    scored = [(len(words.intersection(terms(s))), s) for s in statements(source)]
    best = max((n for n, _ in scored), default=0)
    if best == 0 or best * SHARE_NEEDED < len(words):
        return found | sensitive_domains(source)
    return found.union(*(sensitive_domains(s) for n, s in scored if n == best))


def reached(question: frozenset[str], sensitive: Iterable[str]) -> bool:
    """Whether a task of domains `question` reaches a fact of the `sensitive` domains: one of them is the
    task's own or in the task's `REACH` of it."""
    task = question - GATE_GENERIC
    return any(domain in task or REACH.get(domain, frozenset()) & task for domain in sensitive)


_FOR_OTHERS = re.compile(
    r"\b(?:invit\w*|e-?mails?|letters?|messages?|announcements?|newsletters?|memos?|notices?|posts?|speech|toast)\b|"
    r"\b(?:team|staff|colleagues|co-?workers|employees|guests|attendees|students|clients?|customers|everyone|"
    r"offsite|off-site|retreat)\b|邀请|邮件|通知|公告|写信|一封信|致辞|团建|团队|同事|员工|客人|客户|大家|全员|全体",
    re.IGNORECASE)
"""A task written to others (an invitation, an email, a notice) or about an event for a group (a team
offsite, guests, colleagues)."""
_OWN_TRIP = re.compile(
    r"\b(?:my|I'm|I am|I'll|I will|I'd|I)\b[^.?!,;]{0,25}?\b(?:trip|flight|fly|flying|hike|hiking|travel\w*|vacation|"
    r"holiday|journey|stay)\b|\bfor me\b|一个人|我(?:要|想|的|自己)?(?:去|出发|旅行|行程|飞|出门)",
    re.IGNORECASE)
"""The user's own trip: "my trip", "I'm flying", "一个人的旅行", "我去…"."""


_WRITING = re.compile(
    r"\b(?:cover letter|linkedin|bio|résumé|resume|cv|invoice|release notes?|press release|proposal|pitch|"
    r"e-?mails?|letters?|messages?|posts?|announcements?|memos?|notices?|newsletters?|tweets?|captions?|blurbs?|"
    r"intros?|introductions?|website (?:copy|text|page)|about (?:me|us) (?:page|section)|speaker profile)\b|"
    r"邮件|写信|一封信|通知|公告|朋友圈|微博|动态|文案|简历|求职信|自我介绍|简介|发票|推文|帖子|致辞",
    re.IGNORECASE)
"""A piece of writing others will read: a cover letter, an email, a post, an invoice, a blurb or an intro about the
user, 朋友圈, 简历, 简介."""
WRITING_FOR_OTHERS = "writing_for_others"
"""The mark `gate_domains` adds to a piece of writing others will read (`_WRITING`) that is not about the
user's family: a cover letter, a client email, a post is no place for the user's family or love life
(`may_show`)."""


_COMPOSING = re.compile(
    r"\b(?:write|writing|wrote|draft\w*|compose|composing|polish\w*|proofread\w*|edit|editing|rewrite|rewriting|"
    r"reword\w*|rephrase|tweak|improve|tailor|update|put together|come up with|help me (?:with|word|phrase)|"
    r"reply|respond|answer|create|make|prepare|need (?:a|an|some)|want (?:a|an|some)|give me (?:a|an|some))\b|"
    r"写|起草|拟(?:一|个|份|封|条)|润色|修改|改(?:一下|改|得)|编辑|回复|回一(?:封|条)|配文|配个|想个|"
    r"发(?:个|一条|一个|一篇|条|篇|到|在)", re.IGNORECASE)
"""Composing a piece of writing: a writing task asks for it ("write", "draft", "polish", "help me with",
写, 润色, 发个朋友圈); a question about a notice read, a post office or a resumed run asks for none."""


def written_for_others(question: str) -> bool:
    """Whether the task composes a piece of writing others will read (`_WRITING`, `_COMPOSING`)."""
    return bool(_WRITING.search(question) and _COMPOSING.search(question))


@registered
@lru_cache(maxsize=65536)
def gate_domains(question: str) -> frozenset[str]:
    """The domains a task opens the sensitive gate for: its own (`domains_of`), without travel when the
    task is written to others or organises an event for them (`_FOR_OTHERS`: an invitation, a team
    offsite) and says nothing of the user's own trip (`_OWN_TRIP`): a condition matters on the user's
    own hike or flight, and is nobody else's business on the trip they organise for others. A piece of
    writing for others not about the user's family gets `WRITING_FOR_OTHERS`."""
    found = domains_of(question)
    if "travel" in found and _FOR_OTHERS.search(question) and not _OWN_TRIP.search(question):
        found = found - {"travel"}
    if "family" not in found and written_for_others(question):
        found = found | {WRITING_FOR_OTHERS}
    return found


_KIN = re.compile(
    r"\b(?:ex-?)?(?:wife|wives|husbands?|spouses?|girlfriends?|boyfriends?|fianc\w*|sons?|daughters?|moms?|mums?|"
    r"mommy|mummy|mothers?|dads?|daddy|fathers?|brothers?|sisters?|siblings?|grandm\w*|grandp\w*|grand(?:son|daughter|kid|child)\w*|"
    r"aunts?|uncles?|cousins?|in-laws?|nieces?|nephews?|twins|stepson|stepdaughter|stepmom|stepdad)\b|"
    r"\b(?:my|our|his|her|their|User['’]s|[A-Z][a-z]+['’]s)\s+(?:\w+\s+)?(?:family|kids?|child|children|baby|babies|"
    r"toddlers?|parents?|partner|birthday|anniversary|wedding)\b|"
    r"\b(?:has|have|had|with)\s+(?:a|an|two|three|four|five|\d+|twin|young|small|little|grown)?\s*(?:\w+\s+)?"
    r"(?:kids|children|baby|babies|toddlers?)\b|"
    r"老婆|妻子|太太|老公|丈夫|爱人|对象|男朋友|女朋友|前任|前夫|前妻|孩子|儿子|女儿|宝宝|小孩|娃|妈妈|母亲|爸爸|父亲|父母|"
    r"哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|公公|婆婆|岳父|岳母|家人|全家|我妈|我爸|(?:我|我们|用户)(?:的|家)"
    r"(?:家庭|生日|纪念日|婚礼)", re.IGNORECASE)
"""A relative or partner of the user named (wife, son, 老公, 女儿, "my family", "User's birthday", "has two kids"):
a family word that is a trade or a kind of place ("a family doctor", "a wedding photographer", 家庭医生, "a
children's hospital") names none."""


def about_own_family(text: str) -> bool:
    """Whether `text` tells of the user's relatives or partner (`_KIN`, someone named with an age)."""
    return bool(_KIN.search(text) or AGE_OF_NAMED.search(text))


_CLAUSE = re.compile(r"[^,，;；。.!?！？]+[,，;；。.!?！？]*")


@registered
@lru_cache(maxsize=65536)
def without_own_family(text: str) -> str:
    """`text` without its clauses that tell of the user's relatives or partner (`about_own_family`), the
    note's frame ("用户说：") kept; "" when nothing else is left."""
    if not about_own_family(text):
        return text
    frame = VERBATIM_FRAME.match(text)
    body = text[frame.end():] if frame else text
    kept = "".join(c for c in _CLAUSE.findall(body) if not about_own_family(c)).strip().lstrip(",，;；")
    if not re.search(r"[A-Za-z]{2,}|[\u4e00-\u9fff]{2,}", kept):
        return ""
    return (frame.group(0) if frame else "") + kept


def may_show(question: frozenset[str], text: str, marked: Iterable[str] = ()) -> bool:
    """Whether a memory of `text` may be shown to a task of domains `question`: always, when neither its
    words nor its extraction `marked` it sensitive; else only when the task reaches one of those domains
    (`reached`). A record without a mark (made before marks were kept) is judged by its words alone. Writing
    for others (`WRITING_FOR_OTHERS`) is shown nothing of the user's family and partners (a note with
    something else in it is shown without those clauses: `without_own_family`), and a sensitive fact only
    when the writing is about that fact's own domain or the user's own trip (`gate_domains` keeps travel only
    for it): no other reach (a blurb for a restaurant's website is food, and no place for a health condition;
    an email to the hotel of the user's own trip may need the condition)."""
    sensitive = sensitive_domains(text).union(marked)
    if WRITING_FOR_OTHERS in question:
        if sensitive and not sensitive & question and not reached(question & {"travel"}, sensitive):
            return False
        if not without_own_family(text):
            return False
    return not sensitive or reached(question, sensitive)
