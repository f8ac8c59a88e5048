"""The default processor context of both runtimes: rules, unless a model is configured.

With `ENGRAM_LLM_*` variables and an API key (see `engram.llm.settings`), the
configured tasks use an OpenAI-compatible model; otherwise, or if the
`openai` package is missing, the rule path, with a one-line notice.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.config_file import load_config
from engram.core.embedding import calibrated, embedder_kind, make_embedder
from engram.llm.settings import notice, settings_from_env
from engram.streams.processor import ProcessorContext
from engram.streams.rule_extractor import RuleExtractor
from engram.streams.summarizer import ExtractiveSummarizer


def default_context(config: EngramConfig | None = None, env: Mapping[str, str] | None = None) -> ProcessorContext:
    """The context of a runtime process; without a `config`, the config file's (`load_config`)."""
    if config is None:
        config = load_config(None, env)
    settings = settings_from_env(os.environ if env is None else env)
    if settings is not None:
        try:
            from engram.llm.context import llm_context
        except ImportError:
            notice("engram: LLM configured but the openai package is missing "
                   "(pip install 'engram[llm]'); using the rule path", logging.WARNING)
        else:
            return llm_context(settings, config)
    return rule_context(config, env)


def rule_context(config: EngramConfig = DEFAULT_CONFIG, env: Mapping[str, str] | None = None) -> ProcessorContext:
    """Rules, the configured embedder (`ENGRAM_EMBEDDER`, hashing by default) and the extractive summarizer."""
    embedder = make_embedder(embedder_kind(config.embedder.kind, env), config.embedder.dimensions)
    config = calibrated(config, embedder)
    return ProcessorContext(
        config=config,
        embedder=embedder,
        extractor=RuleExtractor(),
        summarizer=ExtractiveSummarizer(config.summary),
    )
