"""The ingest fast paths give the same results as the plain code they replaced."""

from __future__ import annotations

import random
import re
import unicodedata
from pathlib import Path

from engram.core.embedding import _features, _flush_word
from engram.core.keystore import SqliteKeyStore
from engram.core.text import is_cjk_char
from engram.schemas.memory import MemoryType, is_single_valued, slot_key
from engram.streams.rules import Draft
from engram.streams.summarizer import _NEGATION_RE, _supersedes, _template


def _features_by_char(text: str) -> list[tuple[str, float]]:
    """The character loop `_features` was before it read runs with one regex."""
    folded = unicodedata.normalize("NFKC", text).lower()
    out: list[tuple[str, float]] = []
    word: list[str] = []
    cjk_prev = ""
    for ch in folded + " ":
        if is_cjk_char(ch):
            _flush_word(word, out)
            out.append((ch, 0.5))
            if cjk_prev:
                out.append((cjk_prev + ch, 1.0))
            cjk_prev = ch
        elif ch.isalnum():
            cjk_prev = ""
            word.append(ch)
        else:
            cjk_prev = ""
            _flush_word(word, out)
    return out


def test_hashing_features_match_the_character_loop() -> None:
    rnd = random.Random(5)
    pool = "abcXYZ 123_-.,'我们喜欢吃香菜！？ｱｲｳ가나다é\u0301²½ⅫΩ\n\tśćż"
    texts = ["", "我不吃香菜", "I love Rust and 北京烤鸭!", "running runs ran", "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ"]
    texts += ["".join(rnd.choice(pool) for _ in range(rnd.randint(0, 30))) for _ in range(3000)]
    for text in texts:
        assert _features(text) == _features_by_char(text), text


def _supersedes_plain(draft: Draft, item: str) -> bool:
    if item == draft.content:
        return False
    if is_single_valued(slot_key(draft.type, draft.attribute)) and item.startswith(_template(draft.content)):
        return True
    topic = draft.topic or ""
    if not topic or len(topic) < 2 or topic.lower() not in item.lower():
        return False
    if not re.fullmatch(r"[\u4e00-\u9fff]+", topic) and not re.search(rf"\b{re.escape(topic)}\b", item, re.IGNORECASE):
        return False
    return bool(_NEGATION_RE.search(item)) != draft.negated


def test_supersede_test_built_once_matches_the_plain_one() -> None:
    drafts = [
        Draft(MemoryType.USER_PREFERENCE, "User loves Go", 0.8, None, "Go", False),
        Draft(MemoryType.USER_PREFERENCE, "User no longer likes go", 0.8, None, "go", True),
        Draft(MemoryType.USER_PREFERENCE, "用户喜欢香菜", 0.8, None, "香菜", False),
        Draft(MemoryType.USER_PROFILE, "User lives in Berlin", 0.9, "location", None, False),
        Draft(MemoryType.USER_PROFILE, "用户住在北京", 0.9, "location", None, False),
        Draft(MemoryType.USER_FACT, "User has a cat", 0.45, None, "c", False),
    ]
    items = ["User loves Go", "User doesn't like Go anymore", "User loves Golang", "用户不吃香菜", "用户喜欢香菜",
             "User lives in Paris", "用户住在上海", "User likes go.", "User has a dog", "C is fun"]
    for draft in drafts:
        for item in items:
            assert _supersedes(draft, item) == _supersedes_plain(draft, item), (draft, item)


def test_prepare_makes_each_new_owner_one_durable_key(tmp_path: Path) -> None:
    store = SqliteKeyStore(tmp_path / "keys.db")
    existing = store.current("t/old")
    store.prepare(["t/a", "t/b", "t/a", "t/old"])
    keys = {owner: store.current(owner) for owner in ("t/a", "t/b", "t/old")}
    assert keys["t/old"] == existing
    assert keys["t/a"] != keys["t/b"]
    assert store.count() == 3
    store.close()
    reopened = SqliteKeyStore(tmp_path / "keys.db")
    assert {owner: reopened.current(owner) for owner in keys} == keys
    assert reopened.count() == 3
    reopened.close()
