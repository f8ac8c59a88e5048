"""The extraction-quality benchmark scores what it says it scores (no numbers are asserted)."""

from __future__ import annotations

from bench.extraction import SPLITS, Case, evaluate, load_cases, term_matches


def _case(turns: list[str], expect: list[dict]) -> Case:
    return Case(id="c1", split="dev", lang="en", kind="basic", turns=turns, expect=expect)


def test_terms_match_whole_latin_words_prefixes_and_chinese_substrings() -> None:
    assert term_matches("Go", "User loves Go") and not term_matches("Go", "User goes home")
    assert term_matches("freelanc*", "User is a freelancer") and term_matches("温哥华", "用户住在温哥华")
    assert term_matches("two kids|children", "User has children")


def test_a_verbatim_copy_does_not_count_as_a_memory_and_must_nots_are_scored() -> None:
    case = _case(["U: I'm a nurse working nights.", "U: My sister lives in Paris."], [
        {"has": "user_profile.occupation", "terms": ["nurse"]},
        {"not": ["Paris"], "type": "user_fact.location"},
        {"none": True},
    ])
    by_check = {o.check: o.ok for o in evaluate([case])}
    assert by_check == {"has": True, "not": True, "none": False}


def test_both_corpus_splits_load_and_are_large_enough() -> None:
    dev, held = load_cases([SPLITS["dev"]]), load_cases([SPLITS["heldout"]])
    assert len(dev) + len(held) >= 150 and len(held) >= 50
    assert {c.split for c in dev} == {"dev"} and {c.split for c in held} == {"heldout"}
    assert {c.lang for c in dev + held} == {"en", "zh", "mixed"}
    assert not {c.id for c in dev} & {c.id for c in held}
