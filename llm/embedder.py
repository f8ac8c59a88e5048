"""Embeddings from an OpenAI-compatible endpoint, behind the Embedder port.

Texts are sent in batches (`ENGRAM_LLM_EMBED_BATCH`), each text once per
process (an LRU cache: consolidation embeds the same memory text often).
`model_id` names the endpoint's model and the vector size; it is what
`index_model.ensure_index_model` compares to decide on a re-embedding replay.

There is no rule fallback for vectors: mixing two models in one index would
make every cosine meaningless. A request that still fails after its retry
raises `EmbeddingError`; the runtime then dead-letters the event (the turn
itself stays in L0 and is re-derived by reprocessing).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Any

import numpy as np

from engram.core.ports import LLMCall
from engram.core.text import estimate_tokens

from .client import ModelClient
from .parsing import AnswerError

CACHE_SIZE = 50_000


class EmbeddingError(RuntimeError):
    """The embeddings endpoint failed after its retry."""


class OpenAIEmbedder:
    """Embedder port over `/v1/embeddings`: batched, cached, L2-normalised, model recorded."""

    def __init__(self, client: ModelClient, model: str, dimensions: int | None = None,
                 batch_size: int | None = None) -> None:
        self.client = client
        self.model = model
        self.batch_size = batch_size or client.settings.embed_batch
        self._send_dimensions = dimensions is not None
        self.calls: deque[LLMCall] = deque(maxlen=1000)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.dimensions = dimensions or 0  # 0 until probed
        if not self.dimensions:
            self.dimensions = len(self._request(["dimension probe"])[0])
        self.model_id = f"openai-compatible:{model}:{self.dimensions}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        known = {t: self._hit(t) for t in unique if t in self._cache}
        missing = [t for t in unique if t not in known]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            for text, vector in zip(batch, self._request(batch)):
                known[text] = self._remember(text, vector)
        return np.stack([known[t] for t in texts])

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _request(self, batch: list[str]) -> np.ndarray:
        estimate = sum(estimate_tokens(t) for t in batch)
        answer = self.client.call("embed", self.model, lambda: self._send(batch, estimate),
                                  lambda raw: (self._vectors(raw, len(batch)), 0), estimate, on_failure="error")
        self.calls.extend(answer.calls)
        if answer.value is None:
            raise EmbeddingError(f"embeddings failed for {len(batch)} text(s): {answer.error}")
        return answer.value

    def _send(self, batch: list[str], estimate: int) -> tuple[int, int, Any]:
        extra: dict[str, Any] = {"dimensions": self.dimensions} if self._send_dimensions else {}
        response = self.client.openai.embeddings.create(model=self.model, input=batch,
                                                        encoding_format="float", **extra)
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else estimate
        return tokens, 0, response

    def _vectors(self, response: Any, expected: int) -> np.ndarray:
        rows = sorted(getattr(response, "data", None) or [], key=lambda d: d.index)
        if len(rows) != expected:
            raise AnswerError(f"expected {expected} embeddings, got {len(rows)}")
        matrix = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if matrix.ndim != 2 or (self.dimensions and matrix.shape[1] != self.dimensions):
            raise AnswerError(f"embedding size {matrix.shape[-1]} is not the index's {self.dimensions}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)

    def _remember(self, text: str, vector: np.ndarray) -> np.ndarray:
        vector = np.ascontiguousarray(vector, dtype=np.float32)
        vector.setflags(write=False)
        self._cache[text] = vector
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return vector

    def _hit(self, text: str) -> np.ndarray:
        self._cache.move_to_end(text)
        return self._cache[text]
