"""Quantities kept with their subject: an age, a salary of "2万", a team of "5个人", a bare "68" in an introduction.

Mechanisms:

- measured attribute (Chinese): in a turn where the user is the subject, a
  subject-less clause made of a noun and an amount with its unit ("月薪大概2.3万",
  "部门一共8个人", "房租每月3000块") is the user's attribute, noted whole with
  its number ("用户的月薪大概2.3万"); a clause with no unit or amount is not.
- stay duration (Chinese): "在银行实习过三个月" keeps the place with how long.
- role duration (Chinese): "做了6年Python开发" is the role and how long it has
  been held, two notes, the number kept in the second.
- bare age (English): in a list of facts about the user, a clause that is only
  a number of years ("68", "41 years old") is the user's age.
- age to come (English): "I'm turning 35 in October" is a fact with its date, not
  a plan and not the present age.
- measured clause (English): a first-person clause with an amount and its unit
  ("I weigh about 67 kg") is kept even when it has few other words.
- embedded age (English): "a 34-year-old electrician" / "I'm 34 and …" gives the
  age as well as the rest of the clause.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, topic_of

_I = re.IGNORECASE
_ZH_AMOUNT = r"(?:\d+(?:\.\d+)?|[一二三四五六七八九十两百千半]+)"
_ZH_UNIT = r"(?:万|千|k|K|w|W|块钱|块|元|个人|人|口人|名|位|岁|年|个月|公斤|斤|kg|cm|厘米|米|平米|平|套|辆|只|台|小时|天|次|篇|字|分)"
_ZH_MEASURED = re.compile(
    rf"^(?:每个?月|一个月|每年|一年|每周)?(?!一共|总共|大概|大约|差不多|才|只有|就|有|是)(?P<k>(?:(?![想要跳到去做在是有会能得把被给让打算准备])[\u4e00-\u9fff]){{1,4}}?)(?:大概|大约|差不多|一共|总共|才|只有|就|有|是|目前|现在|每个?月|一个月|每年|一年|每周|每天|税前|税后|左右)*(?:[\u4e00-\u9fff]{{1,2}}了)?"
    rf"{_ZH_AMOUNT}\s*(?:[万千]\d|{_ZH_UNIT})(?:左右|出头|多|一个月|每月|一年)?$"
)
_ZH_NOT_KEY = re.compile(r"^(?:你|您|他|她|它|这|那|哪|谁|什么|多少|几)")
_ZH_DURATION_FACT = re.compile(
    rf"^(?:之前|以前|曾经|过去|已经)?在[^,，。]{{1,10}}?(?:工作|上班|实习|任职|读书|念书|生活|[\u4e00-\u9fff](?=过|了))(?:过|了)?"
    rf"{_ZH_AMOUNT}(?:多)?(?:年|个月)(?:多)?(?:的)?[\u4e00-\u9fff]?(?:了)?$")
"""Also with the object the verb keeps after the span ("在大连教了八年书") and a past marker ("之前在X待了两年")."""
_EN_BARE_AGE = re.compile(r"^(?P<v>\d{1,2})(?:\s*(?:years? old|yrs? old|yo|y/o))?$", _I)
_EN_EMBEDDED_AGE = re.compile(
    r"^(?:i'm|i am)\s+(?:a|an)\s+(?P<v>\d{1,2})[- ]year[- ]old\b|^(?:i'm|i am)\s+(?P<v2>\d{1,2})(?:\s+years old)?\s+and\b", _I)


def zh_measured(body: str) -> Draft | None:
    """ "月薪大概2.3万" said of the user -> "用户的月薪大概2.3万"."""
    m = _ZH_MEASURED.match(body)
    if m is None or _ZH_NOT_KEY.match(body):
        return None
    key = m.group("k")
    return Draft(T.USER_FACT, f"用户的{body}", 0.7, None, topic_of(key), False, entities_in(body))


def zh_duration(body: str) -> Draft | None:
    """ "在银行实习过三个月" said of the user -> "用户在银行实习过三个月" (the place and how long, one note)."""
    if _ZH_DURATION_FACT.match(body) is None:
        return None
    return Draft(T.USER_FACT, f"用户{body}", 0.7, None, None, False, entities_in(body))


def en_bare_age(clause: str) -> Draft | None:
    """A clause that is only an age ("68") in a list of facts about the user."""
    m = _EN_BARE_AGE.match(clause.strip())
    if m is None or not 10 <= int(m.group("v")) <= 110:
        return None
    return _age(m.group("v"))


_EN_TURNING = re.compile(r"^(?:(?:i'm|i am|i'll be|i will be)\s+turning|i(?:'ll| will)? turn)\s+(?P<v>\d{1,3})\b(?P<when>\s+(?:in|on|next|this)\b[^,;]*)?$", _I)
_EN_MEASURE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:kg|kgs|kilos?|lbs?|pounds|g|km|miles?|m|cm|feet|ft|inches|hours?|hrs?|minutes?|mins?|"
    r"days?|weeks?|months?|years?|words?|pages?|people|steps|calories|k|%|percent|dollars|euros?|usd|eur|gbp)\b"
    r"|[$€£¥]\s*\d", _I)


def en_turning(clause: str) -> Draft | None:
    """ "I'm turning 35 in October" -> "User turns 35 in October": an age to come, kept with its date."""
    m = _EN_TURNING.match(clause.strip())
    if m is None or not 1 <= int(m.group("v")) <= 120:
        return None
    when = (m.group("when") or "").strip()
    return Draft(T.USER_FACT, f"User turns {m.group('v')}" + (f" {when}" if when else ""), 0.8, None, "age")


def en_measured(clause: str) -> bool:
    """The clause gives an amount with its unit ("about 67 kg", "90 minutes", "$40k")."""
    return _EN_MEASURE.search(clause) is not None


def en_embedded_age(clause: str) -> Draft | None:
    """The age inside "I'm a 34-year-old electrician" or "I'm 34 and …"."""
    m = _EN_EMBEDDED_AGE.match(clause.strip())
    if m is None:
        return None
    return _age(m.group("v") or m.group("v2"))


def _age(years: str) -> Draft:
    return Draft(T.USER_PROFILE, f"User is {years} years old", 0.8, "age")


_ZH_ROLE_YEARS = re.compile(rf"^了?(?P<n>{_ZH_AMOUNT})(?:多)?(?P<u>年|个月)(?:的)?(?P<job>[^,，。]{{2,16}})$")


def zh_role_duration(job: str) -> tuple[Draft, Draft] | None:
    """ "做了6年Python开发": the role ("用户是Python开发") and how long ("用户做了6年Python开发")."""
    m = _ZH_ROLE_YEARS.match(job)
    if m is None:
        return None
    role = m.group("job")
    return (Draft(T.USER_PROFILE, f"用户是{role}", 0.85, "occupation", topic_of(role), False, entities_in(role)),
            Draft(T.USER_FACT, f"用户做了{m.group('n')}{m.group('u')}{role}", 0.8, None, topic_of(role), False,
                  entities_in(role)))
