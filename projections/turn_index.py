"""In-process keyword index of one user's recorded turns (user and assistant, redacted): BM25 on
Engram's terms, the same ranking as the memories' keyword channel, so a turn no note was extracted
from is still found by what was said in it. A turn is also found by the turn it answers (the one just
before it in its session, said by the other role): "28. Kg3 would be my move" by the question about
move 27, as a memory is found by the turn it answers."""

from __future__ import annotations

from engram.core.text import terms

from .hybrid_index import KeywordIndex
from .ports import RecentTurn, TurnHit


def turn_key(session: str, message_id: str) -> str:
    return f"{session}\x1f{message_id}"


class TurnIndex:
    """The turns of one (tenant, user), searchable by keywords. Not thread-safe."""

    def __init__(self) -> None:
        self.turns: dict[str, RecentTurn] = {}
        self._keywords = KeywordIndex()
        self._last: dict[str, RecentTurn] = {}
        """The latest turn of each session, by position."""

    def __len__(self) -> int:
        return len(self.turns)

    def put(self, turn: RecentTurn) -> None:
        """Index a turn once (a replayed turn is the same turn)."""
        key = turn_key(turn.session_id, turn.message_id)
        if key in self.turns:
            return
        self.turns[key] = turn
        last = self._last.get(turn.session_id)
        answered = answered_turn(last, turn)
        if last is None or turn.position > last.position:
            self._last[turn.session_id] = turn
        self._keywords.add(key, terms(searchable_turn(turn, answered)))

    def search(self, query: str, limit: int) -> list[TurnHit]:
        found = self._keywords.search(query, limit)
        hits = [TurnHit(self.turns[key], score) for key, score in found.items()]
        hits.sort(key=lambda h: (-h.keyword_score, h.turn.position))
        return hits


def answered_turn(previous: RecentTurn | None, turn: RecentTurn) -> RecentTurn | None:
    """The turn `turn` answers: the previous turn of its session when the other role said it."""
    if previous is None or previous.role == turn.role or previous.position > turn.position:
        return None
    return previous


def searchable_turn(turn: RecentTurn, answered: RecentTurn | None) -> str:
    """What a turn is found by: its own text, counted twice so that it outranks the turn that answers it,
    and the text of the turn it answers."""
    own = f"{turn.content} {turn.content}"
    return own if answered is None else f"{own} {answered.content}"
