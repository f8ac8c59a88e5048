"""Requests to an OpenAI-compatible endpoint, retried, limited and recorded.

`ModelClient.call` sends one request (chat or embeddings), parses the answer
with the caller's parser, and returns the value plus one `LLMCall` record per
attempt; `ModelClient.ask` is the JSON chat completion on top of it.
Malformed answers, timeouts, connection errors, 429 and 5xx are retried
(`retries` times, with backoff); anything else fails at once. When every
attempt failed, the value is None and the caller takes its fallback. The
client never raises for a model failure.

Output format (`ENGRAM_LLM_JSON_MODE`): `schema` sends the task's JSON
schema as `response_format={"type": "json_schema", ...}` (constrained
decoding on llama.cpp, vLLM, OpenAI), `auto`/`on` send `json_object`, `off`
nothing. An endpoint that answers 400 about `response_format` is asked again
one level down (schema -> json_object -> none; only in `auto`/`schema`), and
the client stays there.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import openai

from engram.core.ports import LLMCall, LLMOutcome, LLMTask
from engram.core.text import estimate_tokens

from .limits import Gate, LimitExceeded, TokenBudget
from .parsing import AnswerError
from .settings import LLMSettings

T = TypeVar("T")
Parser = Callable[[str], tuple[T, int]]
"""Answer text -> (value, items dropped by validation); raises AnswerError if unusable."""
Message = dict[str, str]
Schema = dict[str, Any]
Format = Literal["schema", "object", "none"]
_MAX_ERROR_CHARS = 300
_DOWNGRADE: dict[Format, Format] = {"schema": "object", "object": "none", "none": "none"}


@dataclass(frozen=True)
class Answer(Generic[T]):
    """The parsed value (None when every attempt failed) and the record of each attempt."""

    value: T | None
    calls: tuple[LLMCall, ...]
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def latency_ms(self) -> float:
        return sum(call.latency_ms for call in self.calls)


@dataclass(frozen=True)
class _Failure:
    error: str
    retryable: bool
    wait_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0


def openai_client(settings: LLMSettings) -> openai.OpenAI:
    """The real `openai` client; retries are ours, so the client's own are off."""
    return openai.OpenAI(api_key=settings.api_key, base_url=settings.base_url,
                         timeout=settings.timeout_s, max_retries=0)


Sender = Callable[[], tuple[int, int, Any]]
"""Sends one request; returns (tokens in, tokens out, raw answer). Raises openai errors."""


