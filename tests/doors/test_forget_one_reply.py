"""Forgetting one memory blanks, in the analytics, the turns it came from and the reply that answered them
(an assistant repeating the fact), and nothing else."""

from __future__ import annotations

import uuid
from pathlib import Path

from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import ForgetRequested
from tests.drivers import T0, turn


def test_forgetting_one_memory_blanks_its_turns_and_the_reply_to_them(tmp_path: Path) -> None:
    canary = "Qorvath" + uuid.uuid4().hex[:6]
    with EmbeddedRuntime(tmp_path / "d", analytics="chdb") as rt:
        rt.ingest([turn(f"I live in {canary}", message_id="q1"),
                   turn(f"Lovely, {canary} is a nice place to live!", role="assistant", message_id="r1"),
                   turn("I prefer green tea in the morning", message_id="q2"),
                   turn("Green tea it is.", role="assistant", message_id="r2")])
        [memory] = [m for m in rt.store.list_memories("t1", "u1") if canary in m.content]
        event_id = uuid.uuid4().hex
        rt.append([ForgetRequested(event_id=event_id, occurred_at=T0.replace(hour=20), tenant_id="t1",
                                   user_id="u1", correlation_id=event_id, memory_ids=(memory.memory_id,))])
        assert rt.analytics is not None
        client = rt.analytics.projector.client
        rows = dict(client.query("SELECT message_id, content FROM turns WHERE user_id = 'u1'").result_rows)
        assert rows["q1"] == "" and rows["r1"] == "", rows
        assert rows["q2"] == "I prefer green tea in the morning" and rows["r2"] == "Green tea it is."
