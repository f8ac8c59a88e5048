"""The chain gate holds out-of-order records, but never more bytes than a progress value can carry."""

from __future__ import annotations

import pytest

from engram.distributed import chain
from engram.distributed.chain import ChainGate, link_header
from engram.distributed.records import Inbound
from engram.distributed.tracking import Origin


def _record(offset: int, prev: int, size: int) -> Inbound:
    return Inbound("candidates", 0, offset, b"t/u", b"x" * size, headers=(link_header((prev,)),))


def test_held_records_beyond_the_byte_budget_are_released_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain, "MAX_HELD_BYTES", 10_000)
    gate = ChainGate({"heads": {"turns:0": [1]}})
    released = []
    for position in range(10, 16):  # each waits for position - 1, which never comes
        released += list(gate.admit(_record(position, position - 1, 3_000), Origin("turns:0", (position,))))
    assert sum(len(h.record.value or b"") for h in gate.held) <= 10_000
    assert [r.offset for r in released] == sorted(r.offset for r in released) and released[0].offset == 10
    assert len(gate.held) + len(released) == 6
