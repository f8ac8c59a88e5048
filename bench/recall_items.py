"""What the recall benchmarks rank: recalled items (or raw turns) with their provenance and tokens.

An item's provenance is the set of message ids it came from: its
`source_message_ids`, or its own `item_id` when that names a recorded message
(an item that IS a turn). A turn quoted beside a memory (`context_turns`)
follows it as an item of its own, with its one message id and its own tokens,
as a raw turn would be; a quote of the memory's own source turn is the same
piece of evidence, so it is part of the memory's item (text and tokens). An item with more than `MAX_EVIDENCE_SPAN` distinct
source turns (a summary-like item) takes its rank and its tokens but counts for
no evidence. Tokens are Engram's one estimate (`engram.core.text.estimate_tokens`).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from engram.core.text import estimate_tokens

MAX_EVIDENCE_SPAN = 3


@dataclass(frozen=True)
class RankedItem:
    provenance: frozenset[str]
    tokens: int
    text: str = ""

    @property
    def counts_as_evidence(self) -> bool:
        return 0 < len(self.provenance) <= MAX_EVIDENCE_SPAN

    @property
    def evidence(self) -> frozenset[str]:
        """The message ids this item can stand for as evidence (none for a summary-like item)."""
        return self.provenance if self.counts_as_evidence else frozenset()


def item_provenance(item: Any, known_ids: Collection[str] | None = None) -> frozenset[str]:
    sources = frozenset(str(m) for m in getattr(item, "source_message_ids", ()) or ())
    if not sources and known_ids is not None and getattr(item, "item_id", None) in known_ids:
        return frozenset({str(item.item_id)})
    return sources


def ranked_items(items: Sequence[Any], known_ids: Collection[str] | None = None,
                 kinds: Collection[str] | None = None) -> list[RankedItem]:
    """Recalled items in recall order (of `kinds`, or every kind), each followed by the turns quoted beside it."""
    out: list[RankedItem] = []
    for i in items:
        if kinds is not None and i.kind not in kinds:
            continue
        provenance = item_provenance(i, known_ids)
        quotes = list(getattr(i, "context_turns", ()))
        own = [t for m, t in quotes if m in provenance]  # its own source turn's words: the same evidence
        text = "\n".join([i.text, *own])
        out.append(RankedItem(provenance, sum(estimate_tokens(t) for t in [i.text, *own]), text))
        out.extend(RankedItem(frozenset({m}), estimate_tokens(t), t) for m, t in quotes if m not in provenance)
    return out


def engram_context(candidate_limit: int | None, deadline_ms: float, embedder: str | None = None,
                   context_turns: int = 0, profile: bool = True) -> Any:
    """The runtime context of a benchmark run: the product's config with the given recall overrides
    (`profile` False: no standing profile pushed, `recall.profile_share` 0)."""
    from engram.core.config import DEFAULT_CONFIG
    from engram.runtime.context import default_context

    update: dict[str, Any] = {"deadline_ms": deadline_ms, "context_turns_top": context_turns}
    if not profile:
        update["profile_share"] = 0.0
    if candidate_limit:
        update["candidate_limit"] = candidate_limit
    config = DEFAULT_CONFIG.model_copy(update={"recall": DEFAULT_CONFIG.recall.model_copy(update=update)})
    env = dict(os.environ)
    if embedder:
        env["ENGRAM_EMBEDDER"] = embedder
    return default_context(config, env)
