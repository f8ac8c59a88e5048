"""Tolerant reading of model answers: code fences, prose around the JSON, wrappers."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPENERS = {"[": "]", "{": "}"}


class AnswerError(ValueError):
    """The answer holds no usable JSON (or not the shape asked for)."""


def load_json(text: str) -> Any:
    """The first JSON value in a model answer.

    Tries, in order: the whole text, the content of each code fence, then
    every balanced `[...]` or `{...}` span from the first opener on. Reasoning
    blocks (`<think>...</think>`) are removed first.
    """
    text = _THINK_RE.sub("", text or "").strip()
    if not text:
        raise AnswerError("empty answer")
    for chunk in (text, *_FENCE_RE.findall(text)):
        try:
            return json.loads(chunk.strip())
        except (json.JSONDecodeError, ValueError):
            pass
    found = _first_balanced(text)
    if found is None:
        raise AnswerError(f"no JSON in answer: {text[:80]!r}")
    return found


def _first_balanced(text: str) -> Any | None:
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in _OPENERS:
            try:
                value, _ = decoder.raw_decode(text[i:])
            except json.JSONDecodeError:
                continue
            return value
    return None


def json_items(value: Any, keys: tuple[str, ...]) -> list[Any]:
    """A list of items: the value itself if a list, or the first list under one of `keys`.

    An object with none of the keys is taken as a single item, so `{"type": ...}`
    answered instead of `[{"type": ...}]` still counts.
    """
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in keys:
            inner = value.get(key)
            if isinstance(inner, list):
                return inner
        if not value:
            return []
        if any(isinstance(v, list) for v in value.values()) and "content" not in value:
            return next(v for v in value.values() if isinstance(v, list))
        return [value]
    raise AnswerError(f"expected a JSON array or object, got {type(value).__name__}")
