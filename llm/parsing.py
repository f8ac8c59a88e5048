"""Tolerant reading of model answers: what small models do to JSON.

Seen from small local models (Qwen2.5 0.5B/1.5B, llama.cpp) and from hosted
ones without a JSON mode: code fences around the answer, prose before or
after it, reasoning blocks, a single object where an array was asked for, an
answer cut off at the token limit (the complete items are kept), trailing
commas, and keys in another casing or under a synonym (`Type`, `memory_type`,
`text`). `load_json` finds the JSON value; `json_items` finds the list of
items in it; `normalise_keys` maps the keys back to the names asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_THINK_RE = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")
_OPENERS = {"[": "]", "{": "}"}


class AnswerError(ValueError):
    """The answer holds no usable JSON (or not the shape asked for)."""


def load_json(text: str) -> Any:
    """The JSON value in a model answer.

    Tries, in order: the whole text, the content of each code fence (an
    unclosed fence runs to the end), the same with trailing commas removed,
    then the balanced `[...]` / `{...}` spans in the text. One span is the
    answer; several item objects and no wrapper (an array cut off at the
    token limit, or objects listed one after another) come back as a list.
    Reasoning blocks (`<think>...</think>`) are removed first.
    """
    text = _THINK_RE.sub("", text or "").strip()
    if not text:
        raise AnswerError("empty answer")
    chunks = [text, *(c.strip() for c in _FENCE_RE.findall(text))]
    for chunk in (*chunks, *(_TRAILING_COMMA_RE.sub(r"\1", c) for c in chunks)):
        try:
            return json.loads(chunk)
        except (json.JSONDecodeError, ValueError):
            pass
    found = _balanced_values(_TRAILING_COMMA_RE.sub(r"\1", text))
    if not found:
        raise AnswerError(f"no JSON in answer: {text[:80]!r}")
    if len(found) > 1 and all(isinstance(v, dict) and not _is_wrapper(v) for v in found):
        return found
    return found[0]


def _balanced_values(text: str) -> list[Any]:
    """Every balanced JSON array or object, outermost first, scanning left to right."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] in _OPENERS:
            try:
                value, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i += 1
                continue
            values.append(value)
            i = end
        else:
            i += 1
    return values


def _is_wrapper(value: Mapping[str, Any]) -> bool:
    return any(isinstance(v, list) and v and isinstance(v[0], dict) for v in value.values())


def json_items(value: Any, keys: tuple[str, ...]) -> list[Any]:
    """A list of items: the value itself if a list, or the first list under one of `keys`.

    Keys match in any casing. An object with none of the keys is taken as a
    single item, so `{"type": ...}` answered instead of `[{"type": ...}]`
    still counts; `{"memory": {...}}` (one item under a wrapper key) too.
    """
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        for key in keys:
            inner = lowered.get(key)
            if isinstance(inner, list):
                return inner
            if isinstance(inner, dict):
                return [inner]
        if not value:
            return []
        if any(isinstance(v, list) for v in value.values()) and "content" not in lowered:
            return next(v for v in value.values() if isinstance(v, list))
        return [value]
    raise AnswerError(f"expected a JSON array or object, got {type(value).__name__}")


def normalise_keys(item: Any, aliases: Mapping[str, str]) -> Any:
    """An answered object with its keys lower-cased, `-`/space as `_`, and synonyms renamed.

    A key already present under its proper name wins over a synonym.
    """
    if not isinstance(item, dict):
        return item
    out: dict[str, Any] = {}
    for key, value in item.items():
        name = re.sub(r"[\s-]+", "_", str(key).strip()).lower()
        out.setdefault(name, value)
    for alias, name in aliases.items():
        if alias in out and name not in out:
            out[name] = out.pop(alias)
    return out
