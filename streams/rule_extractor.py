"""The embedded default extractor: deterministic rules for Chinese and English."""

from __future__ import annotations

from engram.core.ports import Extraction
from engram.schemas.events import TurnRecorded
from engram.schemas.memory import Candidate

from .filters import has_decision_signal
from .rules import Draft, extract_drafts
from .rules.common import shorten

_SPEAKER_KEYS = ("speaker", "speaker_name")


class RuleExtractor:
    """Extractor port implementation with no model: clause splitting plus patterns.

    User turns give profile facts (with single-valued slot attributes),
    preferences (with topic and negation), goals, constraints and facts; an
    informative statement that matches no specific rule is kept verbatim as a
    low-confidence `user_fact`. Assistant turns give decisions, constraints,
    plans and actions, and only when the text carries a confirmation signal.
    """

    name = "rule"

    def extract(self, turn: TurnRecorded) -> Extraction:
        signal = turn.role == "assistant" and has_decision_signal(turn.content)
        drafts = extract_drafts(turn.role, turn.content, signal)
        if not drafts:
            return _EMPTY
        speaker = speaker_of(turn)
        source = (turn.message_id,)
        return Extraction(tuple(_candidate(d, source, speaker) for d in drafts), "rule")


_EMPTY = Extraction((), "rule")


def _max_length(field: str) -> int:
    """The schema's limit on a candidate field, read from the model so the two cannot drift."""
    return next(m.max_length for m in Candidate.model_fields[field].metadata if getattr(m, "max_length", None))


CONTENT_LIMIT = _max_length("content")
"""A draft longer than a candidate may hold (a turn of one phrase said a thousand times) is cut to fit, at a
word boundary, rather than failing the turn."""


def speaker_of(turn: TurnRecorded) -> str:
    """The speaker's name from the turn's metadata, if the platform sent one."""
    for key in _SPEAKER_KEYS:
        value = turn.metadata.get(key)
        if value:
            return value.strip()
    return ""


def _candidate(draft: Draft, source: tuple[str, ...], speaker: str) -> Candidate:
    entities = draft.entities
    if speaker and speaker not in entities:
        entities = (speaker, *entities)
    return Candidate(
        type=draft.type,
        attribute=draft.attribute,
        content=shorten(draft.content, CONTENT_LIMIT),
        confidence=draft.confidence,
        entities=entities,
        keywords=draft.keywords,
        topic=draft.topic or None,
        negated=draft.negated,
        source_message_ids=source,
    )
