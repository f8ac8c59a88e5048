"""Conversational narrative in English: what a note-taker keeps from chat between friends.

Mechanisms, each applied to one clause on its own (a neighbouring question,
exclamation or compliment never hides a clause):

- fronted time: a time phrase before the subject ("Last Friday I went …",
  "A few weeks ago we …") is taken off the front, the clause is read without
  it, and the note keeps it at the end: "User went to a workshop (last Friday)";
- dropped subject: a clause that opens with a past or perfect verb, or with a
  plan ("Just got new shoes", "Been running more", "Gonna finish my degree")
  is the speaker's own ("I got …", "I've been …", "I'm going to …");
- event note: a first-person clause with a past-tense or perfect verb is an
  event or experience (`user_fact`), also when the sentence names a moment
  ("this morning"), which only bars one-off needs;
- value: "X is important/special to me", "X matters to me", "X means a lot to
  me", "X is a big part of my life" -> "User values X";
  "X brings/gives me joy" -> "User finds joy in X";
- motive: "X inspired/pushed/motivated me to V", "X made me (more) determined
  to V" -> "User is motivated to V" (`user_goal`), whatever X is;
- experience through the object: a clause about something else that did
  something to the speaker ("Knitting has helped me with my insomnia",
  "The group made me feel accepted") is noted as the user's experience:
  "User's experience: knitting has helped them with their insomnia";
- shared photo: "Here's a pic of X" / "This photo is from X" / "Check out this
  picture of X" -> "User shared a photo of X"; "Here's one I made last week"
  -> "User shared something they made last week";
- task turn: in a turn that asks the assistant for help ("Can you help me
  budget for a move?", "How should I warm up before a run?") a past event told on the side
  ("Last night I dropped my bike at the repair shop") is context for the task, not a note;
- attachment: a described attachment ("[image: a photo of a lake at dusk]")
  is something the user shared: "User shared a photo of a lake at dusk";
- presentative: "Check out my painting for the show" -> "User shared their
  painting for the show";
- phatic: greetings, thanks, congratulations, compliments and wishes
  ("Thanks for letting me know", "Glad you had fun") give nothing.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .common import Draft, en_object, entities_in, topic_of

_I = re.IGNORECASE
_DAYS = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
_MONTHS = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december)")
_NUMBER = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple(?: of)?|several|\d+)"
_UNIT = r"(?:days?|weeks?|months?|years?|hours?|nights?)"
_WHEN = (
    rf"(?:yesterday|the other day|last night|earlier today|this (?:morning|afternoon|evening|past weekend)|"
    rf"(?:last|this past|next|this|earlier this|later this)\s+(?:week(?:end)?|month|year|summer|winter|spring|"
    rf"fall|autumn|{_DAYS}|time)|{_NUMBER}\s+{_UNIT}\s+ago|(?:on\s+)?(?:last\s+)?{_DAYS}s?|"
    rf"(?:in|back in|since)\s+(?:{_MONTHS}|\d{{4}})|over the (?:weekend|holidays|summer)|"
    rf"(?:starting|beginning|from)\s+(?:(?:next|this|on|in)\s+)?(?:tomorrow|week(?:end)?|month|year|{_DAYS}|{_MONTHS})|"
    rf"(?:by|before)\s+(?:the\s+end\s+of\s+)?(?:(?:the|this|next)\s+)?(?:year|month|week|summer|winter|spring|fall|autumn|{_MONTHS}))"
)
"""Also a start ("Starting next week, …") or a horizon ("By the end of the year, …") that a plan or a change is held to."""
_FRONTED = re.compile(rf"^(?P<when>{_WHEN})\b[,\s]+(?=(?:i|we|my)\b)", _I)
_PAST_VERB = (
    r"(?:went|was|were|had|got|made|took|saw|did|came|gave|found|became|left|felt|brought|began|kept|held|"
    r"wrote|heard|met|ran|paid|read|grew|lost|fell|sent|built|drew|spent|drove|bought|wore|chose|ate|drank|"
    r"sang|won|taught|caught|flew|slept|rode|swam|finished|joined|"
    r"(?!(?:need|feed|seed|speed|bleed|breed|proceed|exceed|succeed|bed|red|shed|wed|used|based)\b)[a-z]{2,}ed)"
)
_PERFECT = r"(?:'ve|have|had|'d)\s+(?:just\s+|finally\s+|recently\s+|already\s+|also\s+)*(?:been|[a-z]{2,}(?:ed|en)|done|gone|got|made|had|met|seen|found|taken|won|begun|grown|read|run|built)"
_EVENT = re.compile(
    rf"^(?:i|we)(?:\s+(?:just|finally|recently|also|actually|really|even|already|totally|once|first|"
    rf"both|all))*(?:\s+{_PAST_VERB}\b|\s*{_PERFECT}\b)",
    _I,
)
_DROPPED_PAST = re.compile(
    rf"^(?:(?:just|finally|recently|also|then|and)\s+)*(?P<verb>{_PAST_VERB}|been(?=\s+(?:\w+ing|\w+ed)\b)|gonna|going to|planning to|"
    r"hoping to|trying to)\s+\S",
    _I,
)
_NOT_DROPPED = re.compile(
    r"^(?:(?:was|were|had|did|got|made|been|felt)\s+(?:you|it|that|this|so|such)\b|(?:excited|thrilled|tired|"
    r"bored|interested|pleased|surprised|amazed|scared|worried|stressed|blessed|stoked|obsessed|impressed|inspired|"
    r"relieved|exhausted|overwhelmed|touched|moved|honou?red|delighted|shocked|annoyed|frustrated|confused|"
    r"determined|dedicated|committed|excited|supposed|used|based|called|named)\b)",
    _I,
)
"""Participial adjectives ("Excited for the trip!") are moods of the moment, not events."""
_GERUND_SUBJECT = re.compile(
    r"^[a-z]{2,}ing\b[^,;]*?\s(?:is|are|was|were|'s|looks|seems|makes|made|has|can|helps|helped|gives|brings|"
    r"matters|means|takes|feels|keeps)\b",
    _I,
)
_SUBJECT_X = (r"(?P<x>(?!(?:it|you|your|he|she|they|his|her|their|which|what|who)\b)"
              r"(?!(?:that|this|these|those)\s+(?:is|are|was|were|'s|has|have|means|matters|brings|gives)\b)"
              r"(?!(?:that|this|these|those)$)[^,;]{2,60}?)")
_VALUE = re.compile(
    rf"^{_SUBJECT_X}\s+(?:is|are|'s|has been|have been|was|were|has always been|will always be)\s+"
    r"(?:(?:really|so|super|very|extremely|incredibly|truly|always|also|still|just|quite)\s+)*"
    r"(?:(?:important|special|precious|dear|meaningful|everything|sacred|a priority)\s+(?:to|for)\s+(?:me|us)"
    r"|(?:a|an)\s+(?:(?:huge|big|important|major|key|large)\s+)+part of (?:my|our) li(?:fe|ves))\b",
    _I,
)
_MATTERS = re.compile(
    rf"^{_SUBJECT_X}\s+(?:really\s+|truly\s+)?(?:matters?|means?|meant)\s+(?:(?:a lot|so much|the world|"
    r"everything|a great deal)\s+)?to\s+(?:me|us)\b",
    _I,
)
_JOY = re.compile(
    rf"^{_SUBJECT_X}\s+(?:really\s+|always\s+|also\s+)?(?:brings?|gives?|brought|gave)\s+(?:me|us)\s+"
    r"(?:so much\s+|a lot of\s+|such\s+|great\s+|real\s+)?(?P<what>joy|peace|happiness|comfort|calm|hope|purpose)\b",
    _I,
)
_MOTIVE = re.compile(
    r"\b(?:inspired|inspires|pushed|pushes|motivated|motivates|encouraged|encourages|drove|drives|drive|push|"
    r"inspire|motivate|encourage)\s+(?:me|us)\s+(?:even more\s+|more\s+|further\s+)?to\s+(?P<v>[^,;]{4,})$"
    r"|\b(?:made|makes|make)\s+(?:me|us)\s+(?:(?:even|more|so|really|much)\s+)*(?:determined|motivated|eager|"
    r"want)\s+to\s+(?P<v2>[^,;]{3,})$",
    _I,
)
_SHORT_X = (r"(?P<x>(?!(?:you|your|he|she|they|his|her|their|which|what|who|everyone|"
            r"everybody|someone|somebody)\b)(?:[\w'-]+\s+){0,4}?[\w'-]+)")
_NOT_IN_X = frozenset("me us i and was were is are".split())
_OBJECT_ME = re.compile(
    rf"^{_SHORT_X}\s+(?:(?:really|has|have|had|always|also|just|truly|totally)\s+)*"
    r"(?P<verb>helped|helps|help|made|makes|make|taught|teaches|gave|gives|showed|shows|reminds|reminded|"
    r"changed|saved|got|gets|keeps|kept|brought|brings|lets|let)\s+(?:me|us)\b(?P<rest>.*)$",
    _I,
)
_PHOTO_WORD = r"(?:pic|pics|photo|photos|picture|pictures|snap|shot|selfie|video|clip)"
_PHOTO = re.compile(
    rf"^(?:(?:here's|here is|here are|this is|these are|check out|take a look at|look at|sharing)\s+)?"
    rf"(?:a |an |the |my |this |these |one |some |another |a few )?(?:(?:new|recent|quick|old|little)\s+)?"
    rf"{_PHOTO_WORD}(?:'s|\s+is|\s+was|\s+are)?\s+(?P<rest>(?:of|from|with|at|i|we|taken|showing)\b[^;]{{3,}})$",
    _I,
)
_MADE_ONE = re.compile(
    r"^(?:here's|here is|this is|these are|check out|look at)\s+(?P<obj>one|some|another|the one|a few|"
    r"(?:a|an|the|my|this)\s+[\w' -]{2,30}?)\s+(?:that\s+|which\s+)?(?:i|we)\s+(?:just\s+|recently\s+|finally\s+)?"
    rf"(?P<verb>{_PAST_VERB}|'ve\s+[a-z]+)\b(?P<rest>[^;]*)$",
    _I,
)
_EMBEDDED = re.compile(
    r"(?:^|\s)(?P<obj>(?:the|this|that|a|an|my|our)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:that\s+|which\s+)?"
    rf"(?:i|we)\s+(?:just\s+|recently\s+|finally\s+|once\s+)?(?P<verb>{_PAST_VERB})\b(?P<rest>[^,;]*)$",
    _I,
)
_EMBEDDED_REST = re.compile(
    r"(?:\s+(?:to|at|in|on|with|from|for|about|into|through|by)(?:\s+[\w'-]+){0,4}?)?"
    rf"(?:\s+{_WHEN}|\s+(?:recently|once|before|together|too|again|as a kid|as a child))?\s*",
    _I,
)
_CONJUNCTIONS = frozenset("since when before after because until while as if so than where how what why".split())
_PREPOSITION = re.compile(r"^\s*(?P<p>to|at|in|on|with|from|for|about|into|through|by)\b", _I)
_PHATIC = re.compile(
    r"^(?:thanks|thank you|thx|ty|congrats|congratulations|cheers|hi|hey|hello|bye|goodbye|welcome|"
    r"(?:so\s+|really\s+)?(?:glad|happy|great|good|nice|lovely)\s+(?:to\s+(?:hear|see|talk|chat|know)|you|that)|"
    r"sorry|can't wait|wish(?:ing)? you|hope you|have (?:a|fun)|take care|enjoy|good luck|talk soon|"
    r"see you|love (?:that|it|this|your)|sounds|looks|wow|aww?)\b",
    _I,
)


_TASK = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will) you\s+(?:please\s+)?(?:help|give|recommend|suggest|plan|write|"
    r"explain|find|make|create|draft|fix|check|review|summari[sz]e|translate|list|compare)|help me|write|explain|"
    r"translate|summari[sz]e|generate|draft|recommend|suggest|what(?:'s| is| are) (?:a |some )?(?:good|best)|"
    r"any (?:tips|advice|ideas|suggestions|recommendations)|how (?:do|can|should) i)\b",
    _I,
)


_ZH_TASK = re.compile(
    r"^(?:请你?|麻烦你?|你)?(?:能不能|能否|可不可以|可以)?(?:帮我|帮忙|给我|替我)(?:\S{0,2}(?:解释|写|翻|总结|推荐|看|查|想|"
    r"列|比较|分析|介绍|改|润色|检查|算|排|规划|安排|设计|做|出|起|整理|准备|找|选|讲)|一下)|"
    r"^(?:请)?(?:解释|翻译|总结|推荐|列出|比较|分析|润色)(?:一下|下)")
"""A Chinese request for the assistant's help ("帮我解释一下…", "给我推荐几本书", "翻译一下这句")."""


