"""Embedder port, the built-in multilingual hashing embedder, and the choice between embedders.

`make_embedder(kind, dimensions)` builds the embedder a configuration names:
`hashing` (the default, no dependency) or `use` (the multilingual Universal
Sentence Encoder, offline, the `semantic` extra; `engram.core.semantic_embedder`).
`ENGRAM_EMBEDDER` overrides the config file's `embedder.kind`
(`embedder_kind`). Vectors of two models never share an index: the model id is
recorded with the projection and a change re-embeds by replay
(`engram.llm.index_model`).
"""

from __future__ import annotations

import os
import re
import unicodedata
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from .text import _CJK_CLASS, EN_STOPWORDS, _stem
from .text_caches import register_owner

if TYPE_CHECKING:
    from .config import EngramConfig


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors. `model_id` is recorded with every vector."""

    model_id: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """A float32 array of shape (len(texts), dimensions), rows L2-normalised."""
        ...


class HashingEmbedder:
    """Deterministic feature hashing of words, character n-grams and CJK bigrams.

    No model, no download, the same vector on every machine: Latin words and
    their character trigrams, CJK characters and bigrams, each hashed with
    CRC32 into `dimensions` buckets with a sign bit.
    """

    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self.model_id = f"engram-hashing-v1-{dimensions}"
        self._one = lru_cache(maxsize=200_000)(self._embed_one)
        register_owner(self)

    def clear_text_cache(self) -> None:
        self._one.cache_clear()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._one(text) for text in texts])

    def embed_one(self, text: str) -> np.ndarray:
        return self._one(text)

    def _embed_one(self, text: str) -> np.ndarray:
        indices: list[int] = []
        weights: list[float] = []
        for feature, weight in _features(text):
            h = zlib.crc32(feature.encode("utf-8"))
            indices.append(h % self.dimensions)
            weights.append(weight if h & 0x80000000 else -weight)
        vector = np.bincount(indices, weights=weights, minlength=self.dimensions).astype(
            np.float32
        )
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector /= norm
        vector.setflags(write=False)
        return vector


_FEATURE_RUNS = re.compile(f"([{_CJK_CLASS}]+)|((?:(?![{_CJK_CLASS}])[^\\W_])+)")
"""Runs of CJK characters, or of other letters and digits (`[^\\W_]` is exactly `str.isalnum`)."""


def _features(text: str) -> list[tuple[str, float]]:
    """Features in text order: each CJK character (0.5) and bigram (1.0) of a run; each word's stem and trigrams."""
    folded = unicodedata.normalize("NFKC", text).lower()
    out: list[tuple[str, float]] = []
    for cjk, word in _FEATURE_RUNS.findall(folded):
        if cjk:
            out.append((cjk[0], 0.5))
            for i in range(1, len(cjk)):
                out.append((cjk[i], 0.5))
                out.append((cjk[i - 1 : i + 1], 1.0))
        else:
            _flush_word([word], out)
    return out


def _flush_word(word: list[str], out: list[tuple[str, float]]) -> None:
    if not word:
        return
    token = "".join(word)
    word.clear()
    if token in EN_STOPWORDS:
        return
    stem = _stem(token)
    out.append(("w:" + stem, 1.0))
    padded = f"<{stem}>"
    out.extend(("g:" + padded[i : i + 3], 0.35) for i in range(len(padded) - 2))


EMBEDDER_KINDS = ("hashing", "use")
ENV_EMBEDDER = "ENGRAM_EMBEDDER"


def embedder_kind(configured: str = "hashing", env: Mapping[str, str] | None = None) -> str:
    """`ENGRAM_EMBEDDER` when set, else the configured kind; refuses an unknown name."""
    kind = ((os.environ if env is None else env).get(ENV_EMBEDDER) or configured).strip().lower()
    if kind not in EMBEDDER_KINDS:
        raise ValueError(f"unknown embedder {kind!r}: choose one of {', '.join(EMBEDDER_KINDS)}")
    return kind


def make_embedder(kind: str = "hashing", dimensions: int = 256) -> Embedder:
    """The embedder of that kind (`dimensions` is the hashing embedder's; USE is always 512-d)."""
    if kind == "use":
        from .semantic_embedder import shared_use_embedder

        return shared_use_embedder()
    if kind == "hashing":
        return HashingEmbedder(dimensions)
    raise ValueError(f"unknown embedder {kind!r}: choose one of {', '.join(EMBEDDER_KINDS)}")


def calibrated(config: "EngramConfig", embedder: Embedder) -> "EngramConfig":
    """The config with the embedder's own cosine calibration, when it brings one.

    Cosine thresholds belong to a model: USE puts "用户是后端开发" and "用户是前端开发" at 0.94,
    where the hashing embedder's 0.92 duplicate line was drawn. An embedder with a
    `duplicate_cosine` sets the merge and recall near-duplicate thresholds to it.
    """
    duplicate = getattr(embedder, "duplicate_cosine", None)
    if duplicate is None:
        return config
    merge = config.merge.model_copy(update={"near_duplicate_cosine": float(duplicate)})
    recall = config.recall.model_copy(update={"near_duplicate_cosine": float(duplicate)})
    return config.model_copy(update={"merge": merge, "recall": recall})


def warm_up(embedder: Embedder) -> None:
    """Load a model that loads lazily (USE: about a second) now, at open, not on the first request."""
    warm = getattr(embedder, "warm", None)
    if warm is not None:
        warm()


def embed_text(embedder: Embedder, text: str) -> np.ndarray:
    """One vector, through the embedder's single-text cache when it has one."""
    one = getattr(embedder, "embed_one", None)
    return one(text) if one is not None else embedder.embed([text])[0]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two unit vectors."""
    return float(np.dot(a, b))
