"""How the user wants to be answered, however they ask for it. Pure.

"Keep your replies short, bullet points if possible", "can you keep replies short?", "以后回答能不能简短点？",
"别用表情", "还是用中文回复我吧" all say one standing thing about every answer: its length, its format, its
language, emojis. A
wish about answers in general is a standing preference even when it is asked as a question; a wish about
*this* answer ("make this shorter", "这次短一点", "this time") is not. Each aspect becomes one note in a fixed
wording ("User wants short answers", "用户希望回答简短"), so the same wish said twice is one memory, and a
later wish of the same aspect is recognisably about it.
"""

from __future__ import annotations

import re

from engram.core.text import has_cjk
from engram.schemas.memory import MemoryType as T

from .common import Draft

_ABOUT_ANSWERS = re.compile(
    r"\b(?:repl(?:y|ies)|answers?|responses?|respond|explanations?|messages? (?:to me|you send))\b|"
    r"\bkeep (?:it|things|them) (?:short|brief)\b|\b(?:from now on|always|in general|every time|going forward)\b|"
    r"回答|回复|答复|答案|解释|以后|每次|平时|一律|都用", re.IGNORECASE)
_ONE_OFF = re.compile(r"\b(?:this time|for now|this one|today|this (?:email|answer|reply|text|draft|message|one))\b|"
                      r"\b(?:make|rewrite|shorten|summari[sz]e) (?:this|it|that)\b|这次|这一次|这条|这个回答|这封|这段|今天",
                      re.IGNORECASE)
_ASPECTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\b(?:short|brief|concise|shorter|to the point|tl;?dr)\b|简短|简洁|短一点|短点|精简|别太长|不要太长",
                re.IGNORECASE), "User wants short answers", "用户希望回答简短"),
    (re.compile(r"\bbullet(?:ed)?(?: points?| lists?)?\b|\bin (?:a )?list form\b|列要点|分点|列点|要点",
                re.IGNORECASE), "User wants answers in bullet points", "用户希望回答列要点"),
    (re.compile(r"\b(?:detailed|in detail|thorough|step[- ]by[- ]step)\b|详细|具体一点|一步一步", re.IGNORECASE),
     "User wants detailed answers", "用户希望回答详细"),
    (re.compile(r"\b(?:no|without|don'?t use|stop using|skip the) emojis?\b|不要(?:用)?表情|别用表情|不用表情",
                re.IGNORECASE), "User wants answers without emojis", "用户希望回答不用表情"),
)
_NOT_WISH = re.compile(r"\b(?:is|are|was|were) (?:too )?(?:short|brief|detailed)\b|\bshort (?:story|film|term|notice)\b",
                       re.IGNORECASE)
""""Short" that describes something else: a short story, short notice, "the meeting was brief"."""


_LANGUAGES = {"english": ("English", "英文"), "chinese": ("Chinese", "中文"), "mandarin": ("Chinese", "中文"),
              "spanish": ("Spanish", "西班牙语"), "french": ("French", "法语"), "german": ("German", "德语"),
              "japanese": ("Japanese", "日语"), "korean": ("Korean", "韩语"), "中文": ("Chinese", "中文"),
              "汉语": ("Chinese", "中文"), "英文": ("English", "英文"), "英语": ("English", "英文"),
              "繁体": ("traditional Chinese characters", "繁体字"), "繁体字": ("traditional Chinese characters", "繁体字"),
              "日语": ("Japanese", "日语"), "韩语": ("Korean", "韩语")}
_LANGUAGE = re.compile(
    r"\b(?:repl(?:y|ies)|answer|respond|write|talk|speak)\w*(?: to me)? in (?P<en>english|chinese|mandarin|spanish|french|"
    r"german|japanese|korean)\b|用(?P<zh>中文|汉语|英文|英语|繁体字?|日语|韩语)(?:回复|回答|答复|跟我说|和我说|说|写)",
    re.IGNORECASE)
"""The language the user wants answers in ("reply in English", "用中文回复我"): the reply-language slot, one
value, so a newer wish replaces the older one."""


_ANSWER_WORD = re.compile(r"\b(?:repl(?:y|ies)|answers?)\b|回答|回复", re.IGNORECASE)


def _language_note(sentence: str, drafts: list[Draft]) -> Draft | None:
    m = _LANGUAGE.search(sentence)
    if m is None or any(d.attribute == "language" for d in drafts):
        return None
    english, chinese = _LANGUAGES[(m.group("en") or m.group("zh")).lower()]
    if any(d.type is T.USER_PREFERENCE and (chinese in d.content or english in d.content)
           and _ANSWER_WORD.search(d.content) for d in drafts):
        return None  # a standing wish of the turn says it already ("用户希望以后都用繁体字回答我")
    content = f"用户希望用{chinese}回答" if has_cjk(sentence) else f"User wants answers in {english}"
    return Draft(T.USER_PREFERENCE, content, 0.85, "language", english.lower(), False, ())


def answer_style_notes(text: str, drafts: list[Draft]) -> list[Draft]:
    """One note per aspect of answering (`_ASPECTS`) the turn asks for in general (in a sentence about
    answers, or the one right after it), in the turn's language, when no draft of the turn says it already."""
    out: list[Draft] = []
    carried = False  # a wish goes on in the next sentence ("can you keep replies short? bullet points if possible")
    for sentence in re.split(r"(?<=[.!?。！？\n])\s*", text):
        said = bool(_ABOUT_ANSWERS.search(sentence))
        about, carried = said or carried, said
        if not about or _ONE_OFF.search(sentence) or _NOT_WISH.search(sentence):
            continue
        language = _language_note(sentence, [*drafts, *out])
        if language is not None:
            out.append(language)
        chinese = has_cjk(sentence)
        for pattern, english, zh in _ASPECTS:
            content = zh if chinese else english
            if pattern.search(sentence) and all(d.content != content for d in (*drafts, *out)):
                out.append(Draft(T.USER_PREFERENCE, content, 0.85, "answer_style", "answer style", False, ()))
    return out