def is_task(sentence: str) -> bool:
    """A request for the assistant's help: the events told beside it are context for the task, not notes."""
    return _TASK.match(sentence) is not None or _ZH_TASK.match(sentence) is not None


_ATTACHMENT = re.compile(r"\s*\[(?:image|photo|picture|img)\s*:\s*(?P<c>[^\]]{3,300})\]", _I)
_CAPTION_LEAD = re.compile(r"^(?:a|an)\s+(?:photo|photograph|photography|picture|image|pic)\s+(?:of\s+)?", _I)


def attachments(text: str) -> tuple[str, list[Draft]]:
    """The text without "[image: …]" tags, and a note per described attachment: "User shared a photo of …"."""
    drafts = []
    for m in _ATTACHMENT.finditer(text):
        caption = _CAPTION_LEAD.sub("", m.group("c").strip().rstrip("."))
        if len(caption) >= 3:
            content = f"User shared a photo of {caption}"
            drafts.append(Draft(T.USER_FACT, content, 0.55, None, None, False, entities_in(caption, prose=True)))
    return _ATTACHMENT.sub("", text).strip(), drafts


def front_time(clause: str) -> tuple[str, str]:
    """`("Last Friday I went …")` -> `("I went …", "last Friday")`; no fronted time gives `(clause, "")`."""
    m = _FRONTED.match(clause)
    if m is None:
        return clause, ""
    when = m.group("when")
    return clause[m.end():], when[0].lower() + when[1:]


