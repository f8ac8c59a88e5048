"""In-process keyword index of one user's recorded turns (user and assistant, redacted): BM25 on
Engram's terms, the same ranking as the memories' keyword channel, so a turn no note was extracted
from is still found by what was said in it."""

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

    def __len__(self) -> int:
        return len(self.turns)

    def put(self, turn: RecentTurn) -> None:
        """Index a turn once (a replayed turn is the same turn)."""
        key = turn_key(turn.session_id, turn.message_id)
        if key in self.turns:
            return
        self.turns[key] = turn
        self._keywords.add(key, terms(turn.content))

    def search(self, query: str, limit: int) -> list[TurnHit]:
        found = self._keywords.search(query, limit)
        hits = [TurnHit(self.turns[key], score) for key, score in found.items()]
        hits.sort(key=lambda h: (-h.keyword_score, h.turn.position))
        return hits
