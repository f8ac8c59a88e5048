"""Rules for assistant turns: only conclusions, never the reasoning around them.

Called only for assistant text that carries a confirmation signal. Each clause
is classified as a decision, constraint, plan or action by its keywords;
clauses that explain, compare or hedge without concluding are dropped.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .commitments import (en_commitment, en_confirmed_statement, en_split, is_deferred, is_option, scheduled, standing_rule,
                          zh_commitment)
from .common import CJK, Draft, clean, entities_in, sentences, squeeze_cjk, topic_of

_I = re.IGNORECASE
_ZH_CLAUSE_SPLIT = re.compile(r"[,;，；]+")
_EN_CLAUSE_SPLIT = re.compile(r"\s*;\s*|\s+[-–—]\s+|,\s+(?=(?:and\s+)?(?:we|i|the|our|your)\b)", _I)

_ZH_KINDS: tuple[tuple[T, re.Pattern[str]], ...] = (
    (T.ASSISTANT_DECISION, re.compile(
        r"已确认|(?<!不)确认|(?<!不)确定|(?<!没)决定|敲定|就定|(?<!没)定了|最终|就按|采用|选用|改用|定为|定在|(?:我们|咱们)(?:就|先|会|将)?(?:用|使用|选|选择)|[端层库]用"
        r"|(?i:confirmed|agreed|decided)")),
    (T.ASSISTANT_CONSTRAINT, re.compile(r"预算|不超过|以内|以下|上限|最多|至少|不得|禁止|务必|必须|不能|控制在|截止")),
    (T.ASSISTANT_ACTION, re.compile(r"(?:我|我们)(?:会|将|稍后|下次|明天|马上|随后)|下次(?:提供|发送|给)|稍后")),
    (T.ASSISTANT_PLAN, re.compile(r"计划|阶段|开始执行|开始实施|启动|第[一二三四五六七八九十\d]+(?:步|周|天|个月|阶段)|下一步|接下来|路线图|里程碑|排期")),
)
_EN_KINDS: tuple[tuple[T, re.Pattern[str]], ...] = (
    (T.ASSISTANT_DECISION, re.compile(
        r"\b(?:we(?:'ll| will| are|'re)? go(?:ing)? with|let's go with|let's use|we'll use|we will use|"
        r"decided (?:to|on)|the decision is|final decision|confirmed|settled on|agreed (?:to|on)|adopt|"
        r"(?:is|are) locked in|(?:is|are) final(?:i[sz]ed)?)\b"
        r"|\b(?:decided|decision|agreed)\s*:", _I)),
    (T.ASSISTANT_CONSTRAINT, re.compile(
        r"\b(?:budget|must|must not|no more than|at most|at least|limit(?:ed)?|deadline|cap(?:ped)?|"
        r"under \$|within)\b", _I)),
    (T.ASSISTANT_ACTION, re.compile(
        r"\b(?:i|we)(?:'ll| will)\s+(?:send|prepare|provide|share|follow up|draft|write|set up|schedule|"
        r"create|review|get back|deliver|update)\b", _I)),
    (T.ASSISTANT_PLAN, re.compile(r"\b(?:plan|phases?|step \d|next step|roadmap|milestones?|timeline|first,)\b", _I)),
)
_ZH_REASONING = re.compile(r"优点|缺点|相比|比较而言|因为|由于|分析|举例|比如|例如|一方面|另一方面")
_EN_REASONING = re.compile(r"\b(?:because|since|compared|advantages?|disadvantages?|pros|cons|for example|e\.g\.)\b", _I)
_ZH_HEDGE_LEAD = re.compile(
    r"^(?:(?:所以|因此|综上|总之|另外|最后|那么|好的|好|嗯|没问题|已确认|最终确定|最终决定|最终|确定|确认|决定|(?i:ok|okay|confirmed|agreed|decided))"
    r"\s*[,，:：]?\s*)*"
    r"(?:我们|咱们)?"
    r"(?:(?:我这边|我们这边|我|我们)?(?:建议|推荐)(?:你|您)?)?(?:直接|还是)?"
)
_ZH_HEDGE = re.compile(r"尽量|大概|最好|会更合理|更合理|比较合适|更合适|比较稳妥|为宜|会比较好|比较好|一下")
_ZH_SELF_WILL = re.compile(r"(?:我们|我)(?:会|将)")
_ZH_POINTER = re.compile(r"^(?:我们)?(?:就|那就)?按(?:这个|这|那个|上面的?|刚才的?)(?:计划|方案|安排)?(?:来)?(?:执行|来|办|走|做)?$")
"""A confirmation that only points back ("就按这个计划执行"): its referent is kept from its own clause."""
_EN_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|great|sure(?: thing)?|so|alright|then|also|and|perfect|confirmed|decided|agreed|done|settled|"
    r"understood|yes|yep|yeah|of course|absolutely|certainly|definitely|will do|can do|no problem|sounds good|"
    r"(?:final\s+)?decision)\b[,:!.]?\s*(?:[-–—]\s*)?)+", _I)
_EN_NAMED_CHOICE = re.compile(r"^(?P<v>[A-Z][\w.+#-]*(?:\s+[A-Z0-9][\w.+#-]*)?)\s+it is$")
"""The idiom "Postgres it is": the named thing is chosen."""
_EN_CONFIRMED_LEAD = re.compile(r"^(?:ok(?:ay)?[,!.]?\s+)?(?:agreed|confirmed|decided|deal|settled|done|sounds (?:good|great)|"
                                r"works for me|great choice|good call|perfect)\b", _I)
_EN_WILL = re.compile(r"\b(?:we'll|we will|let's|i'll|i will)\b", _I)
_EN_WE = re.compile(
    r"^(?:we|let's|let us)(?:'ll|\s+will|\s+are going to|'re going to|\s+shall)?\s+(?=(?:go with|use|adopt|build|"
    r"keep|start|switch|move|write|deploy|migrate|run|do|stick with|pick|choose|split|ship)\b)", _I)


def assistant_drafts(text: str) -> list[Draft]:
    """Conclusions in confirmed assistant text, one draft per concluding clause."""
    out: list[Draft] = []
    for sentence, is_question in sentences(text):
        if is_question or is_deferred(sentence):
            continue
        zh = CJK.search(sentence) is not None
        if zh:
            sentence = squeeze_cjk(sentence)
        split = _ZH_CLAUSE_SPLIT if zh else _EN_CLAUSE_SPLIT
        confirmed = not zh and _EN_CONFIRMED_LEAD.match(sentence) is not None
        header = _PLAN_HEADER.search(sentence)
        if header is not None:  # "那就这么定：A，B，C": every clause after the header is an item of the plan
            out.extend(_plan_items(split.split(sentence[header.end():].rstrip("。.!")), zh))
            sentence = sentence[:header.start()]
        clauses = split.split(sentence.rstrip("。.!"))
        if not zh:
            clauses = [part for clause in clauses for part in en_split(clause)]
        for clause in clauses:
            draft = _zh_clause(clause) if zh else _en_clause(clause, confirmed)
            if draft is not None:
                out.append(draft)
    return out


_PLAN_HEADER = re.compile(r"(?:就这么定|就这样定|定下来|计划如下|安排如下|方案如下|(?i:the plan is|here's the plan|plan|schedule))\s*[：:]\s*")
"""A header that announces the plan or schedule the clauses after it make up."""


def _plan_items(clauses: list[str], zh: bool) -> list[Draft]:
    items = []
    for clause in clauses:
        draft = _zh_clause(clause) if zh else _en_clause(clause, True)
        content = clean(clause)
        if draft is None and not is_option(clause) and len(content) >= (4 if zh else 8):
            draft = Draft(T.ASSISTANT_PLAN, content, 0.7, None, None, False, entities_in(content))
        if draft is not None:
            items.append(draft)
    return items


def _kind(clause: str, kinds: tuple[tuple[T, re.Pattern[str]], ...]) -> T | None:
    for kind, pattern in kinds:
        if pattern.search(clause):
            return kind
    return None


def _zh_clause(clause: str) -> Draft | None:
    if is_option(clause):
        return None
    kind = _kind(clause, _ZH_KINDS) or (T.ASSISTANT_ACTION if zh_commitment(clause) else None)
    kind = kind or (T.ASSISTANT_CONSTRAINT if standing_rule(clause) else None)
    if kind is T.ASSISTANT_ACTION and scheduled(clause):
        kind = T.ASSISTANT_PLAN
    if kind is None or (kind is not T.ASSISTANT_DECISION and _ZH_REASONING.search(clause)):
        return None
    content = clean(_ZH_HEDGE.sub("", _ZH_HEDGE_LEAD.sub("", clause.strip())))
    content = _ZH_SELF_WILL.sub("", content)
    if len(content) < 4 or _ZH_POINTER.match(content):
        return None
    return Draft(kind, content, 0.75, None, _zh_topic(content), False, entities_in(content))


def _zh_topic(content: str) -> str | None:
    for marker in ("采用", "选用", "改用", "使用", "就按", "定为"):
        at = content.find(marker)
        if at >= 0:
            return topic_of(content[at + len(marker):]) or None
    return None


def _en_clause(clause: str, confirmed: bool = False) -> Draft | None:
    if is_option(clause):
        return None
    named = _EN_NAMED_CHOICE.match(_EN_LEAD.sub("", clause.strip()))
    if named:
        content = f"Going with {named.group('v')}"
        return Draft(T.ASSISTANT_DECISION, content, 0.75, None, topic_of(named.group("v")) or None, False,
                     entities_in(content))
    kind = _kind(clause, _EN_KINDS[:1]) or _kind(clause, _EN_KINDS[2:3])  # a decision, or an action by its verb
    if kind is None and confirmed and _EN_WILL.search(clause):
        kind = T.ASSISTANT_DECISION  # "Agreed, we'll release on the 3rd": the commitment is the decision
    if kind is None and en_commitment(clause) and not _EN_REASONING.search(clause):
        kind = T.ASSISTANT_ACTION  # a promise to do something is an action, whatever limits it mentions
    kind = kind or _kind(clause, _EN_KINDS)
    if kind is None and en_commitment(clause):
        kind = T.ASSISTANT_ACTION
    if kind is None and confirmed and en_confirmed_statement(_EN_LEAD.sub("", clause.strip())):
        kind = T.ASSISTANT_DECISION
    if kind is None and standing_rule(clause):
        kind = T.ASSISTANT_CONSTRAINT  # "no semicolons in anything I draft for you from now on"
    if kind is T.ASSISTANT_ACTION and scheduled(clause):
        kind = T.ASSISTANT_PLAN
    if kind is None or (kind is not T.ASSISTANT_DECISION and _EN_REASONING.search(clause)):
        return None
    content = clean(_EN_LEAD.sub("", clause.strip()))
    if kind is T.ASSISTANT_DECISION:
        content = _EN_WE.sub("", content)
    if len(content.split()) < (2 if kind is T.ASSISTANT_DECISION else 3):  # "Use SQLite" is a whole decision
        return None
    head = content.split(" ", 1)[0]
    if head.isalpha() and head.islower():
        content = content[0].upper() + content[1:]
    return Draft(kind, content, 0.75, None, None, False, entities_in(content))
