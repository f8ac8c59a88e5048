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

A profile entry the question also ranked among the memories (a `profile` item and a `memory` item of one
id) is shown once: its profile room is held with the others', given back when the ranked memory goes in
(with its date and quotes), and used by the profile line when it does not.
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
        self.held = 0
        """Room kept for items not placed yet (a profile entry waiting on its ranked twin)."""
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
        bound = self.used + self.held + self.cost(item)
        if bound <= self.budget:
            return True
        if bound - EDGE_TOKENS > self.budget:
            return False
        exact = estimate_tokens(render_memory_section([*self.kept, item], self.question))
        if exact + self.held > self.budget:
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
    twins = _profile_twins(items)
    waiting = set(twins.values())
    held: dict[int, int] = {}
    reserve = _fits_together([i for i in items if i.kind not in FLOWING], question, budget)
    if reserve:
        for n, item in enumerate(items):
            if item.kind in FLOWING:
                continue
            if n in waiting:  # its room is held until its ranked twin is placed or not
                held[n] = ledger.cost(item)
                ledger.held += held[n]
            else:
                chosen[n] = ledger.add(item)
    shown: set[str] = set()
    quoted = {text for item in chosen.values() for _, text in item.context_turns}
    for n, item in enumerate(items):
        if n in chosen or n in held or (item.kind in _ENTRY and item.item_id in shown):
            continue
        if item.context_turns and all(text in quoted for _, text in item.context_turns):
            item = without_context_turns(item)  # several notes of one turn: its words are quoted once
        twin = twins.get(n)
        release = held.pop(twin, 0) if twin is not None else 0
        ledger.held -= release
        placed = _place(ledger, item)
        if placed is not None:
            chosen[n] = placed
            shown.add(item.item_id)
            quoted.update(text for _, text in placed.context_turns)
        elif twin is not None and release:
            held[twin] = release
            ledger.held += release
    for n in sorted(held):  # the ranked twin did not go in: the entry takes its profile room
        ledger.held -= held.pop(n)
        if items[n].item_id not in shown and ledger.fits(items[n]):
            chosen[n] = ledger.add(items[n])
    kept = [chosen[n] for n in sorted(chosen)]
    return _checked(kept, items, question, budget)


_ENTRY = frozenset({"profile", "memory"})


def _profile_twins(items: Sequence[RecalledItem]) -> dict[int, int]:
    """Position of a ranked memory -> position of the `profile` item of the same entry."""
    profile = {i.item_id: n for n, i in enumerate(items) if i.kind == "profile"}
    return {n: profile[i.item_id] for n, i in enumerate(items) if i.kind in FLOWING and i.item_id in profile}


def _place(ledger: _Ledger, item: RecalledItem) -> RecalledItem | None:
    """Charge `item` if it fits (a memory without its quotes when only that fits); None when it does not."""
    if not ledger.fits(item) and item.context_turns:
        item = without_context_turns(item)  # the memory keeps its place; its quotes go
    return ledger.add(item) if ledger.fits(item) else None


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
    entries = {i.item_id for i in kept if i.kind in _ENTRY}  # one entry shown either way is not left out
    left_out = [i for i in items if (i.kind, i.item_id) not in kept_ids
                and not (i.kind in _ENTRY and i.item_id in entries)]
    return Packing(kept, left_out, section, tokens)


def ranked_within(items: list[RecalledItem], wanted: int) -> list[RecalledItem]:
    """The items with at most `wanted` ranked ones (notes and turns), the best: the ranking is read deeper
    than that so that the turns the short-term window shows take no ranked slot."""
    ranked = 0
    out = []
    for item in items:
        if item.kind in FLOWING:
            ranked += 1
            if ranked > wanted:
                continue
        out.append(item)
    return out
