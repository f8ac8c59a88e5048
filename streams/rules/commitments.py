"""What the assistant committed to, versus options it laid out and decisions it left to someone else.

Three mechanisms for confirmed assistant text:

- commitment: "I'll / we'll / I will" (Chinese "我来/我帮你/我会 … 整理/提醒/跟进", "我把初稿发你")
  followed by a doing verb and its object is
  an action the assistant owes ("I'll send you the draft agenda by Wednesday"),
  whatever the verb; verbs that promise nothing ("keep in mind", "think about",
  "try", "see", "be happy to") are not commitments. A commitment joined to a
  decision by "and" is its own clause ("the launch is Wednesday and I'll draft the
  release notes") and the confirmed statement before it ("Agreed, the launch is
  Wednesday") is the decision.
- options: a clause that lists alternatives or offers a possibility ("you could",
  "the options are", "either … or", "可以考虑", "也可以", "要么") decides nothing.
- affirmed commitment: an acceptance ("Yes", "Sure", "Will do", "可以", "好的")
  followed by a commitment ("Yes - I'll track the invoices in a running tally",
  "行，我每周三帮你整理账单") confirms by itself, like "agreed"; so does the
  naming idiom "Postgres it is". A commitment to an explanation inside the
  answer ("Sure, I'll explain how closures work") promises nothing to remember.
- deferral: a sentence that hands the decision to someone else ("that's your
  lead's call", "once she decides", "up to you", "要等老板决定", "由你们定",
  "待定") records nothing, not even the plan made conditional on it.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_EN_COMMIT = re.compile(
    r"\b(?:i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to)\s+"
    r"(?!(?:keep (?:that|this|it|those|these|them)? ?in mind|keep in mind|bear|think|try|see|consider|be happy|be glad|need|have to|let you know if|wait|look into whether)\b)"
    r"(?:(?:also|then|now|first|personally|gladly)\s+)?[a-z]{2,}\b\s+\S+", _I)
_ZH_COMMIT = re.compile(r"(?:我|我们)(?:来|负责)[\u4e00-\u9fffA-Za-z]{2,}"
                        r"|(?:我|我们)(?:[^，,。]{0,6}?)把[^，,。]{1,12}?(?:发|给|整理|准备|写|做|改|更新|提交|交|寄|传|同步|汇总)"
                        r"|(?:我|我们)(?:都|也|就|一定|每次)*(?:会|将)(?!建议|觉得|认为|推荐|考虑|不会)[\u4e00-\u9fffA-Za-z]{2,}"
                        r"|(?:我|我们)(?:帮你|帮您|给你|给您|替你|会|将|每天|每周[一二三四五六日天]?|以后)"
                        r"(?:[^，,。]{0,8}?)(?:整理|汇总|发|提醒|检查|跟进|写|做|准备|安排|更新|同步|盯|处理|提交|通知|推送|联系|预订|订)")
_EN_ACCEPT = re.compile(
    r"^(?:(?:oh|ok(?:ay)?|well)[,!.]?\s+)?(?:yes|yep|yeah|sure(?: thing)?|of course|absolutely|certainly|definitely|will do|can do|"
    r"happy to|glad to|on it|you got it|got it|no problem|sounds good|understood|noted)\b", _I)
_ZH_ACCEPT = re.compile(r"^(?:可以|好的?|行|没问题|当然|收到|明白|嗯|OK|ok)(?:的|啊|呀|吧)?[,，!！。:：\s]")
_EN_IN_ANSWER = re.compile(
    r"\b(?:i|we)(?:'ll| will)\s+(?:(?:now|first|just)\s+)?(?:explain|walk you|show you|break (?:it|this|that) down|go (?:over|through)|"
    r"describe|outline|clarify|answer|cover|compare|elaborate|illustrate|start by|begin by|give you an? (?:overview|example|summary))\b", _I)
_NAMING_IDIOM = re.compile(r"(?:^|[,.!;:]\s*)[A-Z][\w.+#-]*(?:\s+[A-Z0-9][\w.+#-]*)?\s+it is\s*(?:[-–—,.;!]|$)")
_EN_COMMIT_SPLIT = re.compile(r"\s+and\s+(?=(?:i|we)(?:'ll| will)\b)", _I)
_EN_STATEMENT = re.compile(r"^(?:the|our|your|this|that)\s+[\w' -]{2,40}?\s+(?:is|are|will be|stays|goes)\s+\S+", _I)
_EN_OPTION = re.compile(
    r"\b(?:you|we) (?:could|might|may)\b|\b(?:the )?options? (?:is|are|include)\b|\beither\b.+\bor\b|"
    r"\balternatively\b|\bone option\b|\banother option\b|\bif you prefer\b|\bor maybe\b", _I)
_EN_DEFERRAL = re.compile(
    r"\b(?:your|their|his|her|the [\w ]{1,20}'s|[\w]+'s) (?:call|decision)\b|\bup to (?:you|your|them|him|her|the)\b|"
    r"\b(?:once|until|till) (?:you|she|he|they|your [\w ]{1,20}|the [\w ]{1,20}) (?:decides?|confirms?|signs? off|approves?|gives? the go-ahead)\b|"
    r"\b(?:to be decided|tbd|not decided yet|still undecided|pending (?:approval|a decision|sign-off))\b|"
    r"\bdepends on (?:what|whether|your|their)\b|\bwait(?:ing)? for (?:your|their|his|her|the [\w ]{1,20}) (?:call|decision|approval)\b",
    _I)
_STANDING = re.compile(r"\b(?:going forward|from now on|from here on|in future|in the future|every time)\b|以后|之后|今后|往后|每次", _I)
_RECURRING = re.compile(r"\bevery (?:day|week|morning|evening|night|month|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b|"
                        r"每(?:天|日|周|星期|个?月|晚|早)", _I)
_ZH_OPTION = re.compile(r"可以考虑|也可以|或者|要么|还可以选|可选(?:的)?(?:方案|有)|备选")
_ZH_DEFERRAL = re.compile(
    r"等[^，,。]{0,12}(?:决定|拍板|确认|定夺|定了|批准)|(?:需要|得|要)[^，,。]{1,10}(?:确认|批准|同意|拍板|审批|签字)(?:后|之后|以后)|由[^，,。]{0,12}(?:决定|定|拍板)|[^，,。]{0,8}说了算|"
    r"取决于|待定|还没定|未定|看[^，,。]{0,8}(?:的意思|怎么定|决定)")


def en_commitment(clause: str) -> bool:
    """An "I'll <verb> <object>" promise that is not a hedge ("I'll keep that in mind")."""
    return _EN_COMMIT.search(clause) is not None


def zh_commitment(clause: str) -> bool:
    """ "我帮你整理这周的账单", "我每天检查一次": the assistant takes a task on."""
    return _ZH_COMMIT.search(clause) is not None


def en_split(sentence: str) -> list[str]:
    """A decision and a commitment joined by "and" ("… is Wednesday and I'll draft …"), as two clauses."""
    return _EN_COMMIT_SPLIT.split(sentence)


def en_confirmed_statement(clause: str) -> bool:
    """A plain statement in a confirmed sentence ("Agreed, the code freeze is Wednesday") is the decision."""
    return _EN_STATEMENT.match(clause) is not None


def affirmed_commitment(text: str) -> bool:
    """An acceptance followed by a commitment or a standing rule, or a "<Name> it is" choice: the assistant
    text confirms itself."""
    stripped = text.strip()
    if _NAMING_IDIOM.search(stripped):
        return True
    if _ZH_ACCEPT.match(stripped):
        return zh_commitment(stripped) or standing_rule(stripped)
    return _EN_ACCEPT.match(stripped) is not None and (en_commitment(stripped) or standing_rule(stripped)) \
        and not _EN_IN_ANSWER.search(stripped)


def standing_rule(clause: str) -> bool:
    """ "no semicolons in anything I draft for you from now on", "以后…都不提了": a rule the assistant keeps from
    now on (a request accepted as a lasting constraint on its own answers)."""
    return _STANDING.search(clause) is not None


def scheduled(clause: str) -> bool:
    """A commitment on a recurring schedule ("每周六我会帮你对账", "every Thursday I'll post…") is a plan."""
    return _RECURRING.search(clause) is not None


def is_option(clause: str) -> bool:
    """A clause that lays out alternatives instead of deciding."""
    return bool(_EN_OPTION.search(clause) or _ZH_OPTION.search(clause))


def is_deferred(sentence: str) -> bool:
    """A sentence that leaves the decision to someone else."""
    return bool(_EN_DEFERRAL.search(sentence) or _ZH_DEFERRAL.search(sentence))