class ModelClient:
    """Model requests with retries and backoff, limits and call records; JSON chat on top."""

    def __init__(self, settings: LLMSettings, client: openai.OpenAI | None = None, gate: Gate | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.openai = client or openai_client(settings)
        self.gate = gate or Gate(settings.concurrency, TokenBudget(settings.tokens_per_minute))
        self.format: Format = {"schema": "schema", "off": "none"}.get(settings.json_mode, "object")  # type: ignore[assignment]
        self.cache_hits = 0
        self._answers: OrderedDict[str, str] = OrderedDict()
        self._sleep = sleep

    @property
    def json_mode(self) -> bool:
        """Whether answers are requested as JSON (a schema or `json_object`)."""
        return self.format != "none"

    @property
    def prompt_budget(self) -> int | None:
        """Tokens a prompt may take: the context window less the answer's tokens (None: no window set)."""
        window = self.settings.context_tokens
        return max(256, window - self.settings.max_output_tokens) if window else None

    def ask(self, task: LLMTask, model: str, messages: Sequence[Message], parse: Parser[T],
            on_failure: LLMOutcome = "fallback", schema: Schema | None = None) -> Answer[T]:
        """One chat completion, parsed by `parse`; see `call`. `schema` is the answer's JSON schema.

        A prompt answered before (same task, model and messages) is answered
        from memory, with no call and so no call record: a repeated message or
        a re-processed event gets the same answer without asking again.
        """
        key = _cache_key(task, model, messages)
        remembered = self._remembered(key, parse)
        if remembered is not None:
            return remembered
        answered: list[str] = []

        def parse_and_keep(text: str) -> tuple[T, int]:
            result = parse(text)
            answered.append(text)
            return result

        estimate = sum(estimate_tokens(m["content"]) for m in messages)
        send = lambda: _read(self._create(task, model, messages, schema), estimate)  # noqa: E731
        answer = self.call(task, model, send, parse_and_keep, estimate + self.settings.max_output_tokens, on_failure)
        if answer.value is not None and answered and self.settings.answer_cache:
            self._answers[key] = answered[-1]
            if len(self._answers) > self.settings.answer_cache:
                self._answers.popitem(last=False)
        return answer

    def _remembered(self, key: str, parse: Parser[T]) -> Answer[T] | None:
        text = self._answers.get(key)
        if text is None:
            return None
        self._answers.move_to_end(key)
        try:
            value, _ = parse(text)
        except AnswerError:
            return None
        self.cache_hits += 1
        return Answer(value, ())

    def call(self, task: LLMTask, model: str, send: Sender, parse: Callable[[Any], tuple[T, int]],
             estimated_tokens: int, on_failure: LLMOutcome = "fallback") -> Answer[T]:
        """Send, parse; retry what is worth retrying; record every attempt. Never raises for the model."""
        calls: list[LLMCall] = []
        attempt, last_try = 0, 1 + self.settings.retries
        while True:
            attempt += 1
            started = time.monotonic()
            result = self._attempt(send, parse, estimated_tokens)
            ms = round((time.monotonic() - started) * 1000, 3)
            if not isinstance(result, _Failure):
                (value, dropped), tokens_in, tokens_out = result
                calls.append(LLMCall(task, model, attempt, "ok", tokens_in, tokens_out, ms, "", dropped))
                return Answer(value, tuple(calls))
            if result.error.startswith("json mode unsupported"):
                last_try += 1  # the downgrade to plain output does not use up a retry
            more = result.retryable and attempt < last_try
            outcome: LLMOutcome = "retried" if more else on_failure
            calls.append(LLMCall(task, model, attempt, outcome, result.tokens_in, result.tokens_out, ms,
                                 result.error[:_MAX_ERROR_CHARS]))
            if not more:
                return Answer(None, tuple(calls), result.error[:_MAX_ERROR_CHARS])
            self._sleep(self._backoff(attempt, result.wait_s))

    def _attempt(self, send: Sender, parse: Callable[[Any], tuple[T, int]],
                 estimated_tokens: int) -> tuple[tuple[T, int], int, int] | _Failure:
        try:
            with self.gate.admit(estimated_tokens, self.settings.timeout_s) as slot:
                tokens_in, tokens_out, raw = send()
                self.gate.budget.settle(slot, tokens_in + tokens_out)
        except LimitExceeded as exc:
            return _Failure(f"limit: {exc}", retryable=False)
        except openai.APIError as exc:
            return self._api_failure(exc)
        try:
            return parse(raw), tokens_in, tokens_out
        except AnswerError as exc:
            return _Failure(f"malformed answer: {exc}", True, 0.0, tokens_in, tokens_out)

    def _create(self, task: str, model: str, messages: Sequence[Message], schema: Schema | None) -> Any:
        extra: dict[str, Any] = {}
        if self.format == "schema" and schema is not None:
            extra["response_format"] = {"type": "json_schema",
                                        "json_schema": {"name": f"engram_{task}", "schema": schema}}
        elif self.format != "none":
            extra["response_format"] = {"type": "json_object"}
        return self.openai.chat.completions.create(
            model=model, messages=list(messages), temperature=0,  # type: ignore[arg-type]
            max_tokens=self.settings.max_output_tokens, **extra,
        )

    def _api_failure(self, exc: openai.APIError) -> _Failure:
        if isinstance(exc, openai.APITimeoutError):
            return _Failure(f"timeout after {self.settings.timeout_s:g} s", True)
        if isinstance(exc, openai.APIConnectionError):
            return _Failure(f"connection error: {exc}", True)
        if not isinstance(exc, openai.APIStatusError):
            return _Failure(f"{type(exc).__name__}: {exc}", False)
        status = exc.status_code
        message = f"http {status}: {_message(exc)}"
        if (status == 400 and self.json_mode and self.settings.json_mode in ("auto", "schema")
                and "response_format" in message):
            self.format = _DOWNGRADE[self.format]
            return _Failure(f"json mode unsupported, retrying with {self.format}: {message}", True)
        return _Failure(message, status in (408, 409, 429) or status >= 500, _retry_after(exc))

    def _backoff(self, attempt: int, wait_s: float) -> float:
        cap = self.settings.max_backoff_s
        return min(cap, max(wait_s, self.settings.backoff_s * 2 ** (attempt - 1)))


def _cache_key(task: str, model: str, messages: Sequence[Message]) -> str:
    text = json.dumps([task, model, list(messages)], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(response: Any, estimated_prompt_tokens: int) -> tuple[int, int, str]:
    """Tokens in, tokens out and the answer text (usage estimated when the endpoint omits it)."""
    choices = getattr(response, "choices", None) or []
    message = choices[0].message if choices else None
    text = (getattr(message, "content", None) or "") if message is not None else ""
    usage = getattr(response, "usage", None)
    if usage is None:
        return estimated_prompt_tokens, estimate_tokens(text), text
    return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0), text


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)


def _retry_after(exc: openai.APIStatusError) -> float:
    try:
        return max(0.0, float(exc.response.headers.get("retry-after", 0)))
    except (TypeError, ValueError):
        return 0.0
