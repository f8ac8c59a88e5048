"""The Python client, sync and async, against the real server."""

from __future__ import annotations

import anyio
import pytest

from engram.access.client import (
    AsyncEngramClient, EngramAuthError, EngramClient, EngramInvalid, EngramNotFound, EngramUnavailable,
)
from engram.access.models import CardCreate, CardUpdate, FeedbackRequest, ForgetBody, RecallQuery
from engram.schemas.inputs import TurnInput

from .conftest import Deployment, free_port, new_id


def _turn(tenant: str, user: str, content: str, message_id: str | None = None) -> TurnInput:
    return TurnInput(tenant=tenant, user=user, agent="coach", session="s1", role="user",
                     message_id=message_id or new_id("m"), content=content)


def _query(tenant: str, user: str, question: str, session: str = "s1") -> RecallQuery:
    return RecallQuery(tenant=tenant, user=user, agent="coach", session=session, question=question)


def test_the_sync_client_covers_ingest_recall_feedback_controls_and_cards(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    with EngramClient(d.url, api_key=d.key_a) as engram:
        assert engram.ingest(_turn(d.tenant_a, user, "I prefer green tea in the morning")).appended == 1
        batch = [_turn(d.tenant_a, user, "My name is Ana Lima"), _turn(d.tenant_a, user, "I live in Porto")]
        assert engram.ingest(batch).appended == 2
        memories = engram.memories(d.tenant_a, user)
        assert {m.slot for m in memories} == {"user_preference", "user_profile.name", "user_fact.location"}
        tea = next(m for m in memories if m.slot == "user_preference")
        assert engram.memory(d.tenant_a, user, tea.memory_id) == tea
        assert engram.lineage(d.tenant_a, user, tea.memory_id)[0].change == "created"
        recall = engram.recall(_query(d.tenant_a, user, "Which tea?"))
        assert recall.injected and tea.memory_id in {i.memory_id for i in recall.items}
        feedback = engram.feedback(FeedbackRequest(tenant=d.tenant_a, user=user, recall_id=recall.recall_id, rating=1))
        assert feedback.recall_id == recall.recall_id
        assert engram.pin(d.tenant_a, user, tea.memory_id).affected == 1
        assert engram.pin(d.tenant_a, user, tea.memory_id, pinned=False).affected == 1
        assert engram.correct(d.tenant_a, user, tea.memory_id, "User prefers jasmine tea").changes[0].after \
            == "User prefers jasmine tea"
        card = engram.create_card(CardCreate(tenant=d.tenant_a, user=user, name="Ana", profile="nurse",
                                             tags=["health"], folder="me", agent_ids=["coach"]))
        assert engram.update_card(card.card_id, CardUpdate(tenant=d.tenant_a, user=user, name="Ana L.")).version == 2
        assert not engram.set_card_enabled(d.tenant_a, user, card.card_id, False).enabled
        assert engram.bind_card(d.tenant_a, user, card.card_id, ["planner"]).agent_ids == ("coach", "planner")
        assert engram.bind_card(d.tenant_a, user, card.card_id, ["coach"], bind=False).agent_ids == ("planner",)
        assert [c.card_id for c in engram.cards(d.tenant_a, user, tag="HEALTH", agent="planner")] == [card.card_id]
        assert engram.delete_card(d.tenant_a, user, card.card_id).deleted
        assert engram.cards(d.tenant_a, user) == []
        assert engram.forget_one(d.tenant_a, user, tea.memory_id).affected == 1
        assert engram.forget(ForgetBody(tenant=d.tenant_a, user=user, everything=True)).affected == 2
        assert engram.memories(d.tenant_a, user) == []


def test_the_sync_client_raises_typed_errors_and_safe_recall_never_does(deployment: Deployment) -> None:
    d = deployment
    with EngramClient(d.url, api_key=d.key_a) as engram:
        assert engram.memories(d.tenant_a, new_id("user")) == []  # a new user has no memories: not an error
        with pytest.raises(EngramNotFound) as missing:
            engram.memory(d.tenant_a, new_id("user"), "m1")
        assert missing.value.code == "unknown_user" and missing.value.status == 404
        with pytest.raises(EngramAuthError) as foreign:
            engram.memories(d.tenant_b, "u")
        assert foreign.value.code == "forbidden_tenant"
        with pytest.raises(EngramInvalid):
            engram.card(d.tenant_a, "u", "x" * 300)
        query = _query(d.tenant_a, new_id("user"), "anything?")
        empty = engram.safe_recall(query)
        assert not empty.degraded and not empty.user_known and empty.context == "" and engram.failures == 0
        assert [m.content for m in empty.messages] == ["anything?"]
        nothing = engram.search(d.tenant_a, new_id("user"), "tea")
        assert nothing.results == [] and not nothing.user_known
    with EngramClient(f"http://127.0.0.1:{free_port()}", timeout=2) as nowhere:
        with pytest.raises(EngramUnavailable):
            nowhere.health()
        assert nowhere.safe_recall(query).degraded and nowhere.failures == 1


def test_the_async_client_does_the_same_round_trip(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")

    async def run() -> None:
        async with AsyncEngramClient(d.url, api_key=d.key_a) as engram:
            assert (await engram.health()).status == "ok"
            await engram.ingest([_turn(d.tenant_a, user, "I prefer green tea in the morning")])
            recall = await engram.recall(_query(d.tenant_a, user, "Which tea?"))
            assert recall.injected
            await engram.feedback(FeedbackRequest(tenant=d.tenant_a, user=user, recall_id=recall.recall_id,
                                                  rating="good"))
            [memory] = await engram.memories(d.tenant_a, user)
            assert (await engram.pin(d.tenant_a, user, memory.memory_id)).affected == 1
            assert (await engram.forget(ForgetBody(tenant=d.tenant_a, user=user, everything=True))).affected == 1
            assert not (await engram.recall(_query(d.tenant_a, user, "Which tea?"))).injected
            new_session = await engram.recall(_query(d.tenant_a, user, "Which tea?", session="nope"))
            assert not new_session.session_known and new_session.user_known and not new_session.degraded
            with pytest.raises(EngramNotFound):
                await engram.summary(d.tenant_a, user, "nope")
            assert (await engram.search(d.tenant_a, user, "tea", session="nope")).session_known is False
            with pytest.raises(EngramAuthError):
                await engram.metrics()
        async with AsyncEngramClient(d.url, api_key=d.admin_key) as admin:
            assert (await admin.metrics()).counters["recall.served"] >= 2

    anyio.run(run)
