"""Forget everything erases the user's global cards: none listed, no text in the data file, every card
text sealed in the log (so destroying the key erases it), and a replay finds no drift."""

from __future__ import annotations

from pathlib import Path

import httpx

from engram.access.app import server_app
from engram.access.auth import KeyRing
from engram.runtime.backend import EmbeddedBackend
from tests.access.conftest import LiveServer, turn

MARKERS = {"name": "Zorblat Quenby", "profile": "profqxv a nurse", "answer_style": "stylqxv bullet points",
           "preferred_language": "langqxv", "tags": ["tagqxv"], "folder": "foldqxv", "extra_notes": "notqxv"}


def _file_text(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith("engram.db"))


def test_forget_everything_erases_the_cards_and_a_replay_agrees(tmp_path: Path) -> None:
    data = tmp_path / "data"
    backend = EmbeddedBackend.open(data)
    scope = {"tenant": "t", "user": "u"}
    with LiveServer(server_app(backend, KeyRing(), "127.0.0.1")) as live, httpx.Client(base_url=live.url) as http:
        assert http.post("/v1/turns", json=turn("t", "u", "I live in Porto")).status_code == 200
        created = http.post("/v1/cards", json={**scope, **MARKERS})
        assert created.status_code == 201, created.text
        assert http.post("/v1/forget", json={**scope, "everything": True}).status_code == 200
        assert http.get("/v1/cards", params=scope).json() == []
        for card in http.get("/v1/cards", params={**scope, "include_deleted": True}).json():
            assert card["deleted"] and not any(v in str(card) for v in ("Zorblat", "qxv"))
    stored = _file_text(data)
    for marker in (b"Zorblat", b"qxv"):
        assert marker not in stored, marker
    before = backend.read(lambda store: store.state_hash())
    assert backend.replay() == before
    backend.close()
