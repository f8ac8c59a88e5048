"""The OpenAI-compatible embedder: batched, cached, model recorded; a model change re-embeds by replay."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from engram.core.embedding import HashingEmbedder
from engram.llm.client import ModelClient
from engram.llm.embedder import EmbeddingError, OpenAIEmbedder
from engram.llm.index_model import MODEL_FILE, ensure_index_model, recorded_model
from engram.llm.context import llm_context
from engram.recall.service import RecallRequest
from engram.runtime.engine import EmbeddedRuntime
from tests.drivers import T0, user_turns

from .conftest import EMBED, scripted_settings
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm


def _embedder(server: ScriptedServer, **kw: object) -> OpenAIEmbedder:
    return OpenAIEmbedder(ModelClient(scripted_settings(server)), EMBED, **kw)  # type: ignore[arg-type]


def test_texts_are_sent_in_batches_and_each_text_once(llm_server: ScriptedServer) -> None:
    embedder = _embedder(llm_server, batch_size=2)
    assert embedder.dimensions == 64 and embedder.model_id == f"openai-compatible:{EMBED}:64"
    texts = ["用户喜欢Java", "User loves Go", "我住在上海", "猫", "狗", "用户喜欢Java"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (6, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], HashingEmbedder(64).embed_one("用户喜欢Java"), atol=1e-5)
    sent = [r.inputs for r in llm_server.requests_for(EMBED)]
    assert sent == [["dimension probe"], ["用户喜欢Java", "User loves Go"], ["我住在上海", "猫"], ["狗"]]
    embedder.embed(["User loves Go", "猫"])
    assert len(llm_server.requests_for(EMBED)) == 4
    assert all(call.task == "embed" and call.outcome == "ok" for call in embedder.calls)


def test_configured_dimensions_are_sent_and_enforced(llm_server: ScriptedServer) -> None:
    llm_server.queue(EMBED, Reply(vectors=[[1.0, 0.0]]), Reply(vectors=[[1.0, 0.0]]))
    embedder = _embedder(llm_server, dimensions=64)
    with pytest.raises(EmbeddingError, match="embedding size 2"):
        embedder.embed(["text"])
    assert all(r.body.get("dimensions") == 64 for r in llm_server.requests_for(EMBED))
    assert [c.outcome for c in embedder.calls] == ["retried", "error"]


def test_a_failing_endpoint_raises_after_one_retry_instead_of_mixing_models(llm_server: ScriptedServer) -> None:
    embedder = _embedder(llm_server, dimensions=64)
    llm_server.queue(EMBED, Reply.server_error(), Reply.rate_limited())
    with pytest.raises(EmbeddingError, match="429"):
        embedder.embed(["text"])
    llm_server.queue(EMBED, Reply.server_error())
    assert embedder.embed(["text"]).shape == (1, 64)  # retried once, then fine


def _open(folder: Path, server: ScriptedServer | None) -> EmbeddedRuntime:
    if server is None:
        return EmbeddedRuntime(folder)
    settings = scripted_settings(server, extract_model=None, judge_model=None, summarize_model=None,
                                 embed_model=EMBED)
    return EmbeddedRuntime(folder, ctx=llm_context(settings))


def _vector_sizes(runtime: EmbeddedRuntime) -> set[int]:
    return {row[0] // 4 for row in runtime.db.execute("SELECT length(vector) FROM proj_memories")}


def test_a_model_change_re_embeds_the_index_by_replay(tmp_path: Path, llm_server: ScriptedServer) -> None:
    folder = tmp_path / "engram"
    with _open(folder, None) as runtime:
        assert ensure_index_model(runtime) is False
        runtime.ingest(user_turns("我喜欢Java", "我住在上海", "I love Go"))
        assert _vector_sizes(runtime) == {256}
    assert recorded_model(folder) == "engram-hashing-v1-256"
    with _open(folder, None) as runtime:
        before = {m.memory_id for m in runtime.store.list_memories("t1", "u1", ("active",))}
    with _open(folder, llm_server) as runtime:  # opening with another embedder re-embeds by replay
        assert ensure_index_model(runtime) is False
        assert _vector_sizes(runtime) == {64}
        assert {m.memory_id for m in runtime.store.list_memories("t1", "u1", ("active",))} == before
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s1", "我喜欢什么编程语言", T0 + timedelta(days=1)))
        assert any("Java" in item.text for item in result.items)
    assert recorded_model(folder) == f"openai-compatible:{EMBED}:64"
    with _open(folder, llm_server) as runtime:
        assert ensure_index_model(runtime) is False


def test_existing_data_without_a_record_is_re_embedded_to_be_safe(tmp_path: Path, llm_server: ScriptedServer) -> None:
    folder = tmp_path / "engram"
    with _open(folder, None) as runtime:
        runtime.ingest(user_turns("我喜欢Java"))
    (folder / MODEL_FILE).unlink()  # data from before the record existed
    with _open(folder, llm_server) as runtime:
        assert ensure_index_model(runtime) is False  # already re-embedded on opening
        assert _vector_sizes(runtime) == {64}
