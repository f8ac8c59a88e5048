"""mem0 (`mem0ai`) as the peer of the recall-latency benchmark, fully offline.

- **Same embedder**: Engram's `HashingEmbedder`, wrapped as a mem0
  `EmbeddingBase` and set as the `Memory`'s embedding model. mem0's embedder
  config only accepts its built-in provider names, so the `Memory` is built
  with the `openai` provider pointed at a closed local port (127.0.0.1:9) and a
  dummy key, and the embedding model is replaced before any use; the OpenAI
  client it built is never called.
- **No LLM**: memories are written with `add(..., infer=False)` (stored as
  given, no extraction); the `Memory`'s LLM is replaced by a stub that raises
  if anything calls it, and its configured endpoint is a closed local port.
- **Its local vector store**: Qdrant in local mode (`qdrant-client`'s
  embedded engine, mem0's default provider), on a path under the benchmark's
  work folder; the history database sits beside it.
- **Offline**: `MEM0_TELEMETRY=False` and `MEM0_DIR` under the work folder
  are set before mem0 is imported. spaCy and fastembed are not installed, so
  mem0's BM25 channel, lemmatizer and entity boosts are disabled (it says so in
  its log) — fastembed's BM25 model would be downloaded from a model hub,
  which this machine cannot reach — and mem0 search is its semantic search
  plus its own scoring and formatting.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from engram.core.embedding import HashingEmbedder

CLOSED_ENDPOINT = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, a stray call fails at once


def configure_offline(workdir: Path) -> None:
    """Environment that keeps mem0 off the network; call before importing mem0."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(workdir / "mem0-home")
    os.environ.setdefault("OPENAI_API_KEY", "offline-benchmark-no-key")
    for name in ("mem0", "mem0.memory.main", "mem0.vector_stores.qdrant", "mem0.utils.spacy_models"):
        logging.getLogger(name).setLevel(logging.ERROR)


def mem0_version() -> str:
    from importlib.metadata import version

    return version("mem0ai")


class _NoLLM:
    """Stands in for mem0's LLM: the benchmark must never reach one."""

    def generate_response(self, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("mem0 tried to call an LLM during the benchmark")


def _embedder_class() -> type:
    from mem0.embeddings.base import EmbeddingBase

    class EngramHashingEmbedding(EmbeddingBase):  # type: ignore[misc, valid-type]
        """mem0 embedder over Engram's HashingEmbedder (the same vectors Engram stores)."""

        def __init__(self, embedder: HashingEmbedder) -> None:
            super().__init__()
            self.engram = embedder

        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            return self.engram.embed_one(text).tolist()

        def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
            return [row.tolist() for row in self.engram.embed(list(texts))]

    return EngramHashingEmbedding


class Mem0Peer:
    """mem0 `Memory` objects over one local Qdrant: one collection per group, or per user."""

    def __init__(self, workdir: Path, embedder: HashingEmbedder, layout: str) -> None:
        if layout not in ("shared", "per-user"):
            raise ValueError(f"unknown mem0 layout {layout!r}")
        configure_offline(workdir)
        from qdrant_client import QdrantClient

        self.layout = layout
        self.workdir = workdir
        self.embedder = embedder
        self._wrapper = _embedder_class()(embedder)
        self._client = QdrantClient(path=str(workdir / f"mem0-qdrant-{layout}"))
        self._memories: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return f"mem0 ({self.layout})"

    def describe(self) -> dict[str, Any]:
        return {"version": mem0_version(), "vector_store": "qdrant local mode (qdrant-client embedded engine)",
                "layout": ("one collection per size group, queries filtered by user_id" if self.layout == "shared"
                           else "one collection per user"),
                "embedder": f"Engram {self.embedder.model_id} wrapped as a mem0 EmbeddingBase",
                "add": "Memory.add(text, user_id=..., infer=False)",
                "search": "Memory.search(question, filters={'user_id': ...}, top_k=10)",
                "llm": "none (stub that raises; endpoint a closed local port)", "telemetry": "off",
                "bm25_and_entities": "off (fastembed and spaCy not installed)"}

    def _memory(self, collection: str) -> Any:
        memory = self._memories.get(collection)
        if memory is None:
            from mem0 import Memory

            memory = Memory.from_config({
                "vector_store": {"provider": "qdrant", "config": {
                    "collection_name": collection, "embedding_model_dims": self.embedder.dimensions,
                    "client": self._client}},
                "llm": {"provider": "openai", "config": {"api_key": "offline", "openai_base_url": CLOSED_ENDPOINT}},
                "embedder": {"provider": "openai", "config": {
                    "api_key": "offline", "openai_base_url": CLOSED_ENDPOINT,
                    "embedding_dims": self.embedder.dimensions}},
                "history_db_path": str(self.workdir / f"mem0-history-{self.layout}.db"),
            })
            memory.embedding_model = self._wrapper
            memory.llm = _NoLLM()
            self._memories[collection] = memory
        return memory

    def collection(self, tenant: str, user: str) -> str:
        return tenant if self.layout == "shared" else f"{tenant}-{user}"

    def add(self, tenant: str, user: str, texts: list[str]) -> None:
        memory = self._memory(self.collection(tenant, user))
        for text in texts:
            memory.add(text, user_id=user, infer=False)

    def search(self, tenant: str, user: str, question: str, top_k: int = 10) -> int:
        memory = self._memory(self.collection(tenant, user))
        return len(memory.search(question, filters={"user_id": user}, top_k=top_k)["results"])

    def close(self) -> None:
        for memory in self._memories.values():
            memory.close()
        self._memories.clear()
        self._client.close()
