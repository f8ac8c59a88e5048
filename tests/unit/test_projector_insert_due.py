"""When the distributed projector sends its buffered events to ClickHouse (and then commits)."""

from __future__ import annotations

import pytest

from engram.distributed.projector import ANALYTICS_QUIET, ProjectorSettings, insert_due


def test_a_steady_stream_inserts_every_interval_and_a_quiet_one_at_once() -> None:
    settings = ProjectorSettings(bootstrap="unused")
    assert settings.analytics_quiet == ANALYTICS_QUIET == 0.25
    # a poll that found nothing, between two records of a steady stream: no insert before the interval
    assert not insert_due(settings, since=0.6, events=40, quiet=0.02, final=False)
    assert not insert_due(settings, since=0.9, events=40, quiet=0.0, final=False)
    assert insert_due(settings, since=1.0, events=40, quiet=0.0, final=False)
    # the stream went quiet: what is buffered goes in without waiting out the interval
    assert insert_due(settings, since=0.6, events=40, quiet=0.25, final=False)
    # quiet, but the last insert was just now: not again on every empty poll
    assert not insert_due(settings, since=0.1, events=0, quiet=3.0, final=False)


def test_a_full_buffer_or_the_end_inserts_at_once_and_a_short_interval_shortens_the_quiet() -> None:
    settings = ProjectorSettings(bootstrap="unused", analytics_interval=0.2, analytics_max_events=100)
    assert settings.analytics_quiet == pytest.approx(0.1)
    assert insert_due(settings, since=0.0, events=100, quiet=0.0, final=False)
    assert insert_due(settings, since=0.0, events=1, quiet=0.0, final=True)
    assert not insert_due(settings, since=0.15, events=1, quiet=0.05, final=False)
    assert insert_due(settings, since=0.1, events=1, quiet=0.1, final=False)
