"""The embedded runtime: durable log, determinism, rebuilds, failure handling, isolation."""

from __future__ import annotations

import string
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.recall.service import RecallRequest
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.codec import encode
from engram.schemas.events import DeadLettered
from engram.streams.processor import ProcessorContext
from tests.drivers import T0, turn
from tests.generators import conversations


def _derived_log(runtime: EmbeddedRuntime) -> list[bytes]:
    return [encode(e) for _, e in runtime.log.scan() if e.type != "RecallServed"]


def test_two_fresh_runtimes_derive_identical_logs_and_state(tmp_path: Path) -> None:
    turns = conversations(seed=7, turns=400)
    with EmbeddedRuntime(tmp_path / "a") as a, EmbeddedRuntime(tmp_path / "b") as b:
        a.ingest(turns)
        b.ingest(turns)
        assert _derived_log(a) == _derived_log(b)
        assert a.store.state_hash() == b.store.state_hash()
        assert a.log.count(("MemoryChanged",)) > 50


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dropping_the_projection_and_replaying_reproduces_the_state(tmp_path: Path, seed: int) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest(conversations(seed=seed, turns=300))
        before = runtime.store.state_hash()
        memories = runtime.store.list_memories("tenant0", "user0", ("active", "replaced"))
        assert runtime.replay() == before
        assert runtime.store.list_memories("tenant0", "user0", ("active", "replaced")) == memories


def test_state_survives_reopening_the_data_folder(tmp_path: Path) -> None:
    turns = conversations(seed=4, turns=200)
    with EmbeddedRuntime(tmp_path / "one") as whole:
        whole.ingest(turns)
        expected = whole.store.state_hash()
    with EmbeddedRuntime(tmp_path / "two") as first:
        first.ingest(turns[:100])
    with EmbeddedRuntime(tmp_path / "two") as second:
        second.ingest(turns[100:])
        assert second.log.count(("TurnRecorded",)) == 200
    # Same turns, two ingest calls: the same memories (summaries may be cut differently).
    with EmbeddedRuntime(tmp_path / "two") as again, EmbeddedRuntime(tmp_path / "one") as whole:
        for tenant, user in (("tenant0", "user0"), ("tenant1", "user2")):
            assert [m.content for m in again.store.list_memories(tenant, user)] == \
                   [m.content for m in whole.store.list_memories(tenant, user)]
        assert whole.store.state_hash() == expected


class _Crash(RuntimeError):
    pass


def test_a_crash_mid_batch_rolls_back_and_the_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    turns = conversations(seed=11, turns=300)
    with EmbeddedRuntime(tmp_path / "clean") as clean:
        clean.ingest(turns)
        expected = clean.store.state_hash()
    crashing = EmbeddedRuntime(tmp_path / "crash", batch_size=50)
    real_apply = crashing.projector.apply
    calls = {"n": 0}

    def flaky_apply(event, position):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 137:
            raise _Crash("power cut")
        real_apply(event, position)

    crashing.projector.apply = flaky_apply  # type: ignore[method-assign]
    with pytest.raises(_Crash):
        crashing.ingest(turns)
    crashing.close()
    with EmbeddedRuntime(tmp_path / "crash") as resumed:
        assert 0 < resumed.log.count(("TurnRecorded",)) < len(turns)
        report = resumed.ingest(turns)  # the client retries the whole file
        assert report.duplicates == resumed.log.count(("TurnRecorded",)) - report.appended > 0
        assert resumed.store.state_hash() == expected


class _ExplodingEmbedder:
    """The default embedder, except that it fails on one poisoned text."""

    def __init__(self) -> None:
        self.inner = default_context().embedder
        self.model_id = self.inner.model_id
        self.dimensions = self.inner.dimensions

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if any("BOOM" in t for t in texts):
            raise ValueError("embedder bug")
        return self.inner.embed(texts)


def test_a_failing_event_is_dead_lettered_and_the_others_go_on(tmp_path: Path) -> None:
    base = default_context()
    ctx = ProcessorContext(config=base.config, embedder=_ExplodingEmbedder(), extractor=base.extractor,
                           summarizer=base.summarizer)
    with EmbeddedRuntime(tmp_path / "dlq", ctx=ctx) as runtime:
        runtime.ingest([turn("我很喜欢猫咪"), turn("I love BOOM and everything about it"), turn("我是前端开发")])
        letters = [e for _, e in runtime.log.scan(types=("DeadLettered",))]
        assert len(letters) == 1 and isinstance(letters[0], DeadLettered)
        assert "embedder bug" in letters[0].reason and "BOOM" in letters[0].raw
        contents = [m.content for m in runtime.store.list_memories("t1", "u1")]
        assert any("猫" in c for c in contents) and any("前端" in c for c in contents)
        assert runtime.counters["failed.consolidate"] == 1
        assert runtime.log.cursor("pipeline") == runtime.log.last_seq()


_ids = st.text(alphabet=string.ascii_letters + string.digits + "-_.:@中文", min_size=1, max_size=12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owners=st.lists(st.tuples(_ids, _ids), min_size=2, max_size=4, unique=True))
def test_no_recall_ever_returns_another_tenant_or_users_memory(tmp_path_factory, owners) -> None:
    folder = tmp_path_factory.mktemp("iso")
    with EmbeddedRuntime(folder) as runtime:
        secrets = {owner: f"秘密{i}号水果{i}{i}" for i, owner in enumerate(owners)}
        runtime.ingest([turn(f"我喜欢{secret}", tenant=t, user=u) for (t, u), secret in secrets.items()])
        for (tenant, user), own in secrets.items():
            result = runtime.recall(RecallRequest(tenant, user, "a1", "s1", "我喜欢什么水果", T0 + timedelta(days=1)))
            shown = result.memory_section + str(result.messages())
            assert own in shown
            assert not any(other in shown for owner, other in secrets.items() if owner != (tenant, user))
