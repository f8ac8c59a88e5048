"""Irony beyond the hyperbole cue: praise for a nuisance, and an ironic turn.

Two mechanisms, in both languages:

- incongruity: a positive evaluation ("I love", "my idea of fun", "太快乐了")
  whose object is a stock nuisance (a cancelled flight, overtime, a broken
  printer, a pointless meeting, 加班, 堵车) is read as its opposite when
  something else marks it: an irony cue at the start ("Oh sure,", "Wonderful,",
  "呵呵"), an intensifier, or repetition ("another", "again", "又").
- repeated mishap (Chinese): "又…了" (it happened again) makes its clause a
  nuisance, whatever the mishap ("航班又延误了，真是 perfect 啊，我好爱这家航空公司");
  in code-switched text the English nuisances count too.
- mock claim: an irony cue followed by a justification ("Sure, because I …")
  or an over-sure claim ("Oh great, I clearly have time for …"). Plain
  praise with nothing marking it ("I love Monday meetings") is taken at face value.
- idiom: "nothing says fun like …", "said no one ever", "what could go wrong"
  make their sentence (and, said on its own, the turn) ironic.
- ironic turn: once a sentence opens with an irony cue and names a nuisance (or
  a mishap that happens "again", a chore one "gets to" do), a later sentence
  that only praises by pronoun ("I adore those", "Love that for me", "Just what
  I needed", "真是爱死了") belongs to the same irony, and nothing in the turn is
  noted as a mention.
- shouted praise: a praise word in capitals after a cue ("Sure, I'd LOVE to …").
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_EN_CUE = re.compile(
    r"^(?:oh\s+)?(?:sure|great|wonderful|lovely|perfect|brilliant|fantastic|terrific|splendid|awesome|wow|"
    r"yeah right|oh joy|just great|just perfect|just what i needed|nice one|nothing like|nothing beats)\b"
    r"|^yeah,?\s+because\b|/s\s*$",
    _I,
)
_EN_PRAISE = re.compile(
    r"\b(?:love|loved|adore|enjoy|like|favou?rite\s+(?:thing|part|pastime|activity|hobby)|idea of (?:fun|a good time)|"
    r"can't get enough of|can't wait|nothing (?:better|like)|best (?:part|thing)|thrilled|delighted)\b",
    _I,
)
_EN_NUISANCE = re.compile(
    r"\b(?:cancel+ed|delayed|stuck|traffic|jam+ed|broken|broke|crash(?:ed|es|ing)?|fixing|debugging|overtime|"
    r"until (?:midnight|\d+\s*(?:am|pm))|at (?:\d|midnight)|\d\s*am\b|meetings?|mondays?|queues?|waiting|on hold|"
    r"paperwork|taxes|chores|spam|bugs?|outages?|layovers?|commut\w*|printer|hangovers?|deadlines?|"
    r"working (?:late|weekends|on (?:a |my )?(?:sunday|saturday|weekend))|my (?:sunday|saturday|weekend))\b",
    _I,
)
_EN_IDIOM = re.compile(r"\bnothing says\s+[\w' ]{2,20}\s+like\b|\bsaid no (?:one|body|one ever)\b|^said nobody ever\b|"
                       r"\bwhat could (?:possibly )?go wrong\b", _I)
_EN_MOCK_CLAIM = re.compile(r"^[\w ]{0,20}[,!.]?\s*because\s+(?:i|we)\b|\b(?:i|we)\s+(?:totally|clearly|obviously|"
                            r"definitely)\s+(?:have|am|can|need|love|enjoy)\b", _I)
_MAY_BE_IDIOM = re.compile(r"nothing says|said no|go wrong", _I)
_MAY_MOCK = re.compile(r"because|totally|clearly|obviously|definitely", _I)
_EN_MARK = re.compile(r"\b(?:another|again|yet again|just|absolutely|totally|so much|such)\b", _I)
_EN_PRONOUN_PRAISE = re.compile(r"^(?:(?:i|we)\s+(?:just\s+|really\s+|absolutely\s+|totally\s+)?(?:love|adore|enjoy|live for)\s+"
                                r"(?:those|these|that|it|them|this)\b|^(?:love|loving) (?:that|this|it) for me\b|"
                                r"^(?:just|exactly) what i (?:needed|wanted)\b|^(?:best|greatest) (?:day|week|news) ever\b)", _I)
_EN_AGAIN = re.compile(r"\b(?:again|yet again|once again|as usual)\b|\bi get to\b", _I)
"""A mishap told as happening again ("the train is late again"), or a chore announced as a treat ("I get to
redo the report"), opens an ironic turn after a cue, whatever the mishap."""
_SHOUTED = re.compile(r"[A-Z]{4}")
"""Four capitals in a row: the one-scan gate before the shouted-praise check."""
_EN_SHOUTED_PRAISE = re.compile(r"\b(?:LOVE|LOVED|ADORE|ENJOY|LIVE FOR)\b")
"""Praise in capitals after a cue ("Sure, I'd LOVE to …") is mock praise."""

_ZH_CUE = re.compile(r"^(?:呵呵|呵|哈哈+|太好了|好极了|真棒|真好|好啊|棒极了|行吧|哇哦|哇塞|哇)")
_ZH_PRAISE = re.compile(r"快乐|开心|幸福|享受|喜欢|爱死|最爱|真爱|好爱|超爱|太爽|真爽|真好|真棒|美滋滋")
_ZH_NUISANCE = re.compile(r"加班|堵车|排队|开会|凌晨|熬夜|延误|取消|坏了|死机|周一|通勤|改需求|催|报销|bug|故障|下雨|雾霾|挤地铁|"
                          r"返工|背锅|扣工资|调休", _I)
_ZH_MARK = re.compile(r"可真|真是|太|又|再一次|简直|最|呢$")
_ZH_EMPHATIC_MARK = re.compile(r"可真|真是|简直|太[^,，。]{0,4}了")
_ZH_AGAIN = re.compile(r"又[^,，。！!？?]{1,8}了")
"""A mishap told as happening again ("航班又延误了", "又停电了") is a nuisance whatever it is."""


def is_ironic(sentence: str) -> bool:
    """Praise for a nuisance with a cue, an intensifier or repetition marking it; or a cue and a mock claim."""
    text = sentence.strip()
    if _MAY_BE_IDIOM.search(text) and _EN_IDIOM.search(text):
        return True
    if _MAY_MOCK.search(text) and _EN_MOCK_CLAIM.search(text) and _EN_CUE.search(text):
        return True
    if _EN_PRAISE.search(text) and _EN_NUISANCE.search(text):
        return bool(_EN_CUE.search(text) or _EN_MARK.search(text))
    if _SHOUTED.search(text) and _EN_SHOUTED_PRAISE.search(text) and _EN_CUE.search(text):
        return True
    if not _ZH_PRAISE.search(text):
        return False
    if _ZH_NUISANCE.search(text) or _EN_NUISANCE.search(text):
        return bool(_ZH_CUE.search(text) or _ZH_MARK.search(text))
    if _ZH_AGAIN.search(text):
        return bool(_ZH_CUE.search(text) or _ZH_EMPHATIC_MARK.search(text))  # 又 alone marks the mishap, not irony
    return False


def ironic_turn(sentences: list[str]) -> bool:
    """A turn whose irony spans sentences: a cue sentence naming a nuisance, then pronoun-only praise;
    or any sentence that is a sarcasm idiom on its own ("Said no one ever.")."""
    if any(_MAY_BE_IDIOM.search(s) and _EN_IDIOM.search(s) for s in sentences):
        return True
    opened = False
    for sentence in sentences:
        text = sentence.strip()
        if is_ironic(text):
            return True
        if _EN_CUE.search(text) and (_EN_NUISANCE.search(text) or _EN_AGAIN.search(text)) \
                or _ZH_CUE.search(text) and (_ZH_NUISANCE.search(text) or _ZH_AGAIN.search(text)):
            opened = True
        elif opened and (_EN_PRONOUN_PRAISE.search(text) or _ZH_PRAISE.search(text)):
            return True
    return False


def praises(sentence: str) -> bool:
    """The sentence praises or opens with an irony cue (what an ironic turn leaves out)."""
    text = sentence.strip()
    return bool(_EN_PRAISE.search(text) or _EN_CUE.search(text) or _ZH_PRAISE.search(text) or _ZH_CUE.search(text))
