"""Moved to `engram.streams.context` (both runtimes use it); kept so old imports keep working."""

from engram.streams.context import default_context, rule_context

__all__ = ["default_context", "rule_context"]
