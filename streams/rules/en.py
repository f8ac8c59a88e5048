"""English rules for one user clause (the turn-level reading is in `en_turn`).

Each clause is tried against the specific rules in order; the first match
wins. A rule is only tried when the lower-cased clause contains one of its
literals, which skips most regex calls.
"""

from __future__ import annotations

import re

from .common import Draft, first_draft
from .en_builders import Builder
from .en_builders import (
    _age, _allergy, _role_for, _availability, _budget, _diet, _dislike, _favorite, _fear, _goal, _habit, _has, _hometown,
    _identity, _joined, _left, _like, _location, _main_goal, _must, _my_thing, _name, _not_fan, _occupation,
    _shift, _skill, _standing_wish, _switched, _teaches, _their_favorite, _used_to, _works_in)

_I = re.IGNORECASE
_LEAD = re.compile(
    r"^(?:(?:actually|also|and|but|so|well|oh|yeah|yes|yep|no|nah|honestly|btw|by the way|anyway|"
    r"anyways|plus|ok|okay|hmm+|um+|uh+|to be honest|tbh|fyi|just so you know|in fact|now|lately|"
    r"recently|these days|currently|for now|for the time being|at the moment|still|though|because|since)\b[,!.]?\s*)+",
    _I,
)
_VERDICT = r"(?:terrible|awful|bad|good|great|decent|lousy|hopeless|pretty|not|big|huge|total|complete|amateur|keen)"
"""A judgement before a job noun ("I'm a hopeless gardener") describes a skill, not an occupation."""
_SUBJ = r"^(?:i|we)(?:\s*'\s*(?:m|ve|d|re)|\s+(?:am|are|have|had))?\s+(?:been\s+)?"
_ADV = (
    r"(?:(?:really|also|still|just|actually|definitely|absolutely|totally|truly|do|genuinely|kind of|"
    r"kinda|sort of|now|currently|usually|generally|mostly|honestly|personally|always|very|much)\s+)*"
)
_JOBS = (
    r"(?:engineer|developer|dev|programmer|coder|designer|teacher|doctor|nurse|student|manager|scientist|"
    r"analyst|writer|author|lawyer|consultant|architect|researcher|artist|musician|chef|cook|accountant|"
    r"professor|founder|entrepreneur|freelancer|photographer|counselor|therapist|journalist|editor|"
    r"marketer|salesperson|administrator|sysadmin|tester|intern|pilot|driver|mechanic|electrician|"
    r"plumber|pharmacist|dentist|veterinarian|vet|firefighter|officer|soldier|librarian|cashier|barista|"
    r"waiter|waitress|actor|actress|singer|dancer|painter|translator|tutor|coach|trainer|ceo|cto|cfo|pm|"
    r"lecturer|postdoc|undergrad|specialist|technician|clerk|secretary|banker|investor|economist|"
    r"physicist|chemist|biologist|psychologist|social worker|caregiver|youtuber|streamer|blogger|"
    r"carpenter|farmer|baker|nutritionist|retiree|sre|devops|paramedic|surgeon|physician|midwife|receptionist|"
    r"hairdresser|stylist|realtor|broker|auditor|actuary|recruiter|paralegal|attorney|judge|police officer|"
    r"courier|nanny|swe|qa|ux designer|data scientist|entrepreneur|homemaker|stay-at-home (?:mom|dad|parent)|"
    r"hygienist|optician|optometrist|radiographer|sonographer|physiotherapist|cleaner|housekeeper|gardener|"
    r"landscaper|postman|postwoman|mail carrier|carer|care worker)"
)
_TIME = (
    r"\b(?:\d{1,2}(?::\d\d)?\s*(?:am|pm|o'clock)|weekends?|weekdays?|evenings?|mornings?|nights?|"
    r"afternoons?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|lunch)\b"
)
# (leads, literals, pattern, builder). Leads say which clause openings the rule can
# match (i = "I/we ...", m = "my ...", o = anything else); the pattern is only tried
# when the lower-cased clause contains one of the literals, which skips most regex calls.
_Rule = tuple[tuple[str, ...], re.Pattern[str], Builder]
_RULES: tuple[tuple[str, tuple[str, ...], re.Pattern[str], Builder], ...] = (
    ("imo", ("name", "call", "go by"),
     re.compile(rf"^(?:my name is|my name's|(?:the\s+)?name's|i'm called|i am called|(?:you can |please )?call me|people call me|i go by)\s+(?P<v>[^\W\d_][\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){{0,2}})(?:\s+(?:from now on|please|instead|now|by the way|btw))*$", _I), _name),
    ("o", (" here",),
     re.compile(r"^(?P<v>(?-i:[A-Z][a-z]{1,14}))\s+here$", _I), _name),
    ("o", (" here",),
     re.compile(rf"^(?P<art>)(?P<v>(?:retired\s+|former\s+)?(?:[\w-]+\s+){{0,2}}?{_JOBS})\s+here$", _I), _occupation),
    ("i", ("i'm", "i am", "this is"),
     re.compile(r"^(?:i'm|i am|this is)\s+(?P<v>(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?)(?:\s+\((?:she|he|they|ze|xe)/\w+\))?(?:\s+(?:by the way|btw|here))?$", _I), _name),
    ("i", ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
     re.compile(r"^(?:i'm|i am|i just turned|i turned|i'll be|i will be)\s+(?:actually\s+|now\s+|really\s+)?(?P<v>\d{1,3})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o)?(?:\s+(?:btw|by the way|now|actually|lol))*$", _I), _age),
    ("i", (" a ", " an "),
     re.compile(rf"^(?:i'm|i am|i work (?:part-time |full-time |freelance )?as|i'm working (?:part-time |full-time )?as|i've been working as|i have been working as)\s+(?:currently\s+|now\s+|still\s+)?(?P<art>a|an|the)\s+(?!{_VERDICT}\b)(?P<v>(?:[\w+#./-]+\s+){{0,3}}?{_JOBS}s?(?:\s+(?:in|of)\s+(?-i:[a-z])[^,;]*|\s+at\s+(?-i:[A-Z])[^,;]*)?)(?:\s+(?:now|these days|by the way|btw|here|there))?$", _I), _occupation),
    ("i", ("been a", "been an"),
     re.compile(rf"^(?:i've|i have)\s+been\s+(?P<art>a|an)\s+(?!{_VERDICT}\b)(?P<v>(?:[\w+#./-]+\s+){{0,3}}?{_JOBS})\s+for\s+(?P<d>(?:\d+|a few|a couple of|[a-z]+)\s+(?:years?|months?))$", _I), _role_for),
    ("i", ("teach",),
     re.compile(rf"{_SUBJ}{_ADV}(?:teach|teaching)\s+(?P<v>[^,;]+)$", _I), _teaches),
    ("i", ("shift", "nights", "days", "weekends", "evenings"),
     re.compile(rf"{_SUBJ}{_ADV}(?:work|working|do|doing|switched to|moved to|changed to|on)\s+(?:the\s+|a\s+)?(?:(?P<v>night|day|evening|morning|weekend|late|early|graveyard|overnight|swing)\s+shifts?|(?P<v2>nights|days|weekends|evenings)$)", _I), _shift),
    ("i", ("joined", "job at", "started at", "starting at"),
     re.compile(rf"{_SUBJ}{_ADV}(?:joined|took a (?:new |full-time |part-time )?job (?:at|with)|got a (?:new |full-time |part-time )?job (?:at|with)|started (?:a new job |working )?at|am starting at|'m starting at)\s+(?P<v>[^,;]+)$", _I), _joined),
    ("i", ("left", "quit my job", "no longer work", "not working"),
     re.compile(rf"{_SUBJ}{_ADV}(?:left|quit my job at|no longer work (?:at|for)|am not working (?:at|for))\s+(?P<v>[^,;]+?)(?:\s+anymore)?$", _I), _left),
    ("i", ("work",),
     re.compile(rf"{_SUBJ}{_ADV}(?:work|working|worked)\s+(?P<prep>at|for|in)\s+(?P<v>[^,;]+)$", _I), _works_in),
    ("i", ("live", "living", "lived", "moved", "relocated", "based", "located", "resid", "staying"),
     re.compile(rf"{_SUBJ}{_ADV}(?P<verb>live|living|lived|moved|relocated|based|located|reside|residing|staying)\s+(?:in|to|at)\s+(?P<v>[^,;]+)$", _I), _location),
    ("i", ("been in",),
     re.compile(r"^(?:i|we)(?:'ve|\s+have)\s+been\s+(?P<verb>)in\s+(?P<v>(?-i:[A-Z])[^,;]*?)\s+(?:for|since)\s+\S.*$", _I), _location),
    ("i", ("from", "grew up"),
     re.compile(r"^(?:i'm|i am|i come|we're|we are)\s+(?:originally\s+)?from\s+(?P<v>[^,;]+)$|^(?:i|we)\s+grew up in\s+(?P<v2>[^,;]+)$", _I), _hometown),
    ("i", ("afraid", "scared", "terrified", "frightened"),
     re.compile(r"^(?:i'm|i am)\s+(?:really\s+|very\s+|so\s+)?(?:afraid|scared|terrified|frightened)\s+of\s+(?P<v>[^,;]+)$", _I), _fear),
    ("i", ("allergic",),
     re.compile(r"^(?:i'm|i am)\s+(?:(?:very|severely|really|still|also|now|quite)\s+)*allergic to\s+(?P<v>[^,;]+)$", _I), _allergy),
    ("i", ("vegan", "vegetarian", "pescatarian", "intolerant", "diabetic", "free", "celiac", "coeliac", "asthmatic", "epileptic", "teetotal", "keto", "halal", "kosher"),
     re.compile(r"^(?:i'm|i am)\s+(?:now\s+|also\s+|still\s+)?(?:a\s+)?(?:strict\s+)?(?P<v>vegan|vegetarian|pescatarian|lactose intolerant|gluten intolerant|gluten[- ]free|dairy[- ]free|celiac|coeliac|asthmatic|epileptic|(?:type\s*[12]\s+)?diabetic|teetotal|keto|halal|kosher)\b(?:\s+(?:now|these days|nowadays|too|as well|actually|just so you know|by the way|btw))*$", _I), _diet),
    ("i", ("n't", "not", "no longer", "never", "cannot"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>don't|do not|dont|no longer|never|can't|cannot|won't)\s+{_ADV}(?P<verb>like|love|enjoy|eat|drink|use|care for)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("quit",),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>quit)(?P<verb>)\s+(?P<v>(?!my job)[^,;]+?)(?:\s+(?:last|this|a)\s+\w+(?:\s+ago)?)?$", _I), _dislike),
    ("i", ("hate", "dislike", "detest", "stand"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>)(?P<verb>hate|dislike|detest|can't stand)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("stopped",),
     re.compile(rf"^(?:i|we)\s+(?P<neg>stopped)\s+(?P<verb>like|eat|drink|use)(?:ing)?\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("not", "no longer"),
     re.compile(r"^(?:i'm|i am)\s+(?:not|no longer)\s+(?:a\s+(?:big\s+|huge\s+)?fan of|into|interested in|keen on)\s+(?P<v>[^,;]+)$", _I), _not_fan),
    ("i", ("used to",),
     re.compile(rf"^(?:i|we)\s+{_ADV}used to\s+(?P<verb>like|love|enjoy|prefer|adore)\s+(?P<v>[^,;]+)$", _I), _used_to),
    ("i", ("switched to", "moved to", "changed to"),
     re.compile(rf"{_SUBJ}{_ADV}(?:switched|moved|changed)(?:\s+over)?\s+to\s+(?P<v>(?-i:[A-Z])[^,;]*|[^,;]*\b(?:tea|coffee|decaf|water)\b[^,;]*)$", _I), _switched),
    ("m", ("favorite", "favourite"),
     re.compile(r"^my\s+(?:all[- ]time\s+)?favou?rite\s+(?P<k>[\w ]{1,24}?)\s+(?:is|are)\s+(?P<v>[^,;]+)$", _I), _favorite),
    ("i", ("like", "love", "enjoy", "prefer", "adore"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>like|love|enjoy|prefer|adore)\s+(?P<v>[^,;]+)$", _I), _like),
    ("i", ("into", "fan of", "passionate", "obsessed"),
     re.compile(rf"^(?:i'm|i am)\s+{_ADV}(?P<verb>into|a (?:big |huge )?fan of|passionate about|obsessed with)\s+(?P<v>[^,;]+)$", _I), _like),
    ("o", ("favorite", "favourite"),
     re.compile(r"^(?P<v>(?!it\b|that\b|this\b)[^,;]{1,30}?)\s+(?:is|are)\s+my\s+(?:all[- ]time\s+)?favou?rite\s+(?P<k>[^,;]{1,40})$", _I), _their_favorite),
    ("i", ("know", "speak", "use", "write", "code in", "program in"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?:already\s+|mainly\s+|mostly\s+|also\s+|only\s+|fluently\s+)*(?P<verb>know|speak|use|write|code in|program in)\s+(?P<v>(?!how\b|what\b|that\b|you\b|it\b)[^,;]+)$", _I), _skill),
    ("m", ("goal", "dream", "aim", "objective"),
     re.compile(r"^my\s+(?:main\s+|current\s+|long[- ]term\s+|biggest\s+|ultimate\s+)?(?:goal|dream|aim|objective)"
                r"(?P<when>\s+(?:for\s+)?(?:this|next)\s+(?:year|month|week|season|summer|winter|spring|autumn|fall|quarter)"
                r"|\s+for\s+\d{4})?\s+is\s+(?P<v>[^;]+)$", _I), _main_goal),
    ("o", ("always", "never", "from now on", "in the future", "going forward", "every time"),
     re.compile(r"^(?:please\s+)?(?P<when>always|never|from now on|in the future|going forward|every time)\b[,\s]*(?:please\s+)?(?P<v>[^;]+)$", _I), _standing_wish),
    ("o", ("from now on", "going forward", "in the future"),
     re.compile(r"^(?:please\s+)?(?P<v>(?!call me\b)[^;]+?)\s+(?P<when>from now on|going forward|in the future)$", _I), _standing_wish),
    ("i", ("have time", "free", "available", "busy", "only"),
     re.compile(rf"^(?=.*\b(?:have time|free|available|busy|only)\b)(?=.*{_TIME})(?:i|we)\b[^;]+$", _I), _availability),
    ("imo", ("budget",),
     re.compile(r"\bbudget\b(?:\s+(?:for|on)\s+(?P<for>[^,;]+?))?(?:\s+(?:is|of|was|will be|would be|at))?\s+(?P<v>(?:[^,;]|(?<=\d),(?=\d))*\d(?:[^,;]|(?<=\d),(?=\d))*)$", _I), _budget),
    ("i", ("want", "wanna", "plan", "hope", "hoping", "intend", "aim", "going to", "gonna", "trying", "preparing", "like to", "love to", "learning", "studying", "saving", "dream", "working towards", "looking to", "need to", "thinking", "applying"),
     re.compile(rf"{_SUBJ}{_ADV}(?:want to|wanna|plan to|planning to|plan on|hope to|hoping to|intend to|aim to|going to|gonna|trying to|preparing to|would like to|'d like to|would love to|'d love to|like to|learning|studying|saving (?:up )?for|dreaming of|dream of|working towards|looking to|need to|thinking about|thinking of|applying (?:to|for))\s+(?P<v>[^;]+)$", _I), _goal),
    ("i", ("can", "must", "have to", "got to", "not allowed", "should", "want to", "refuse"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>can only|can't|cannot|must not|mustn't|must|have to|'ve got to|have got to|am not allowed to|shouldn't|should not|don't want to|do not want to|refuse to)\s+(?P<v>[^;]+)$", _I), _must),
    ("m", (" is ", " are ", " was ", "'s "),
     re.compile(r"^my\s+(?P<k>[\w' ]{1,24}?)\s+(?P<is>is|are|was|'s)\s+(?P<v>[^;]+)$", _I), _my_thing),
    ("i", ("have", "'ve got", "own"),
     re.compile(rf"^(?:i|we)(?:\s+have|'ve got|\s+own|\s+have got)\s+(?P<v>(?:a|an|one|two|three|four|five|six|\d+|some|several|many)\s+[^;]+)$", _I), _has),
    ("i", (" a ", " an "),
     re.compile(r"^(?:i'm|i am)\s+(?P<v>(?:a|an)\s+(?!(?:bit|little|lot|fan|big|huge|few|total|complete)\b)[\w'-]+(?:\s+[\w'-]+){0,3})$", _I), _identity),
    ("i", ("usually", "always", "often", "regularly", "normally", "typically", "never"),
     re.compile(r"^(?:i|we)\s+(?:usually|always|often|regularly|normally|typically|never)\s+[^;]+$", _I), _habit),
)



_BY_LEAD: dict[str, tuple[_Rule, ...]] = {
    lead: tuple((lits, pattern, build) for leads, lits, pattern, build in _RULES if lead in leads)
    for lead in "imo"
}


def _mentions(low: str, literals: tuple[str, ...]) -> bool:
    for literal in literals:
        if literal in low:
            return True
    return False


def _lead(clause: str) -> str:
    head = clause[:3].lower()
    if head.startswith(("i ", "i'", "i’", "we ", "we'")) or head == "i":
        return "i"
    return "m" if head == "my " else "o"


def match_clause(clause: str) -> Draft | None:
    """The draft of the first specific rule that matches one clause (no lead words, no end punctuation)."""
    low = clause.lower()
    rules = ((pattern, build) for literals, pattern, build in _BY_LEAD[_lead(clause)] if _mentions(low, literals))
    return first_draft(rules, clause)


def strip_lead(clause: str) -> str:
    """The clause without discourse openers ("Actually, so, btw …")."""
    return _LEAD.sub("", clause.strip())
