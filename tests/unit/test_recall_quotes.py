"""What a quote of a turn keeps: the sentences matching the question, then their neighbours while they fit
(the answer is often the sentence after the one holding the question's words)."""

from __future__ import annotations

from engram.core.text import estimate_tokens, terms
from engram.recall.evidence import best_sentences

TURN = ("We spent the morning at the harbour. I picked the Lindqvist agency for the adoption. "
        "They place children with single parents and that mattered to me. The ferry back was late.")


def test_the_sentence_after_a_match_fills_the_quote() -> None:
    quote = best_sentences(TURN, terms("Which adoption agency did I pick?"), 60)
    assert "Lindqvist agency" in quote
    assert "single parents" in quote  # the reason follows the matching sentence
    assert "agency for the adoption. They place" in quote  # neighbours are joined as written


def test_a_tight_limit_keeps_the_matching_sentence_alone() -> None:
    matching = "I picked the Lindqvist agency for the adoption."
    quote = best_sentences(TURN, terms("Which adoption agency did I pick?"), estimate_tokens(matching) + 1)
    assert quote == matching


def test_the_next_neighbour_comes_before_the_previous_one() -> None:
    limit = estimate_tokens("I picked the Lindqvist agency for the adoption.") + estimate_tokens(
        "They place children with single parents and that mattered to me.") + 2
    quote = best_sentences(TURN, terms("Which adoption agency did I pick?"), limit)
    assert "harbour" not in quote and "single parents" in quote


def test_a_gap_between_quoted_sentences_is_marked() -> None:
    text = "The agency is Lindqvist. We ate lunch by the water. It was a long day. The ferry to Lindqvist was late."
    quote = best_sentences(text, terms("Lindqvist"), 18)
    assert quote.startswith("The agency is Lindqvist.") and " … The ferry to Lindqvist was late." in quote


def test_no_matching_sentence_quotes_nothing_and_a_sentence_the_note_already_says_is_not_added() -> None:
    assert best_sentences(TURN, terms("favourite chess opening"), 60) == ""
    own = frozenset(terms("They place children with single parents and that mattered to me"))
    quote = best_sentences(TURN, terms("Which adoption agency did I pick?"), 60, skip=own)
    assert "single parents" not in quote and "Lindqvist" in quote
