"""When the distributed projector sends its buffered events to ClickHouse (and then commits)."""

from __future__ import annotations

import pytest

from engram.distributed.projector import ANALYTICS_GAP, ProjectorSettings, insert_due


def test_caught_up_the_projector_waits_the_gap_between_two_inserts() -> None:
    settings = ProjectorSettings(bootstrap="unused")
    assert settings.analytics_gap == ANALYTICS_GAP == 0.5
    assert not insert_due(settings, since=0.1, events=40, idle=True, final=False)  # idle polls come every 20 ms
    assert insert_due(settings, since=0.5, events=40, idle=True, final=False)
    assert not insert_due(settings, since=0.9, events=40, idle=False, final=False)  # busy: the interval
    assert insert_due(settings, since=1.0, events=40, idle=False, final=False)


def test_a_full_buffer_or_the_end_inserts_at_once_and_a_short_interval_halves_the_gap() -> None:
    settings = ProjectorSettings(bootstrap="unused", analytics_interval=0.2, analytics_max_events=100)
    assert settings.analytics_gap == pytest.approx(0.1)
    assert insert_due(settings, since=0.0, events=100, idle=False, final=False)
    assert insert_due(settings, since=0.0, events=1, idle=True, final=True)
    assert not insert_due(settings, since=0.05, events=1, idle=True, final=False)
    assert insert_due(settings, since=0.1, events=1, idle=True, final=False)
