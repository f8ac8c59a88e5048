"""Chinese rule builders: what a matched clause body becomes (the patterns and the turn reading are in `zh`).

Each builder takes the match of one pattern of `zh._RULES` and returns a draft, several, or None when the
matched value turns out not to be one (a place that is a verb, a one-off question).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, topic_of, zh_object
from .quantities import zh_role_duration

Builder = Callable[[re.Match[str]], "Draft | tuple[Draft, ...] | None"]

FOLLOW_UP = re.compile(r"打给我|联系我|发这里|发到这|发给我|找我|打这个|加我")
JOB = (
    r"(?:工程师|开发者|开发|程序员|码农|架构师|老师|教师|教授|医生|护士|律师|会计|设计师|经理|运营|销售|大学生|"
    r"研究生|博士生|博士|硕士生|本科生|高中生|初中生|学生|分析师|科学家|研究员|作家|记者|编辑|厨师|司机|公务员|"
    r"创业者|自由职业者|工人|测试|运维|前端|后端|全栈|主播|画家|演员|歌手|摄影师|翻译|顾问|工作者|专员|主管|总监|"
    r"老板|产品|策划|数据分析|财务|人事|行政|客服|文员|出纳|审计|法务|采购|保安|护工|导游|空乘|警察|消防员|军人|农民|店主|"
    r"会计师|快递员|外卖员|组长|队长|店长|主任|负责人|合伙人|创始人|校长|院长|厂长|部长|科长|处长|"
    r"CEO|CTO|PM|HR|DBA|UI|UX|SWE|SRE"
    r"|(?i:[a-z+#.\- ]*(?:engineer|developer|scientist|designer|manager|analyst|programmer|architect|consultant|"
    r"front-?end|back-?end|full-?stack|accountant|nurse|teacher|lawyer|doctor|dentist|pharmacist|architect|"
    r"marketer|recruiter|tutor|translator|photographer|writer|editor|journalist|researcher|student)))"
)


def _v(m: re.Match[str], group: str = "v") -> str:
    return zh_object(m.group(group) or "")


def _name(m: re.Match[str]) -> Draft | None:
    name = _v(m)
    if not name or name.endswith(("了", "过")) or name.startswith(("了", "过")) or len(name) > 12:
        return None
    return Draft(T.USER_PROFILE, f"用户叫{name}", 0.9, "name", None, False, (name,))


def _age(m: re.Match[str]) -> Draft:
    return Draft(T.USER_PROFILE, f"用户{m.group('v')}岁", 0.9, "age", None, False, ())


def _gender(m: re.Match[str]) -> Draft:
    return Draft(T.USER_PROFILE, f"用户是{m.group('v')}", 0.85, "gender")


def _occupation(m: re.Match[str]) -> Draft | tuple[Draft, ...] | None:
    job = _v(m)
    return zh_role_duration(job) or Draft(T.USER_PROFILE, f"用户是{job}", 0.9, "occupation", topic_of(job), False, entities_in(job))


_KNOWN_ORGS = (r"(?:腾讯|阿里巴巴|阿里|字节跳动|字节|百度|华为|小米|京东|美团|网易|拼多多|微软|谷歌|苹果|亚马逊|蚂蚁|快手|滴滴|"
               r"携程|小红书|联想|中兴|比亚迪|蔚来|招商银行|平安)")
_ORG = re.compile(r"(?:公司|集团|科技|银行|大学|学院|医院|研究院|研究所|实验室|工作室|团队|部门|[A-Za-z])$|^" + _KNOWN_ORGS)
_CITY_ORG = re.compile(r"^(?P<city>[\u4e00-\u9fff]{2,3}?)(?P<org>" + _KNOWN_ORGS + r")$")
"""A known employer after a city ("深圳腾讯", "北京字节")."""


def _workplace(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    if not place:
        return None
    if _ORG.search(place):
        return Draft(T.USER_PROFILE, f"用户在{place}工作", 0.85, "company", None, False, (place,))
    return Draft(T.USER_FACT, f"用户在{place}工作", 0.8, "location", None, False, (place,))


def _diet(m: re.Match[str]) -> Draft:
    return Draft(T.USER_CONSTRAINT, "用户吃素", 0.85, "diet", "diet", False, ())


def _shift(m: re.Match[str]) -> Draft:
    return Draft(T.USER_FACT, f"用户上{m.group('v')}", 0.85, "schedule", "shift", False, ())


def _new_role(m: re.Match[str]) -> Draft | None:
    job = _v(m)
    if len(job) < 2:
        return None
    return Draft(T.USER_PROFILE, f"用户{'是' if re.search(JOB + '$', job) else '做'}{job}", 0.85, "occupation",
                 topic_of(job), False, entities_in(job))


def _role_at(m: re.Match[str]) -> tuple[Draft, ...] | None:
    place, job = zh_object(m.group("p")), _v(m)
    if not job:
        return None
    role = Draft(T.USER_PROFILE, f"用户是{job}", 0.9, "occupation", topic_of(job), False, entities_in(job))
    city_org = _CITY_ORG.match(place)
    if city_org is not None:  # "在深圳腾讯做运营": the employer, and the city it is in
        org, city = city_org.group("org"), city_org.group("city")
        return (Draft(T.USER_PROFILE, f"用户在{org}工作", 0.85, "company", None, False, (org,)), role,
                Draft(T.USER_FACT, f"用户在{city}工作", 0.8, "location", None, False, (city,)))
    if _ORG.search(place) and not place.startswith(("一家", "一个", "家")):
        return (Draft(T.USER_PROFILE, f"用户在{place}工作", 0.85, "company", None, False, (place,)), role)
    if not _ORG.search(place) and not place.startswith(("一家", "一个", "家")) and len(place) <= 6:
        return (role, Draft(T.USER_FACT, f"用户在{place}工作", 0.8, "location", None, False, (place,)))
    return (role,)


def _diet_regime(m: re.Match[str]) -> Draft | None:
    """A diet regime named in either language inside a Chinese clause ("我吃vegan两年了", "我是vegetarian",
    "一直吃纯素"): the regime, not how long it has been kept."""
    regime = m.group("v")
    content = f"用户是{regime}" if regime.isascii() else f"用户吃{regime}"
    return Draft(T.USER_CONSTRAINT, content, 0.85, "diet", "diet", False, ())


def _language(m: re.Match[str]) -> Draft | None:
    lang = _v(m)
    return Draft(T.USER_PROFILE, f"用户的母语是{lang}", 0.85, "language", topic_of(lang), False, (lang,)) if lang else None


def _settled(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    return Draft(T.USER_FACT, f"用户住在{place}", 0.85, "location", None, False, (place,)) if place else None


def _grew_up(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    return Draft(T.USER_FACT, f"用户来自{place}", 0.8, "hometown", None, False, (place,)) if place else None


_NOT_PLACE = (*"学做看写想用忙准备读考找吃玩这那听打等适睡练赶排整收弄修改纠犹减戒养追努", "上班", "上学", "上课", "上网",
              "开会", "开车", "家里", "家")
"""First characters of a verb, verbs and pointers that follow 在 without a place ("在上班", "在家", "还在适应",
"在练琴"); 上海 and 开封 are places."""


def _here(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    if not place or place.startswith(_NOT_PLACE) or place.endswith(("里", "上", "中", "呢")):
        return None
    return Draft(T.USER_FACT, f"用户在{place}", 0.75, "location", None, False, (place,))


def _switched(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if not obj:
        return None
    old = m.groupdict().get("old")
    content = f"用户改{m.group('verb')}{obj}" + (f"（原来{m.group('verb')}{old}）" if old else "")
    return Draft(T.USER_FACT, content, 0.85, None, topic_of(obj), False, entities_in(obj))


def _used_to(m: re.Match[str]) -> Draft | None:
    """A liking said to be in the past ("以前很喜欢Java") is no longer current."""
    obj = _v(m)
    if not obj:
        return None
    return Draft(T.USER_PREFERENCE, f"用户{m.group('when')}{m.group('verb')}{obj}", 0.8, None, topic_of(obj), True,
                 entities_in(obj))


def _as_role(m: re.Match[str]) -> Draft | None:
    """"作为一个退休教师，…": the user's role or identity, said in passing."""
    who = _v(m)
    if not who:
        return None
    if re.search(JOB + "$", who):
        return Draft(T.USER_PROFILE, f"用户是{who}", 0.85, "occupation", topic_of(who), False, entities_in(who))
    return Draft(T.USER_FACT, f"用户是{who}", 0.7, None, topic_of(who), False, entities_in(who))


