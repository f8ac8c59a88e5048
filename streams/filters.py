"""Cheap pre-extraction filters (a basic one, then a heuristic one) and the signal detectors they share.

`filter_turn` answers "is this turn worth extracting from?" with a skip
reason, or None when it passes. The detectors (`has_user_signal`,
`has_decision_signal`, `is_chit_chat`) are also used by the rule extractor and
the guard, so the three agree on what counts as a confirmation.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.core.config import FilterConfig
from engram.core.text_caches import registered
from engram.schemas.events import SkipReason
from engram.schemas.memory import Role
from engram.streams.rules.commitments import affirmed_commitment

_DEFAULT = FilterConfig()

_ZH_USER_SIGNALS = ("我", "喜欢", "希望", "想要", "计划", "以后", "不要", "需要", "偏好", "目标", "约束",
                    "改", "换成", "不再", "搬到", "现在", "说错", "打错", "写错", "记错", "搞错", "弄错", "更正", "纠正", "口误")
"""First-person and intent signals, plus the change signals a correction opens with ("最近改喝豆浆了", "说错了，不是X，是Y")."""
# English signals are matched on lower-cased text, without a leading \b: Python's
# regex engine only uses its fast first-character scan for such patterns, so
# the left word boundary is checked by hand in `_has_word`.
_EN_USER_SIGNAL = re.compile(
    r"(?:i|i'm|im|i've|i'd|i'll|me|my|mine|we|our|like|love|hate|prefer|want|plan|planning|never|always|"
    r"don't|dont|do not|need|goal|avoid|usually|favorite|favourite|now|switched|changed|instead|rather than|moved|anymore|no longer)\b"
)

_ZH_DECISION_SIGNALS = ("已确认", "确认：", "确认:", "最终", "确定", "就按", "采用", "执行", "可以开始", "没问题", "决定", "敲定", "约定", "定在", "就定")
_EN_DECISION_SIGNAL = re.compile(
    r"(?:ok|okay|confirmed|decided|agreed|final|finalized|settled|approved|will do|sounds good|"
    r"no problem|go ahead|locked in|go with|proceed with|stick with)\b|\bdecision\s*:"
)

_CHIT_CHAT_PHRASES = frozenset(
    """哈 哈哈 呵呵 嘿嘿 嗯 嗯嗯 哦 噢 啊 好 好的 好吧 好哒 好滴 行 可以 收到 明白 知道了 了解 懂了
    继续 谢谢 多谢 感谢 谢啦 辛苦了 不客气 没事 再见 拜拜 晚安 早安 早上好 你好 您好 在吗 对 是的 嗯呢
    ok okay k kk thanks thank thx ty cool nice great yes yeah yep no nope sure fine hi hello hey bye
    goodbye lol haha hahaha hmm got it you welcome np alright right please continue go on see
    soon later so much very lot a 你 您 啦 呀 吧 呢 嘛 哒 了 哟 噢耶""".split()
)
_CHIT_CHAT_SPLIT = re.compile(r"[\s\W_]+", re.UNICODE)
_MAX_CHIT_CHAT_CHARS = 48
_ZH_LAUGH = re.compile(r"^(?:[哈呵嘿嘻]+|6+|[.。!！~～]+)$")


def _has_word(pattern: re.Pattern[str], low: str) -> bool:
    for m in pattern.finditer(low):
        start = m.start()
        if start == 0 or not low[start - 1].isalnum():
            return True
    return False


def has_user_signal(text: str) -> bool:
    """A first-person or intent signal (zh keyword or en word)."""
    for signal in _ZH_USER_SIGNALS:
        if signal in text:
            return True
    return _has_word(_EN_USER_SIGNAL, text.lower())


@registered
@lru_cache(maxsize=4096)
def has_decision_signal(text: str) -> bool:
    """A confirmation/decision signal in assistant text ("已确认", "we'll go with"…), or an accepted commitment
    ("Yes - I'll track the invoices in a sheet", "行，我每周三帮你整理账单")."""
    for signal in _ZH_DECISION_SIGNALS:
        if signal in text:
            return True
    return _has_word(_EN_DECISION_SIGNAL, text.lower()) or affirmed_commitment(text)


def is_chit_chat(text: str) -> bool:
    """True if the text is made only of pleasantries, acknowledgements or laughter."""
    if len(text) > _MAX_CHIT_CHAT_CHARS:
        return False
    words = [w for w in _CHIT_CHAT_SPLIT.split(text.lower()) if w]
    if not words or len(words) > 6:
        return not words
    return all(_is_chit_chat_word(w) for w in words)


def _is_chit_chat_word(word: str) -> bool:
    if word in _CHIT_CHAT_PHRASES or _ZH_LAUGH.match(word):
        return True
    # An unsegmented Chinese run such as "好的谢谢" or "哈哈好的".
    return _covered_by_phrases(word)


def _covered_by_phrases(run: str) -> bool:
    i = 0
    while i < len(run):
        for size in (3, 2, 1):
            if run[i : i + size] in _CHIT_CHAT_PHRASES:
                i += size
                break
        else:
            return False
    return True


def filter_turn(role: Role, text: str, config: FilterConfig = _DEFAULT) -> SkipReason | None:
    """Basic filter, then heuristic filter. Returns the skip reason, or None to extract."""
    stripped = text.strip()
    if role == "user":
        return _filter_user(stripped, config)
    return _filter_assistant(stripped, config)


_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def weighted_length(text: str) -> int:
    """Length with each Chinese character counted twice: "我喜欢猫" says as much as "I like cats"."""
    return len(text) + len(_CJK_RUN.findall(text))


def _filter_user(text: str, config: FilterConfig) -> SkipReason | None:
    if weighted_length(text) < config.min_user_chars:
        return "too_short"
    if is_chit_chat(text):
        return "chit_chat"
    if weighted_length(text) > config.user_pass_length or has_user_signal(text):
        return None
    return "no_signal"


def _filter_assistant(text: str, config: FilterConfig) -> SkipReason | None:
    if weighted_length(text) < config.min_assistant_chars:  # a short Chinese confirmation says as much as English
        return "too_short"
    if is_chit_chat(text):
        return "chit_chat"
    if len(text) > config.assistant_pass_length or has_decision_signal(text):
        return None
    return "no_decision_signal"