def dropped_subject(clause: str) -> str | None:
    """The clause with "I" put back when it opens with a past/perfect verb or a plan, else None."""
    m = _DROPPED_PAST.match(clause)
    if m is None or _NOT_DROPPED.match(clause):
        return None
    verb = m.group("verb").lower()
    clause = clause[:1].lower() + clause[1:]
    if verb == "been":
        return "I've " + clause
    if verb == "gonna":
        return "I'm going to " + clause[m.start("verb") + 5:].lstrip()
    return ("I'm " if verb.endswith(" to") else "I ") + clause


def is_gerund_subject(clause: str) -> bool:
    """ "Taking care of ourselves is vital": the -ing phrase is the subject, not a verb missing its "I"."""
    return _GERUND_SUBJECT.match(clause) is not None


def is_event(clause: str) -> bool:
    """A first-person clause with a past-tense or perfect verb: something that happened to the user."""
    return _EVENT.match(clause) is not None


def is_phatic(clause: str) -> bool:
    """Greetings, thanks, congratulations, compliments and wishes."""
    return _PHATIC.match(clause) is not None


def narrative_draft(clause: str, when: str = "") -> Draft | None:
    """A value, motive, object-side experience or shared photo read from a clause that has no "I" subject."""
    for build in (_value, _motive, _photo, _made_one, _show_mine, _object_me, _embedded):
        draft = build(clause)
        if draft is not None:
            return _dated(draft, when)
    return None


