"""The token budget of a recall: it bounds the whole memory context, not only the items' text.

Everything the context shows costs tokens: the reference-only clause, the section headings, the
`[type]` group tags, the `- ` prefixes, dates, conflict notes and quoted turns. The packer charges each
item what its rendering adds to the context (its line, plus the heading and group tag it opens, plus the
clause for the first item), measured with the one estimator, `estimate_tokens`. The estimate of a
concatenation is never more than the sum of the estimates of its parts, so the sum charged bounds the
rendered context; a final check renders the context and drops the last item while it is over (it never
is for the kinds rendered here; an item of another kind is charged as a `- ` line under its own heading).

Priority is the order of the items. The global cards, profile and summary keep their room when they fit
together, and the ranked memories and turns fill what is left; otherwise every item goes in
order while it fits. An item that does not fit is left out whole (a memory first loses the turns quoted
beside it), and packing goes on with the next, smaller one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engram.core.text import estimate_tokens

from .context import (RecalledItem, SECTIONS, group_tag, item_line, reference_clause, render_memory_section,
                      section_heading, section_words, without_context_turns)


FLOWING = frozenset({"memory", "turn"})
"""Kinds ranked against each other that fill what the other items leave; every other kind keeps its room."""


EDGE_TOKENS = 6
"""How far the charge of one item can exceed what it adds to the rendered context."""


@dataclass(frozen=True)
class Packing:
    """What a budget lets into the context, and the rendered context."""

    kept: list[RecalledItem]
    left_out: list[RecalledItem]
    section: str
    tokens: int
    """`estimate_tokens(section)`, never more than the budget."""


class _Ledger:
    """The tokens charged so far, and which sections and groups are already open."""

    def __init__(self, question: str, budget: int) -> None:
        self.question = question
        self.words = section_words(question)
        self.budget = budget
        self.used = 0
        self.kept: list[RecalledItem] = []
        self._opened: set[str] = set()
        self._tags: set[str] = set()
        self._measured: int | None = None

    def cost(self, item: RecalledItem) -> int:
        """What adding `item` adds to the rendered context, at most."""
        cost = estimate_tokens(item_line(item, self.words) + "\n")
        if not self.kept:
            cost += estimate_tokens(reference_clause(self.question))
        section = SECTIONS.get(item.kind, item.kind)
        if section == "summary" or section not in self._opened:  # every summary has its own heading
            cost += estimate_tokens(section_heading(section, self.words))
        tag = group_tag(item)
        if tag and tag not in self._tags:
            cost += estimate_tokens(tag + "\n")
        return cost

    def fits(self, item: RecalledItem) -> bool:
        """Whether the context with `item` stays within the budget. The charge is an upper bound, a few
        tokens over at most (rounding, the last line's newline): near the edge the context is measured."""
        bound = self.used + self.cost(item)
        if bound <= self.budget:
            return True
        if bound - EDGE_TOKENS > self.budget:
            return False
        exact = estimate_tokens(render_memory_section([*self.kept, item], self.question))
        if exact > self.budget:
            return False
        self._measured = exact
        return True

    def add(self, item: RecalledItem) -> RecalledItem:
        """Charge `item` (measured when `fits` just measured it)."""
        self.used = self._measured if self._measured is not None else self.used + self.cost(item)
        self._measured = None
        self._opened.add(SECTIONS.get(item.kind, item.kind))
        tag = group_tag(item)
        if tag:
            self._tags.add(tag)
        shown = replace(item, tokens=estimate_tokens(item_line(item, self.words)))
        self.kept.append(shown)
        return shown


def pack(items: Sequence[RecalledItem], question: str, budget: int) -> Packing:
    """The items that fit in `budget` tokens of rendered context, in priority order (see the module)."""
    ledger = _Ledger(question, budget)
    chosen: dict[int, RecalledItem] = {}
    reserve = _fits_together([i for i in items if i.kind not in FLOWING], question, budget)
    if reserve:
        for n, item in enumerate(items):
            if item.kind not in FLOWING:
                chosen[n] = ledger.add(item)
    for n, item in enumerate(items):
        if n in chosen:
            continue
        if not ledger.fits(item) and item.context_turns:
            item = without_context_turns(item)  # the memory keeps its place; its quotes go
        if ledger.fits(item):
            chosen[n] = ledger.add(item)
    kept = [chosen[n] for n in sorted(chosen)]
    return _checked(kept, items, question, budget)


def _fits_together(fixed: Sequence[RecalledItem], question: str, budget: int) -> bool:
    ledger = _Ledger(question, budget)
    for item in fixed:
        if not ledger.fits(item):
            return False
        ledger.add(item)
    return True


def _checked(kept: list[RecalledItem], items: Sequence[RecalledItem], question: str, budget: int) -> Packing:
    """Render, and drop the last item while the context is over the budget (the ledger is an upper bound
    for every kind it knows; this holds the bound for any other)."""
    section = render_memory_section(kept, question)
    tokens = estimate_tokens(section)
    while tokens > budget and kept:
        memories = [n for n, i in enumerate(kept) if i.kind in FLOWING]
        kept.pop(memories[-1] if memories else -1)
        section = render_memory_section(kept, question)
        tokens = estimate_tokens(section)
    kept_ids = {(i.kind, i.item_id) for i in kept}
    left_out = [i for i in items if (i.kind, i.item_id) not in kept_ids]
    return Packing(kept, left_out, section, tokens)
