"""Caches keyed by user text are emptied when an erasure completes: the text must not outlive the forget."""

from __future__ import annotations

import uuid
from pathlib import Path

from engram.core.embedding import HashingEmbedder
from engram.core.pii import _find_pii
from engram.core.text import terms
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import ForgetRequested
from engram.streams.rules import _drafts, extract_drafts
from tests.drivers import T0, turn


def _sizes(embedder: HashingEmbedder) -> list[int]:
    return [f.cache_info().currsize for f in (_drafts, terms, _find_pii, embedder._one)]


def test_forget_everything_empties_every_cache_keyed_by_the_users_text(tmp_path: Path) -> None:
    embedder = HashingEmbedder(64)
    text = "I moved to Lisbon last spring and my phone is 13912345678"
    with EmbeddedRuntime(tmp_path / "d") as rt:
        rt.ingest([turn(text, user="a")])
        embedder.embed_one(text)
        terms(text)
        _find_pii(text)
        extract_drafts("user", text, False)
        assert all(_sizes(embedder)), _sizes(embedder)
        event_id = uuid.uuid4().hex
        rt.append([ForgetRequested(event_id=event_id, occurred_at=T0.replace(hour=20), tenant_id="t1",
                                   user_id="a", correlation_id=event_id, everything=True)])
        assert _sizes(embedder) == [0, 0, 0, 0]
