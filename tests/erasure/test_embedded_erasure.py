"""Forget is erasure on the embedded runtime: every byte it keeps is scanned for the forgotten text.

One user (A) says unique canary strings and every kind of personal data; another
user (B) talks beside them. Before the forget, the PII is nowhere in plain text
(the log holds it sealed, projections hold the redacted text). After A forgets
everything, no file of the data folder (the log and its WAL, the key store,
the projections, the chDB analytics folder) holds any of A's canaries or PII,
while B's memories, recall and replay are unchanged.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from engram.projections.clickhouse_queries import resolve_query, run_query
from engram.recall.service import RecallRequest
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import ErasureRecorded, ForgetRequested, TurnRecorded
from engram.schemas.inputs import to_turn_event
from tests.drivers import T0, turn

from .scan import find

PII = {
    "phone": "13912345678",
    "id_card": "11010519491231002X",
    "bank_card": "6222020000000000125",
    "salary_card": "6217000010012345678",
    "email": "canary.person@example-mail.org",
    "password": "Hunter2Canary",
    "api_key": "sk-CanaryKey0123456789abcdef",
}


def _a_turns(canary: str) -> list[str]:
    return [
        f"我喜欢{canary}",
        f"I really love {canary} and always will",
        f"My favourite food is {canary}",
        f"我的电话是{PII['phone']}，以后打给我",
        f"身份证号{PII['id_card']}",
        f"我的银行卡号是{PII['bank_card']}，工资卡卡号{PII['salary_card']}",
        f"mail me at {PII['email']} please",
        f"my pw is {PII['password']}",
        f"my api key is {PII['api_key']}",
    ]


def _forget_everything(tenant: str, user: str) -> ForgetRequested:
    event_id = uuid.uuid4().hex
    return ForgetRequested(event_id=event_id, occurred_at=T0.replace(hour=20), tenant_id=tenant, user_id=user,
                           correlation_id=event_id, everything=True)


def _recall(rt: EmbeddedRuntime, user: str, question: str) -> tuple[str, list[str]]:
    result = rt.recall(RecallRequest(tenant="t1", user=user, agent="a1", session="s1", question=question,
                                     now=T0.replace(hour=21)))
    return result.memory_section, result.retrieved_ids


@pytest.fixture(params=["off", "chdb"])
def analytics(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_forget_everything_leaves_no_byte_of_the_user_anywhere(tmp_path: Path, analytics: str) -> None:
    canary_a = "zorblax" + uuid.uuid4().hex[:10]
    canary_b = "quintrel" + uuid.uuid4().hex[:10]
    data = tmp_path / "data"
    with EmbeddedRuntime(data, analytics=analytics) as rt:
        rt.ingest([turn(t, user="a") for t in _a_turns(canary_a)]
                  + [turn(f"I really love {canary_b} and always will", user="b"),
                     turn(f"我喜欢{canary_b}", user="b")])
        assert any(canary_a in m.content for m in rt.store.list_memories("t1", "a"))
        b_before = rt.store.list_memories("t1", "b")
        assert any(canary_b in m.content for m in b_before)
        b_recall_before = _recall(rt, "b", canary_b)
        assert canary_b in b_recall_before[0]
        rt.log.checkpoint()

        # Before: the PII is nowhere in plain text, the L0 log holds no text of A at all.
        assert find(PII.values(), data) == {}
        raw_log = b"".join(r[0] for r in rt.db.execute("SELECT payload FROM log_events"))
        assert canary_a.encode() not in raw_log and canary_b.encode() not in raw_log

        forget = _forget_everything("t1", "a")
        rt.append([forget])

        # The erasure record: counts and ids, no content.
        records = [e for _, e in rt.log.scan() if isinstance(e, ErasureRecorded)]
        assert len(records) == 1 and records[0].request_id == forget.event_id
        assert records[0].scope == "everything" and records[0].keys_destroyed >= 1
        assert records[0].memories_erased >= 1
        # A's turns decode as shredded; B's still read.
        turns = [e for _, e in rt.log.scan(types=("TurnRecorded",)) if isinstance(e, TurnRecorded)]
        assert all(t.content == "" for t in turns if t.user_id == "a")
        assert all(canary_b in t.content for t in turns if t.user_id == "b")
        # Lineage of a forgotten memory: that it was forgotten, and when; never the text.
        forgotten = records[0].memory_ids[0]
        lineage = rt.lineage("t1", "a", forgotten)
        assert lineage and lineage[-1]["change"] == "deleted" and canary_a not in repr(lineage)
        assert rt.store.list_memories("t1", "a", ("active", "replaced", "retired", "archived")) == []

        if rt.analytics is not None:
            _check_analytics(rt, forget, forgotten, canary_b)
        # B is untouched, in memory, recall and replay.
        assert rt.store.list_memories("t1", "b") == b_before
        assert _recall(rt, "b", canary_b) == b_recall_before
        state = rt.store.state_hash()
        assert rt.replay() == state
        assert rt.store.list_memories("t1", "b") == b_before
        assert rt.store.list_memories("t1", "a") == []
    # Every byte of the data folder, closed (WAL folded in): nothing of A, B still there.
    leftovers = find([canary_a, *PII.values()], data)
    assert leftovers == {}, leftovers
    assert find([canary_b], data), "the scan must see B's memories (or it proves nothing)"


def test_other_events_of_a_forgotten_user_decode_without_text(tmp_path: Path) -> None:
    canary = "vexmoor" + uuid.uuid4().hex[:10]
    with EmbeddedRuntime(tmp_path / "d") as rt:
        rt.ingest([turn(f"I really love {canary} and always will", user="a")])
        rt.append([_forget_everything("t1", "a")])
        for _, event in rt.log.scan():
            assert canary not in event.model_dump_json(), event.type
        # A speaks again: a new key, readable again; the old text stays gone.
        rt.ingest([turn("I really love sailing and always will", user="a", message_id="again-1")])
        assert [m.content for m in rt.store.list_memories("t1", "a")] == ["User loves sailing and always will"]


def test_replaced_versions_are_forgotten_too(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "d") as rt:
        rt.ingest([turn("I live in Zorbtown", user="a"), turn("I moved, I live in Quexville now", user="a")])
        every = ("active", "replaced", "retired", "archived")
        kept = rt.store.list_memories("t1", "a", every)
        assert any(m.status != "active" for m in kept), [(m.status, m.content) for m in kept]
        rt.append([_forget_everything("t1", "a")])
        assert rt.store.list_memories("t1", "a", every) == []
        for _, event in rt.log.scan():
            assert "Zorbtown" not in event.model_dump_json() and "Quexville" not in event.model_dump_json()


def _check_analytics(rt: EmbeddedRuntime, forget: ForgetRequested, forgotten: str, canary_b: str) -> None:
    """Analysts see the erasure (shipped SQL) and that the memory was forgotten, and when; no text."""
    assert rt.analytics is not None
    client = rt.analytics.projector.client
    (row,) = run_query(client, resolve_query("erasures").read_text(), {"tenant": "t1"}).as_dicts()
    assert row["scope"] == "everything" and row["requests"] == 1 and row["users_shredded"] == 1
    lineage = run_query(client, resolve_query("memory_lineage").read_text(),
                        {"tenant": "t1", "user": "a", "memory_id": forgotten}).as_dicts()
    assert lineage[-1]["change"] == "deleted"
    assert all(not r["before_content"] and not r["after_content"] and not r["turn_content"] for r in lineage)
    b_turns = client.query("SELECT content FROM turns WHERE user_id = 'b'").result_rows
    assert any(canary_b in r[0] for r in b_turns)


class _Crash(Exception):
    pass


def test_a_forget_cut_short_by_a_crash_is_finished_on_reopen(tmp_path: Path) -> None:
    canary = "crashmoor" + uuid.uuid4().hex[:8]
    data = tmp_path / "d"
    with EmbeddedRuntime(data) as rt:
        rt.ingest([turn(f"I really love {canary} and always will", user="a")])

        def crash() -> list[object]:
            raise _Crash("power cut after the forget committed")

        rt.eraser.complete = crash  # type: ignore[method-assign]
        with pytest.raises(_Crash):
            rt.append([_forget_everything("t1", "a")])
        assert rt.store.list_memories("t1", "a") == []  # the forget itself committed
        assert any(canary in e.model_dump_json() for _, e in rt.log.scan())  # but the key survived
    with EmbeddedRuntime(data) as again:
        again.pump()
        (record,) = [e for _, e in again.log.scan(types=("ErasureRecorded",))]
        assert isinstance(record, ErasureRecorded) and record.keys_destroyed == 1 and record.memories_erased == 1
        assert not any(canary in e.model_dump_json() for _, e in again.log.scan())
    assert find([canary], data) == {}


class _Failing:
    """A processor that fails on one event (everything else it leaves alone): a bug in a later batch."""

    name = "failing-probe"
    state_type = None
    consumes = ("TurnRecorded",)

    def __init__(self, poison: str) -> None:
        self.poison = poison

    def state_key(self, event: object) -> None:
        return None

    def process(self, state: None, event: TurnRecorded, ctx: object) -> tuple[None, list[object]]:
        if event.message_id == self.poison:
            raise RuntimeError("a processor bug in the batch after the forget")
        return None, []


def test_a_processor_failure_in_a_later_batch_does_not_undo_a_committed_forget(tmp_path: Path) -> None:
    canary = "laterfail" + uuid.uuid4().hex[:8]
    with EmbeddedRuntime(tmp_path / "d", batch_size=1) as rt:
        rt.ingest([turn(f"I really love {canary} and always will", user="a")])
        rt._routes.setdefault("TurnRecorded", []).append(_Failing("poison-1"))  # type: ignore[arg-type]
        poison = to_turn_event(turn("I prefer tea", user="b", message_id="poison-1"), T0)
        rt.append([_forget_everything("t1", "a"), poison], process=False)
        rt.pump()
        assert [e for _, e in rt.log.scan(types=("ErasureRecorded",))], "the committed forget lost its erasure"
        assert not any(canary in e.model_dump_json() for _, e in rt.log.scan())
