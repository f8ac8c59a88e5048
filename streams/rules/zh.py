"""Chinese rules for user turns.

A turn is cut into clauses at commas and sentence ends. Chinese drops the
subject freely ("我是Java开发，最近准备跳槽"), so a clause without an explicit
other subject (你/他/她…) is read as the user speaking about themselves. Each
clause is tried against the specific rules in order; the first that matches
wins. Informative first-person clauses that match nothing become one
low-confidence `user_fact`.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, sentences, squeeze_cjk, topic_of, zh_object
from .degree import zh_graded
from .clauses import (ZH_EMPLOYER_KIND, is_self_intro, learns_how, zh_emphatic_shi, zh_employer_kind,
                      zh_telegraphic, zh_possessed_place, zh_without_still)
from .quantities import zh_duration, zh_measured
from .tense import planned, zh_deadline, zh_timed
from .mood import is_hypothetical, is_momentary, is_sarcastic
from .zh_builders import FOLLOW_UP as _FOLLOW_UP, JOB as _JOB, Builder
from .zh_builders import (
    _age, _allergy, _as_role, _studied, _availability, _budget, _cannot, _diet, _dislike, _education, _gender, _goal,
    _diet_regime, _studying_in, _grew_up, _habit, _has, _here, _hometown, _language, _like, _location, _main_goal, _must, _my_thing, _name,
    _new_role, _occupation, _role_at, _settled, _shift, _standing_wish, _switched, _used_to, _workplace)

_LEAD = re.compile(
    r"^(?:(?:(?i:btw|by the way|anyway|also|ok|okay|oh|so)(?:\s+|(?=[\u4e00-\u9fff]))|其实|另外|还有|而且|并且|但是|但|不过|可是|然而|所以|因此|然后|对了|嗯+|哦|噢|啊|唉|"
    r"说实话|实际上|老实说|总之|话说|那么|就是|顺便说一下|顺便)[,，]?)+"
)
_SELF = re.compile(r"^(?:我们|我|本人|俺)")
_PARTICLE_END = re.compile(r"(?<=[\u4e00-\u9fff])(?:哈|哈哈|啊|呀|哦|啦|嘛|哟|噢|喔|捏|哇)+$")
"""A sentence-final particle ("我芒果过敏哈") adds tone, not content."""
_TIME_SELF = re.compile(
    r"^(?P<t>最近|现在|目前|今年|明年|去年|前天|昨天|昨晚|今天|今早|明天|前几天|几天前|[一二三四五六七八九十两\d]+(?:天|周|个月|年)前|"
    r"(?:上|下|这)(?:个)?(?:周末|星期|礼拜|周|月)|周末|平时|刚才|刚刚)(?:我们|我)"
)
"""A time phrase before the subject ("上周末我去了…") is kept at the front of the note: "用户上周末去了…"."""
_VALUE = re.compile(
    r"^(?:对(?:我|我们)(?:来说|而言))?(?P<x>[^,，。我你他她]{1,16}?)(?:对(?:我|我们)(?:来说|而言)?)?(?:是|真的|也|都)?"
    r"(?:最|很|非常|特别|十分|超级|真的很|格外)?(?:重要|珍贵|宝贵|有意义)(?:的)?(?:了)?$"
)
"""Values: "对我来说，自由最重要" / "健康对我很重要" -> "用户看重自由" (the 对我 part is required)."""
_OTHER_SUBJECT = re.compile(r"^(?:你们|你|您|他们|她们|它们|他|她|它|这个|那个|这|那|大家|别人|有人|[A-Za-z]+\s*(?:说|觉得|认为))")
_RELATIVE = re.compile(
    r"^(?:的)?(?P<rel>老婆|老公|妻子|丈夫|爱人|女朋友|男朋友|对象|爸爸|妈妈|爸|妈|父亲|母亲|父母|哥哥|哥|姐姐|姐|弟弟|弟|"
    r"妹妹|妹|儿子|女儿|孩子|宝宝|爷爷|奶奶|外公|外婆)(?P<rest>.*)$"
)
_SOMEONE = re.compile(r"^(?:的)?(?:朋友|同事|老板|领导|上司|室友|邻居|同学|老师|客户|导师|经理)")
_STATIVE = re.compile(r"^(?:是|在|住|有|喜欢|也是|今年|已经|刚|叫|对)")
_TOPIC_LEAD = re.compile(r"^(?:关于|至于)?(?P<t>[^,，。我]{1,6})(?:方面|这块|这方面|上面)(?=我)")
_CONTINUES = re.compile(
    r"^(?:明年|今年|下半年|上半年|下个月|年底|年后|下学期|不太|不怎么|有点|特别|主要|平时|一般|经常|通常|也|还|都|一直|正在|在做|在学|会|能|可以|每天|每周|打算|准备|想|喜欢|负责|用|做|写|学|只)"
)
"""A subject-less clause that opens with an adverb or a verb continues the user as subject
("我是运维工程师，平时用Go"); one that opens with a noun has a subject of its own ("面试经常问")."""
_JOB_CHANGE = re.compile(r"跳槽|离职|换工作|换了工作|入职|跳到|去了")
_CLAUSE_SPLIT = re.compile(r"[,;，；：]+|(?<!\d):(?!\d)|(?<=[\u4e00-\u9fff]):|(?=但是|不过|可是)")
_QUESTION = re.compile(
    r"(?:吗|么|呢|不)$|什么|(?<!不)怎么|如何|为什么|为啥|哪里|哪儿|哪个|哪些|多少|是否|能不能|可不可以|是不是|有没有|要不要"
)
_ADV = r"(?:现在|目前|最近|已经|还是|依然|仍然|照样|也|还|都|一直|正在|今年|去年|前年|上个月|上周|刚刚|刚|平时|其实|真的|本来|原来|从小|一向|向来|就)*"
_NOT_FACT = re.compile(
    r"^(?:想问|想知道|想请教|想了解|不知道|不懂|不明白|不清楚|觉得|认为|感觉|猜|看看|试试|问一下|问问|说|刚才|刚刚说)"
    r"|帮我|给我|告诉我|请|麻烦|我$"
)

_NUM = r"(?:\d{1,3}|[一二三四五六七八九十两]{1,3})"
_BARE_JOB = re.compile(rf"^(?:一名|一个|一位)?(?P<v>(?:退休)?[^,，。是的学在读]{{0,6}}?{_JOB})$")
_TIME = r"(?:\d{1,2}点|[早晚]上|上午|下午|中午|凌晨|周末|工作日|周[一二三四五六日天]|星期[一二三四五六日天]|每天|白天|夜里)"

_LEISURE = r"(?:周末|晚上|业余时间|业余|空闲时|有空的?时候|有空|闲下来|下班后|放假)(?:的时候)?(?:也|都|就)?"
"""When a liking is indulged ("周末喜欢去钓鱼") does not make it less of a preference."""
# Rules on the clause body after the subject; `fp` = needs the user to be the subject.
_RULES: tuple[tuple[re.Pattern[str], Builder], ...] = (
    (re.compile(r"^(?:以后|你可以|可以|就)?叫我(?P<v>[^,，。]{1,12})$"), _name),
    (re.compile(r"^(?:的)?(?:名字|姓名|全名)(?:是|叫)(?P<v>.{1,12})$"), _name),
    (re.compile(r"^叫(?P<v>[^,，。]{1,12})$"), _name),
    (re.compile(r"^是\s*(?:来自[^,，。的]{2,6}的)?(?P<v>[A-Z][a-z]{1,14}(?:\s[A-Z][a-z]{1,14})?|(?!老师|老板|老总|老大|老人|老乡|小孩|小学|小白)[老小阿][\u4e00-\u9fff])$"), _name),  # "我是 Marco": a Latin given name
    (re.compile(rf"^(?:是)?(?:今年|已经|现在|快)?(?P<v>{_NUM})(?:周)?岁"), _age),
    (re.compile(rf"^今年(?P<v>{_NUM})(?:了)?$"), _age),
    (re.compile(r"^是(?:一个|一名|个)?(?P<v>男生|女生|男的|女的|男性|女性|男人|女人|男孩|女孩)$"), _gender),
    (re.compile(rf"^{_ADV}(?:是|做|当|从事)(?:一名|一个|一位|个|名|位)?(?P<v>(?!在)[^,，。]{{0,16}}?{_JOB})(?:的)?(?:工作)?$"), _occupation),
    (re.compile(r"^(?:的)?(?:职业|工作|本职)是(?P<v>.{1,16})$"), _occupation),
    (re.compile(r"^(?:是)?(?:一名|一个|个)?(?:素食者|素食主义者|吃素的)$|^(?:只)?吃素$"), _diet),
    (re.compile(r"^(?:是|一直是|一直|已经|只)?(?:吃)?(?P<v>vegan|vegetarian|pescatarian|keto|纯素|全素|生酮)(?:的|者)?"
                r"(?:(?:快|差不多|大概|都|有|已经)?[半一两三四五六七八九十\d]+多?(?:年|个月|周|天)多?了?)?$", re.IGNORECASE),
     _diet_regime),
    (re.compile(rf"^{_ADV}(?:改|换|转而)(?:成|为)?(?P<verb>喝|吃|用|玩|看|学|听|骑|坐)(?P<v>[^,，。]{{1,16}})$"), _switched),
    (re.compile(rf"^{_ADV}不再(?P<verb>喝|吃|用|玩|看|学|听|骑|坐)(?P<old>[^,，。]{{1,16}}?)(?:而是|改|换成|现在)(?P=verb)(?P<v>[^,，。]{{1,16}})$"), _switched),
    (re.compile(rf"^{_ADV}(?P<when>以前|原来|之前|曾经|过去)(?:很|非常|特别|挺|比较)*(?P<verb>喜欢|爱|热爱|偏好)(?P<v>[^,，。]{{1,24}})$"), _used_to),
    (re.compile(rf"^{_ADV}(?:上|值|倒|轮|做)?(?P<v>夜班|白班|早班|晚班|中班|倒班|轮班)"), _shift),
    (re.compile(rf"^{_ADV}(?:转做|转行做|转行当|改行当|改行做|改做|转岗做|转岗到|转行成|转型做)(?:了)?(?P<v>[^,，。]{{2,16}})$"), _new_role),
    (ZH_EMPLOYER_KIND, zh_employer_kind),
    (re.compile(rf"^{_ADV}(?:是)?在(?P<p>[^,，。]{{1,12}}?)(?:做|当|担任)(?:一名|一个|个|名)?(?P<v>[^,，。]{{0,12}}?{_JOB})(?:的)?(?:工作)?$"), _role_at),
    (re.compile(rf"^{_ADV}(?:是)?在(?P<v>[^,，。]{{1,16}}?)(?:工作|上班|任职|实习)(?:的)?$"), _workplace),
    (re.compile(rf"^{_ADV}在(?P<v>[^,，。]{{1,10}}?)(?:定居|生活|住|安家)(?:了)?$"), _settled),
    (re.compile(rf"^{_ADV}在(?P<v>[^,，。]{{1,10}}?)(?:长大|出生)(?:的)?$"), _grew_up),
    (re.compile(r"^(?:的)?(?:母语|第一语言)(?:是)(?P<v>[^,，。]{1,8})$"), _language),
    (re.compile(r"^(?:作为|身为)(?:一个|一名|一位|个)?(?P<v>[^,，。]{2,12})$"), _as_role),
    (re.compile(rf"^{_ADV}(?:住在|居住在|生活在|定居在|定居|住|搬到了|搬到|搬去了|搬去)(?P<v>[^,，。]{{1,16}})$"), _location),
    (re.compile(r"^(?:来自|是)(?P<v>[^,，。个一]{1,8})人$"), _hometown),
    (re.compile(r"^(?:的)?(?:老家|家乡)(?:在|是)?(?P<v>[^,，。的]{1,12}?)(?:的|人)?$"), _hometown),
    (re.compile(r"^(?:坐标|现居|base在|base)(?P<v>[\u4e00-\u9fffA-Za-z]{2,10})$"), _location),  # "坐标厦门": where the user is based
    (re.compile(r"^(?P<how>本科|硕士|研究生|博士|大学)(?P<at>是|在|读的是|读的)?(?P<v>[^,，。是]{2,12}?)(?:读的|念的|上的|毕业的|毕业)?$"), _studied),
    (re.compile(rf"^{_ADV}(?P<how>在)(?P<v>(?-i:[A-Z])[\w&.-]*(?:\s(?-i:[A-Z])[\w&.-]*)*|[^,，。]{{1,12}}?(?:大学|学院|学校))(?:读|念|学)(?P<subj>[^,，。]{{2,20}})$"), _studied),
    (re.compile(r"^(?P<how>毕业于|在)(?P<v>[^,，。]{1,16}?(?:大学|学院|学校|中学))(?:读书|上学|读研|读博|念书|毕业)?$"), _education),
    (re.compile(rf"^{_ADV}在(?P<v>(?!家|这|那|学校|大学)[\u4e00-\u9fff]{{2,3}}?)(?:读|念|上)(?P<subj>[^,，。]{{0,10}}?"
                r"(?:研究生|硕士|博士|大学|本科|高中|初中|研|博|书))$"), _studying_in),
    (re.compile(r"^对(?P<v>[^,，。]{1,12})过敏$|^(?!有点|有些|比较|特别|非常|很|挺|轻微|严重|稍微|也|还|都)(?P<v2>[\u4e00-\u9fff]{1,6})过敏$"), _allergy),
    (re.compile(rf"^{_ADV}(?P<neg>不再|不太|不怎么|不是很|一点也不|一点都不|不|没那么)(?P<verb>喜欢|爱|喜爱|偏好|习惯)(?P<v>[^,，。]{{1,24}})$"), _dislike),
    (re.compile(rf"^{_ADV}(?P<neg>讨厌|厌恶|受不了|反感|烦|害怕|怕)(?P<verb>)(?P<v>[^,，。]{{1,24}})$"), _dislike),
    (re.compile(rf"^{_ADV}(?P<neg>不能|没法|无法)(?P<verb>吃|喝|碰|用|熬夜)(?P<v>[^,，。]{{0,16}})$"), _cannot),
    (re.compile(rf"^{_ADV}(?P<neg>不|从不|从来不|不再|很少)(?P<verb>吃|喝|抽|碰|用|看|玩)(?P<v>[^,，。]{{1,16}})$"), _dislike),
    (re.compile(rf"^{_ADV}(?:很|非常|特别|比较|挺|超级|超|巨)*(?P<verb>能吃)(?P<v>辣)"), _like),  # "超能吃辣": likes it hot
    (re.compile(rf"^{_ADV}(?:{_LEISURE})?(?:很|非常|特别|比较|最|挺|超级|超|更)*(?P<verb>喜欢|热爱|偏好|偏爱|喜爱|爱吃|爱喝|爱玩|爱看|爱|迷上了|擅长|习惯)(?P<v>[^,，。]{{1,24}})$"), _like),
    (re.compile(r"^(?:的)?(?:目前的|现在的|长期|最大的)?(?:目标|梦想|理想)(?:是|就是)(?P<v>.{2,30})$"), _main_goal),
    (re.compile(r"^(?:(?:也|还|真的)?(?:希望|想要|想让|要|需要|请))?你?(?:们)?(?P<when>以后|今后|之后|往后|每次|始终|一直|永远)(?P<what>.{2,30})$"), _standing_wish),
    (re.compile(rf"^[^,，。]{{0,12}}?{_TIME}[^,，。]{{0,12}}?(?:有时间|有空|没时间|没空|才有空|才能|才行|能学习|可以学习|能学)[^,，。]{{0,12}}$"), _availability),
    (re.compile(r"预算(?P<how>是|为|在|有|只有|控制在|不超过|大概|大约|最多)(?P<v>[^,，。]{1,20})$"), _budget),
    (re.compile(r"预算(?P<how>)(?P<v>\d[^,，。]{0,19})$"), _budget),
    (re.compile(rf"^(?P<adv>{_ADV})(?P<verb>准备|打算|计划|想要|希望|决定|正在准备|在准备|正在学|在学|在备考|备考|想学|想去|想转|想换|立志|想先|想再|想多|想把|需要|还要|要先)(?P<v>[^,，。]{{2,30}})$"), _goal),
    (re.compile(rf"^{_ADV}(?P<verb>只能|只会|只用|只想|必须|一定要|不能|不可以|不想|不允许|没法|无法)(?P<v>[^,，。]{{2,24}})$"), _must),
    (re.compile(r"^的(?P<k>[^,，。是]{1,8}?)(?P<is>是|叫|为)(?P<v>[^,，。]{1,30})$"), _my_thing),
    (re.compile(rf"^{_ADV}在(?P<v>[\u4e00-\u9fff]{{2,5}})$"), _here),
    (re.compile(rf"^{_ADV}(?:有|养了|养着|养)(?:一|两|三|四|五|六|几|\d+)(?:个|只|条|位|辆|套|台|名|家|本)(?P<v>[^,，。]{{1,16}})$"), _has),
    (re.compile(r"^(?:每天|每周|经常|通常|平时|一般|总是|周末)[^,，。]{2,24}$"), _habit),
)


def _clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE_SPLIT.split(sentence.rstrip("。.!?")) if c]


def _match(body: str) -> tuple[Draft, ...]:
    for pattern, build in _RULES:
        m = pattern.search(body)
        if m is not None:
            built = build(m)
            if built is not None:
                return built if isinstance(built, tuple) else (built,)
    return ()


_CONDITION = re.compile(r"如果|假如|假设|要是|万一|倘若|的话")
_NOT_BUT = re.compile(r"(不再[^,，。]{1,16})[,，]\s*((?:而是|改|换成|现在)[^,，。]{1,16})")
""""不再坐地铁，而是骑车" is one switch, so its two clauses are read as one."""


def user_drafts(text: str, leftovers: list[str], carried: bool = False) -> list[Draft]:
    """Drafts from a Chinese user turn; unmatched informative clauses go to `leftovers`.

    Sentences that are hypothetical or sarcastic state nothing; in a question
    only the clauses before the question part are statements ("我在昆明，周末
    去哪儿逛逛？" -> "我在昆明"). A job change anywhere in the turn ("跳槽",
    "离职") makes a bare "现在在X" the new employer.
    """
    out: list[Draft] = []
    explicit_self: bool | None = carried
    job_change = bool(_JOB_CHANGE.search(text))
    text = re.sub(r"(对(?:我|我们)(?:来说|而言))[,，]\s*", r"\1", text)
    for sentence, is_question in sentences(_NOT_BUT.sub(r"\1\2", squeeze_cjk(text))):
        if is_sarcastic(sentence):
            continue
        clauses = _clauses(sentence)
        if is_hypothetical(sentence):  # "我是近视眼，如果会影响…": the statements before the condition still hold
            condition = next((i for i, c in enumerate(clauses) if _CONDITION.search(c)), 0)
            if not condition:
                continue
            clauses = clauses[:condition]
        if is_question or _QUESTION.search(clauses[-1] if clauses else ""):
            clauses = clauses[:-1]
        momentary = is_momentary(sentence)
        explicit_self = bool(explicit_self)  # someone else's subject does not reach into the next sentence
        for clause in clauses:
            explicit_self = _clause(clause, explicit_self, out, leftovers, momentary, job_change)
    return out


def _clause(clause: str, carried: bool | None, out: list[Draft], leftovers: list[str], momentary: bool,
            job_change: bool) -> bool | None:
    """Handle one clause; returns whether the user is (still) the explicit subject, None when someone else is.

    Mechanism (subject carried to a dropped subject): a clause without a subject of its own that continues
    ("我室友今年刚满25，在学日语") is about whoever the clause before was about, the roommate here.
    """
    body = zh_without_still(_LEAD.sub("", _PARTICLE_END.sub("", clause)))
    if carried is None and not (_SELF.match(body) or _TIME_SELF.match(body) or _OTHER_SUBJECT.match(body)) \
            and (_CONTINUES.match(body) or _STATIVE.match(body) or body.startswith(("刚", "在"))):
        return None
    if is_self_intro(body) and not _SELF.match(body):
        return True
    value = _VALUE.match(body) if "对我" in body else None
    if value is not None:
        what = zh_object(value.group("x")).removesuffix("的").removesuffix("是")
        if what:
            out.append(Draft(T.USER_PREFERENCE, f"用户看重{what}", 0.7, None, topic_of(what), False, entities_in(what)))
            return carried
    topic = _TOPIC_LEAD.match(body)
    if topic is not None:
        body = body[topic.end():]
    subject = _SELF.match(body) or _TIME_SELF.match(body)
    if subject is not None:
        body = zh_emphatic_shi((subject.groupdict().get("t") or "") + body[subject.end():])
        relative = _RELATIVE.match(body)
        if relative is not None:
            _relative(relative, out)
            return None
        if _SOMEONE.match(body):
            return None
    elif _OTHER_SUBJECT.match(body) and not body.startswith(("你以后", "你们以后", "你今后")):
        return None if not body.startswith(("你", "您")) else False
    if not body or _QUESTION.search(body) and not learns_how(body) or _FOLLOW_UP.search(body):
        return subject is not None or carried
    drafts = zh_timed(body, _graded) or _employer(body, job_change) or zh_deadline(body)
    if momentary:
        drafts = tuple(d for d in drafts if d.type is not T.USER_GOAL)
    drafts = tuple(planned(d, body) for d in drafts)
    measured = (zh_measured(body) or zh_duration(body)) if not drafts and subject is None and carried else None
    if measured is not None:
        drafts = (measured,)
    bare = zh_telegraphic(body, _BARE_JOB) if not drafts and subject is None and carried else None
    if bare is not None:
        drafts = (bare,)
    place = zh_possessed_place(body) if not drafts and subject is None and carried else None
    if place is not None:
        drafts = (Draft(T.USER_FACT, place, 0.7, None, None, False, entities_in(place)),)
    out.extend(drafts)
    if not drafts and (subject is not None or (carried and _CONTINUES.match(body))) and not momentary \
            and len(body) >= 4 and not _NOT_FACT.search(body):
        leftovers.append("用户" + body)
    return subject is not None or carried


def _graded(body: str) -> tuple[Draft, ...]:
    return zh_graded(body, _match)


def _employer(body: str, job_change: bool) -> tuple[Draft, ...]:
    m = re.match(rf"^{_ADV}(?:是在|在|去了|到了|跳到|加入了|加入)(?P<v>[^,，。]{{1,12}})$", body) if job_change else None
    if m is None:
        return ()
    place = zh_object(m.group("v"))
    return (Draft(T.USER_PROFILE, f"用户在{place}工作", 0.8, "company", None, False, (place,)),) if place else ()


def _relative(m: re.Match[str], out: list[Draft]) -> None:
    rest = zh_object(m.group("rest"))
    if rest and _STATIVE.match(rest):
        content = f"用户的{m.group('rel')}{rest}"
        out.append(Draft(T.USER_FACT, content, 0.7, "family", None, False, entities_in(content)))
