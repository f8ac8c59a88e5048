"""KeyGate's worker thread: it clears itself under the lock when it leaves, so a later owner starts a new one."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from engram.core.crypto import FieldCipher
from engram.core.keystore import MemoryKeyStore
from engram.distributed.erasure import KeyGate
from engram.schemas.events import Event, TurnRecorded

AT = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


class _Keys(MemoryKeyStore):
    def known(self, owner: str) -> tuple[str, bytes] | None:
        return self._current.get(owner)


def _turn(user: str) -> TurnRecorded:
    return TurnRecorded(event_id=uuid.uuid4().hex, occurred_at=AT, tenant_id="acme", user_id=user, agent_id="bot",
                        session_id="s1", message_id=uuid.uuid4().hex[:8], role="user", content="hello")


def test_an_owner_queued_after_the_worker_left_is_sent_by_a_new_worker() -> None:
    sent: list[Event] = []
    failed: list[int] = []
    gate = KeyGate(FieldCipher(_Keys()), sent.append, lambda n, _: failed.append(n))
    assert gate.offer(_turn("alice"), room=10) is False  # held: no key yet
    assert gate.drain(5.0)
    first = gate._thread
    if first is not None:
        first.join(5.0)
    assert gate._thread is None  # the worker left with nothing waiting, and said so under the lock
    assert gate.offer(_turn("bob"), room=10) is False
    assert gate.drain(5.0) and [e.user_id for e in sent] == ["alice", "bob"] and not failed
    assert gate.offer(_turn("bob"), room=10) is True  # known now: sent at once
