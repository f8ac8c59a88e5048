"""Counters of the access layer: `engram.core.metrics.Metrics` (kept at this path for importers)."""

from engram.core.metrics import Metrics

__all__ = ["Metrics"]
