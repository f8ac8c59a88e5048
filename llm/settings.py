"""LLM configuration from the environment.

The model path is opt-in: it is taken only when an Engram LLM variable says
so (`ENGRAM_LLM_BASE_URL`, `ENGRAM_LLM_API_KEY` or a `ENGRAM_LLM_MODEL*`) and
an API key resolves (`ENGRAM_LLM_API_KEY`, else `OPENAI_API_KEY`). An ambient
`OPENAI_API_KEY` alone never sends chat turns to a model. `ENGRAM_LLM=off`
turns everything off. Per task, a model named `off` keeps that task on rules.

| variable | default | meaning |
|---|---|---|
| ENGRAM_LLM | auto | `off` disables the model path |
| ENGRAM_LLM_BASE_URL | (OpenAI) | any OpenAI-compatible endpoint (vLLM, Ollama, DashScope, DeepSeek...) |
| ENGRAM_LLM_API_KEY / OPENAI_API_KEY | - | the key (local endpoints accept any non-empty value) |
| ENGRAM_LLM_MODEL | gpt-4o-mini | chat model for every task without its own |
| ENGRAM_LLM_MODEL_EXTRACT / _JUDGE / _SUMMARIZE | ENGRAM_LLM_MODEL | per-task chat model, or `off` |
| ENGRAM_LLM_MODEL_EMBED | off | embedding model; unset keeps the built-in hashing embedder |
| ENGRAM_LLM_EMBED_DIMENSIONS | probed | vector size (sent as `dimensions` when set) |
| ENGRAM_LLM_EMBED_BATCH | 64 | texts per embeddings request |
| ENGRAM_LLM_TIMEOUT_S | 20 | per-request timeout |
| ENGRAM_LLM_RETRIES | 1 | retries after a failed attempt (then the rule path) |
| ENGRAM_LLM_BACKOFF_S | 0.5 | first backoff; doubles per retry; 429 Retry-After honoured up to 10 s |
| ENGRAM_LLM_CONCURRENCY | 4 | requests in flight at once, per process |
| ENGRAM_LLM_TPM | 0 | tokens-per-minute budget (0 = unlimited); over budget the rule path is used |
| ENGRAM_LLM_JSON_MODE | auto | `response_format`: auto / on = `json_object` (auto drops it if the endpoint rejects it), schema = the task's JSON schema (constrained decoding; falls back to `json_object`, then none, if rejected), off |
| ENGRAM_LLM_CONTEXT_TOKENS | 0 | the model's context window; prompts are clipped to fit it with the answer (0 = no limit) |
| ENGRAM_LLM_MAX_TOKENS | 800 | tokens an answer may take |
| ENGRAM_LLM_ANSWER_CACHE | 10000 | chat answers remembered per process, by exact prompt (0 = off) |
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger("engram.llm")

OFF = "off"
DEFAULT_MODEL = "gpt-4o-mini"
JsonMode = Literal["auto", "on", "off", "schema"]


class LLMSettings(BaseModel):
    """Everything the model adapters need: endpoint, key, models per task and limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    api_key: str = Field(min_length=1, repr=False)
    extract_model: str | None = DEFAULT_MODEL
    judge_model: str | None = DEFAULT_MODEL
    summarize_model: str | None = DEFAULT_MODEL
    embed_model: str | None = None
    embed_dimensions: int | None = Field(default=None, gt=0)
    embed_batch: int = Field(default=64, ge=1)
    timeout_s: float = Field(default=20.0, gt=0)
    retries: int = Field(default=1, ge=0, le=5)
    backoff_s: float = Field(default=0.5, ge=0)
    max_backoff_s: float = Field(default=10.0, ge=0)
    concurrency: int = Field(default=4, ge=1)
    tokens_per_minute: int = Field(default=0, ge=0)
    json_mode: JsonMode = "auto"
    max_output_tokens: int = Field(default=800, ge=16)
    context_tokens: int = Field(default=0, ge=0)
    answer_cache: int = Field(default=10_000, ge=0)


_noticed: set[str] = set()


def notice(message: str, level: int = logging.INFO) -> None:
    """Log a one-line notice once per process."""
    if message not in _noticed:
        _noticed.add(message)
        log.log(level, message)


def settings_from_env(env: Mapping[str, str]) -> LLMSettings | None:
    """The configured settings, or None (rule path) with a one-line notice saying why."""
    if env.get("ENGRAM_LLM", "auto").strip().lower() in (OFF, "0", "false", "no"):
        notice("engram: LLM path disabled (ENGRAM_LLM=off); using the rule path")
        return None
    if not _requested(env):
        notice("engram: no LLM configured (ENGRAM_LLM_API_KEY / ENGRAM_LLM_BASE_URL unset); using the rule path")
        return None
    key = env.get("ENGRAM_LLM_API_KEY") or env.get("OPENAI_API_KEY")
    if not key:
        notice("engram: LLM configured but no API key (ENGRAM_LLM_API_KEY / OPENAI_API_KEY); "
               "using the rule path", logging.WARNING)
        return None
    return LLMSettings.model_validate({"api_key": key, **_overrides(env)})


def _requested(env: Mapping[str, str]) -> bool:
    return any(env.get(name) for name in ("ENGRAM_LLM_BASE_URL", "ENGRAM_LLM_API_KEY")) or any(
        name.startswith("ENGRAM_LLM_MODEL") and value for name, value in env.items()
    )


def _model(env: Mapping[str, str], task: str, default: str | None) -> str | None:
    value = env.get(f"ENGRAM_LLM_MODEL_{task}", "").strip() or default
    return None if value is None or value.lower() == OFF else value


_NUMBERS: dict[str, tuple[str, type]] = {
    "embed_dimensions": ("ENGRAM_LLM_EMBED_DIMENSIONS", int),
    "embed_batch": ("ENGRAM_LLM_EMBED_BATCH", int),
    "timeout_s": ("ENGRAM_LLM_TIMEOUT_S", float),
    "retries": ("ENGRAM_LLM_RETRIES", int),
    "backoff_s": ("ENGRAM_LLM_BACKOFF_S", float),
    "concurrency": ("ENGRAM_LLM_CONCURRENCY", int),
    "tokens_per_minute": ("ENGRAM_LLM_TPM", int),
    "answer_cache": ("ENGRAM_LLM_ANSWER_CACHE", int),
    "context_tokens": ("ENGRAM_LLM_CONTEXT_TOKENS", int),
    "max_output_tokens": ("ENGRAM_LLM_MAX_TOKENS", int),
}


def _overrides(env: Mapping[str, str]) -> dict[str, object]:
    chat = env.get("ENGRAM_LLM_MODEL", "").strip() or DEFAULT_MODEL
    out: dict[str, object] = {
        "base_url": env.get("ENGRAM_LLM_BASE_URL") or None,
        "extract_model": _model(env, "EXTRACT", chat),
        "judge_model": _model(env, "JUDGE", chat),
        "summarize_model": _model(env, "SUMMARIZE", chat),
        "embed_model": _model(env, "EMBED", None),
    }
    for field, (name, kind) in _NUMBERS.items():
        if env.get(name, "").strip():
            try:
                out[field] = kind(env[name])
            except ValueError:
                raise ValueError(f"{name}={env[name]!r} is not a number") from None
    if env.get("ENGRAM_LLM_JSON_MODE", "").strip():
        out["json_mode"] = env["ENGRAM_LLM_JSON_MODE"].strip().lower()
    return out