def dated(content: str, when: str) -> str:
    """A note with its time phrase at the end: "User went to a fair (last Friday)"."""
    return f"{content} ({when})" if when and when.lower() not in content.lower() else content


def _dated(draft: Draft, when: str) -> Draft:
    if not when:
        return draft
    return Draft(draft.type, dated(draft.content, when), draft.confidence, draft.attribute, draft.topic,
                 draft.negated, draft.entities)


def _noun(x: str) -> str:
    """A subject phrase as a note's object: "My family" -> "their family", "This necklace" -> "the necklace"."""
    x = en_object(x)
    x = re.sub(r"^(?:this|that)\s+", "the ", x, flags=_I)
    x = re.sub(r"\b(?:my|our)\b", "their", x, flags=_I)
    words = x.split()
    if not words:
        return x
    proper = len(words) > 1 and words[1][:1].isupper() or words[0].isupper()
    return x if proper else x[:1].lower() + x[1:]


def _as_user(text: str) -> str:
    text = re.sub(r"\b(?:me|us)\b", "User", text, flags=_I)
    text = re.sub(r"\b(?:my|our)\b", "their", text, flags=_I)
    text = re.sub(r"\bI'm\b", "they're", text)
    text = re.sub(r"\bI\b", "they", text)
    return re.sub(r"\b(?:myself|ourselves)\b", "themselves", text, flags=_I)


def _value(clause: str) -> Draft | None:
    m = _VALUE.match(clause) or _MATTERS.match(clause)
    if m is not None:
        x = _noun(m.group("x"))
        return Draft(T.USER_PREFERENCE, f"User values {x}", 0.7, None, topic_of(x), False, entities_in(x))
    joy = _JOY.match(clause)
    if joy is None:
        return None
    x = _noun(joy.group("x"))
    return Draft(T.USER_PREFERENCE, f"User finds {joy.group('what').lower()} in {x}", 0.7, None, topic_of(x), False,
                 entities_in(x))


