"""The default processor context of the embedded runtime: rules, no model."""

from __future__ import annotations

from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.embedding import HashingEmbedder
from engram.streams.processor import ProcessorContext
from engram.streams.rule_extractor import RuleExtractor
from engram.streams.summarizer import ExtractiveSummarizer


def default_context(config: EngramConfig = DEFAULT_CONFIG) -> ProcessorContext:
    return ProcessorContext(
        config=config,
        embedder=HashingEmbedder(config.embedder.dimensions),
        extractor=RuleExtractor(),
        summarizer=ExtractiveSummarizer(config.summary),
    )