def _location(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    return Draft(T.USER_FACT, f"用户住在{place}", 0.85, "location", None, False, (place,)) if place else None


def _hometown(m: re.Match[str]) -> Draft | None:
    place = _v(m)
    return Draft(T.USER_FACT, f"用户来自{place}", 0.85, "hometown", None, False, (place,)) if place else None


def _education(m: re.Match[str]) -> Draft | None:
    school = _v(m)
    return Draft(T.USER_PROFILE, f"用户{m.group('how')}{school}", 0.8, "education", None, False, (school,))


def _studying_in(m: re.Match[str]) -> Draft | None:
    """ "在西宁读兽医的研究生", "现在在洛阳读高中": the city the user studies in, and what."""
    city, what = _v(m), m.group("subj")
    if not city:
        return None
    return Draft(T.USER_PROFILE, f"用户在{city}读{what}", 0.8, "education", None, False, (city,))


def _studied(m: re.Match[str]) -> Draft | None:
    """ "本科浙大", "大学在南京读的", "在KCL读economics": where (and what) the user studied."""
    school = _v(m)
    if not school:
        return None
    subject = zh_object(m.groupdict().get("subj") or "")
    at = "在" if m.groupdict().get("at") == "在" else ""
    content = f"用户{m.group('how')}{at}{school}" + (f"读{subject}" if subject else "")
    return Draft(T.USER_PROFILE, content, 0.8, "education", None, False, entities_in(content) or (school,))


def _like(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if not obj or obj.startswith(("人", "情")):
        return None
    verb = m.group("verb")
    return Draft(T.USER_PREFERENCE, f"用户{verb}{obj}", 0.85, None, topic_of(obj), False, entities_in(obj))


def _dislike(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if not obj:
        return None
    said = f"{m.group('neg')}{m.group('verb') or ''}"
    return Draft(T.USER_PREFERENCE, f"用户{said}{obj}", 0.85, None, topic_of(obj), True, entities_in(obj))


def _cannot(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if not obj:
        return None
    said = f"{m.group('neg')}{m.group('verb')}"
    return Draft(T.USER_CONSTRAINT, f"用户{said}{obj}", 0.85, None, topic_of(obj), True, entities_in(obj))


def _allergy(m: re.Match[str]) -> Draft | None:
    obj = _v(m) or _v(m, "v2")
    if not obj:
        return None
    return Draft(T.USER_CONSTRAINT, f"用户对{obj}过敏", 0.9, None, topic_of(obj), True, entities_in(obj))


_ONE_OFF = ("问", "知道", "了解", "请教", "看看", "试试", "咨询", "确认", "说", "听")


def _goal(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if len(obj) < 2 or obj.startswith(_ONE_OFF) or obj.startswith(("你", "您")):
        return None
    said = f"{m.group('adv') or ''}{m.group('verb')}{obj}"
    return Draft(T.USER_GOAL, f"用户{said}", 0.8, None, topic_of(obj), False, entities_in(obj))


def _main_goal(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if len(obj) < 2:
        return None
    return Draft(T.USER_GOAL, f"用户的目标是{obj}", 0.85, "current", topic_of(obj), False, entities_in(obj))


def _standing_wish(m: re.Match[str]) -> Draft | None:
    what = _v(m, "what")
    if len(what) < 2 or what.startswith("我") or FOLLOW_UP.search(what):
        return None
    negated = what.startswith(("不要", "别", "不用", "不必", "不再", "不许"))
    core = re.sub(r"^(?:不要|别|不用|不必|不再|不许)再?", "", what) if negated else what
    content = f"用户希望{m.group('when')}{what}"
    language = re.search(r"用(?P<l>中文|英文|英语|普通话|粤语|日语|韩语)", what)
    if language:
        return Draft(T.USER_PREFERENCE, content, 0.8, "language", language.group("l"), negated, ())
    return Draft(T.USER_PREFERENCE, content, 0.8, None, topic_of(core), negated, entities_in(core))


def _availability(m: re.Match[str]) -> Draft:
    said = zh_object(m.group(0))
    return Draft(T.USER_CONSTRAINT, f"用户{said}", 0.85, "availability", "时间", False, ())


def _budget(m: re.Match[str]) -> Draft | None:
    amount = _v(m)
    if not amount:
        return None
    return Draft(T.USER_CONSTRAINT, f"用户的预算{m.group('how') or '是'}{amount}", 0.85, None, "预算", False, ())


def _must(m: re.Match[str]) -> Draft | None:
    obj = _v(m)
    if len(obj) < 2:
        return None
    verb = m.group("verb")
    negated = verb.startswith(("不", "无", "没"))
    return Draft(T.USER_CONSTRAINT, f"用户{verb}{obj}", 0.75, None, topic_of(obj), negated, entities_in(obj))


_CONTACT_KEYS = ("电话", "手机", "号码", "邮箱", "邮件", "微信", "QQ", "联系方式", "地址", "身份证", "银行卡", "卡号", "密码")


def _my_thing(m: re.Match[str]) -> Draft | None:
    key, value = m.group("k"), _v(m)
    if not value or len(key) > 8:
        return None
    content = f"用户的{key}{m.group('is')}{value}"
    if any(k in key for k in _CONTACT_KEYS):
        return Draft(T.USER_FACT, content, 0.85, "contact", topic_of(key), False, ())
    attribute = "birthday" if key in ("生日", "出生日期") else None
    entities = entities_in(value) or ((value,) if len(value) <= 12 else ())
    return Draft(T.USER_FACT, content, 0.85, attribute, topic_of(key), False, entities)


def _has(m: re.Match[str]) -> Draft | None:
    said = zh_object(m.group(0))
    return Draft(T.USER_FACT, f"用户{said}", 0.8, None, topic_of(m.group("v")), False, entities_in(said))


def _habit(m: re.Match[str]) -> Draft | None:
    said = zh_object(m.group(0))
    return Draft(T.USER_FACT, f"用户{said}", 0.7, None, None, False, entities_in(said)) if len(said) > 3 else None