def _motive(clause: str) -> Draft | None:
    m = _MOTIVE.search(clause)
    if m is None or re.match(r"^(?:you|your)\b", clause, _I):
        return None
    what = _as_user(en_object(m.group("v") or m.group("v2")))
    return Draft(T.USER_GOAL, f"User is motivated to {what}", 0.65, None, topic_of(what), False, entities_in(what))


def _photo(clause: str) -> Draft | None:
    m = _PHOTO.match(clause)
    if m is None:
        return None
    rest = _as_user(en_object(m.group("rest")))
    rest = re.sub(r"^(?:i|we)\s+", "User ", rest, flags=_I)
    if rest.startswith("User "):
        rest = "that " + rest
    return Draft(T.USER_FACT, f"User shared a photo {rest}", 0.6, None, None, False, entities_in(rest, prose=True))


_SHOW_MINE = re.compile(
    r"^(?:check out|take a look at|look at|here's|here is|here are|meet|this is|these are)\s+(?:my|our)\s+"
    r"(?P<obj>(?:new\s+|latest\s+|recent\s+|little\s+)?[\w'-]+(?:\s+[\w'-]+){0,7})$",
    _I,
)


def is_presentative(sentence: str) -> bool:
    """ "Check out my painting!" / "Here's a pic of …" show something; they are not requests."""
    body = sentence.strip().rstrip(".!?…")
    return _SHOW_MINE.match(body) is not None or _PHOTO.match(body) is not None


def _show_mine(clause: str) -> Draft | None:
    """ "Check out my painting for the art show" -> "User shared their painting for the art show"."""
    m = _SHOW_MINE.match(clause)
    if m is None:
        return None
    content = f"User shared their {_as_user(m.group('obj'))}"
    return Draft(T.USER_FACT, content, 0.6, None, None, False, entities_in(content, prose=True))


def _made_one(clause: str) -> Draft | None:
    m = _MADE_ONE.match(clause)
    if m is None:
        return None
    obj = _noun(m.group("obj"))
    obj = "something" if obj.lower() in ("one", "some", "another", "the one", "a few") else obj
    content = f"User shared {obj} they {m.group('verb').lower()}{_as_user(m.group('rest'))}".rstrip()
    return Draft(T.USER_FACT, content, 0.6, None, None, False, entities_in(content, prose=True))


def _object_me(clause: str) -> Draft | None:
    m = _OBJECT_ME.match(clause)
    if m is None or len(m.group("rest").split()) < 1 or is_phatic(clause):
        return None
    x = m.group("x")
    if re.match(r"^(?:let|help|tell|show|give)\b", x, _I) or _NOT_IN_X.intersection(x.lower().split()):
        return None
    first = x.split()[0].lower()
    if first in ("it", "this", "that", "these", "those") and len(x.split()) == 1 and _content(m.group("rest")) < 2:
        return None
    common = first in ("the", "a", "an", "my", "our", "it", "this", "that", "these", "those") or first.endswith("ing")
    content = "User's experience: " + _as_user(clause[:1].lower() + clause[1:] if common else clause)
    content = re.sub(r"\bUser\b(?!'s experience)", "them", content)
    return Draft(T.USER_FACT, content, 0.6, None, None, False, entities_in(clause, prose=True))


def _content(text: str) -> int:
    return sum(1 for w in re.findall(r"[A-Za-z][\w'-]*", text) if len(w) > 3 and w.lower() not in _LIGHT)


_LIGHT = frozenset("feel feels felt like more much very really good great happy that this them they what when "
                   "want wanted smile laugh think".split())


def _embedded(clause: str) -> Draft | None:
    """ "One highlight was the parade I went to last month" -> "User went to the parade last month"."""
    m = _EMBEDDED.search(clause)
    if m is None or re.match(r"^(?:you|your)\b", clause, _I):
        return None
    if _CONJUNCTIONS.intersection(m.group("obj").lower().split()) or not _EMBEDDED_REST.fullmatch(m.group("rest")):
        return None
    obj, verb, rest = _noun(m.group("obj")), m.group("verb").lower(), _as_user(m.group("rest"))
    prep = None if re.match(rf"\s*{_WHEN}\b", rest, _I) else _PREPOSITION.match(rest)
    if prep is not None:
        content = f"User {verb} {prep.group('p').lower()} {obj}{rest[prep.end():]}"
    else:
        content = f"User {verb} {obj}{rest}"
    content = content.rstrip()
    return Draft(T.USER_FACT, content, 0.6, None, None, False, entities_in(content, prose=True))
