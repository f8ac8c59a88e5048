"""A processor context whose adapters call an OpenAI-compatible endpoint.

Each task uses the model only when it has one (`ENGRAM_LLM_MODEL_<TASK>`);
a task set to `off` keeps its rule adapter. All adapters share one client, so
the concurrency limit and the token budget hold across tasks.
"""

from __future__ import annotations

import openai

from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.embedding import Embedder, calibrated, embedder_kind, make_embedder
from engram.core.ports import Extractor, Summarizer
from engram.streams.processor import ProcessorContext
from engram.streams.rule_extractor import RuleExtractor
from engram.streams.summarizer import ExtractiveSummarizer

from .client import ModelClient
from .embedder import OpenAIEmbedder
from .extractor import LLMExtractor
from .judge import LLMJudge
from .settings import LLMSettings
from .summarizer import LLMSummarizer


def llm_context(settings: LLMSettings, config: EngramConfig = DEFAULT_CONFIG,
                client: openai.OpenAI | None = None) -> ProcessorContext:
    """Model adapters for the configured tasks, rule adapters for the others."""
    shared = ModelClient(settings, client)
    embedder = _embedder(shared, settings, config)
    config = calibrated(config, embedder)
    return ProcessorContext(
        config=config,
        embedder=embedder,
        extractor=_extractor(shared, settings),
        judge=LLMJudge(shared, settings.judge_model) if settings.judge_model else None,
        summarizer=_summarizer(shared, settings, config),
    )


def _extractor(shared: ModelClient, settings: LLMSettings) -> Extractor:
    rules = RuleExtractor()
    return LLMExtractor(shared, settings.extract_model, rules) if settings.extract_model else rules


def _summarizer(shared: ModelClient, settings: LLMSettings, config: EngramConfig) -> Summarizer:
    if settings.summarize_model:
        return LLMSummarizer(shared, settings.summarize_model, config.summary)
    return ExtractiveSummarizer(config.summary)


def _embedder(shared: ModelClient, settings: LLMSettings, config: EngramConfig) -> Embedder:
    if settings.embed_model:
        return OpenAIEmbedder(shared, settings.embed_model, settings.embed_dimensions)
    return make_embedder(embedder_kind(config.embedder.kind), config.embedder.dimensions)


__all__ = ["llm_context"]
