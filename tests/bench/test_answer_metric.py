"""The answer metric shared by the recall benchmarks: content words, dates in two spellings, context size."""

from __future__ import annotations

from bench.answer_metric import answer_found, answer_units, context_size, fitting_text, rate
from bench.locomo import Context, RankedItem, prefix_context, score_context
from bench.locomo_data import Question
from engram.core.text import estimate_tokens


def test_every_content_word_must_be_in_the_context() -> None:
    assert answer_found("Oliver, Luna, Bailey", "Her pets are Oliver, Luna and Bailey.") is True
    assert answer_found("Oliver, Luna, Bailey", "Her pets are Oliver and Luna.") is False
    assert answer_found("a coffee shop in the city", "They met at the coffee shop downtown in the city") is True
    assert [u.word for u in answer_units("under my bed")] == ["bed"]


def test_words_are_folded_alike_on_both_sides() -> None:
    assert answer_found("Sunsets", "she paints a sunset") is True
    assert answer_found("two weeks", "it took 2 week") is True
    assert answer_found("Charlotte's Web", "reading charlotte web again") is True
    assert answer_found("cello", "a cellist") is False  # whole words only


def test_a_date_matches_in_iso_or_in_day_month_year_spelling() -> None:
    assert answer_found("7 May 2023", "- went to a support group (2023-05-07)") is True
    assert answer_found("7 May 2023", "On 7 May, 2023 she went") is True
    assert answer_found("May 7, 2023", "on 7 May 2023") is True
    assert answer_found("7 May 2023", "(2023-05-17)") is False
    assert answer_found("7 May 2023", "17 May 2023") is False
    assert answer_found("The week before 9 June 2023", "2023-06-09 Mel: I ran a charity race last week") is True
    assert answer_found("The week before 9 June 2023", "2023-06-09 Mel: I ran a charity race") is False
    assert answer_found("June 2023", "(2023-06-20)") is True
    assert answer_found("13 August", "(2023-08-13)") is True
    assert answer_found(2022, "since 2022-03-01") is True


def test_an_answer_without_content_words_is_not_scored() -> None:
    assert answer_found("Yes.", "anything") is None
    assert answer_found("Likely no", "anything") is None
    assert rate([True, False, None, True]) == round(2 / 3, 4)
    assert rate([None]) is None


def test_context_size_and_the_budget_walk() -> None:
    assert context_size([900, 1100, 1000], 1000) == {"budget": 1000, "mean_tokens": 1000.0, "max_tokens": 1100,
                                                     "over_budget": 1}
    texts = ["a" * 400, "b" * 400, "c" * 8, "d" * 4000]
    taken, context = fitting_text(texts, 250)
    assert taken == [0, 1, 2] and estimate_tokens(context) <= 250
    assert fitting_text(texts, 100)[0] == []  # the walk stops at the first text that does not fit


def test_locomo_scores_the_answer_in_the_budgeted_context() -> None:
    q = Question(0, "What is the dog's name?", 4, frozenset({"D1:1"}), "Biscuit")
    hit = RankedItem(frozenset({"D1:1"}), 10, "2023-05-08 Ann: I adopted a dog named Biscuit")
    other = RankedItem(frozenset({"D1:2"}), 10, "2023-05-08 Bo: What breed?")
    found = score_context(prefix_context([other, hit]), q)
    assert found["answer_at_1000tok"] is True and found["any_in_context"] is True
    assert found["context_tokens"] == estimate_tokens(other.text + "\n" + hit.text)
    missed = score_context(Context((other,), other.text), q)
    assert missed["answer_at_1000tok"] is False and missed["any_in_context"] is False
    big = RankedItem(frozenset({"D9:9"}), 995, "x" * 3980)
    assert score_context(prefix_context([big, hit]), q)["answer_at_1000tok"] is False  # the hit does not fit
