"""The /v1 endpoints. Handlers are thin: parse, authenticate, call the service, return its model."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, Union

import anyio
import anyio.to_thread
from fastapi import APIRouter, Body, Depends, Path, Query, Request

from pydantic import Discriminator, Tag

import engram
from engram.schemas.base import Identifier
from engram.schemas.events import SummarySnapshotted
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import GlobalCard, MemoryRecord

from .auth import Principal, host_is_loopback, is_loopback, token_from_headers
from .cards import CardService
from .guard import ARRIVED
from .errors import Forbidden, TooLarge, no_summary
from .models import (
    CardAgents, CardCreate, CardUpdate, CardVersion, ControlResult, CorrectionBody, FeedbackRequest, FeedbackResult,
    ForgetBody, HealthInfo, IngestResult, LineageStep, MetricsInfo, ProfileResponse, RecallQuery, RecallResponse,
    SearchQuery,
    SearchResponse, TurnBatch, UserScope,
)
from .service import AccessService, search_response

T = TypeVar("T")
service_routes = APIRouter(tags=["service"])
memory_routes = APIRouter(tags=["memory"])
card_routes = APIRouter(prefix="/cards", tags=["global cards"])


def _client_host(request: Request) -> str | None:
    return request.client.host if request.client else None


async def principal(request: Request) -> Principal:
    """The caller, from `Authorization: Bearer <key>` or `X-API-Key` (open mode: loopback only).

    In open mode the Host header must name a loopback address too: a page on another site whose name
    was rebound to 127.0.0.1 (DNS rebinding) sends its own host name and is refused. The dependencies
    are `async` (they do no I/O): a sync one would cost each request a hop to the thread pool.
    """
    keys = request.app.state.keys
    if keys.open and not host_is_loopback(request.headers):
        raise Forbidden("no API keys are configured: only requests to a loopback host name are served",
                        "loopback_only")
    return keys.principal(token_from_headers(request.headers), _client_host(request))


async def access_service(request: Request) -> AccessService:
    return request.app.state.access


async def card_service(request: Request) -> CardService:
    return request.app.state.cards


Who = Annotated[Principal, Depends(principal)]
Access = Annotated[AccessService, Depends(access_service)]
Cards = Annotated[CardService, Depends(card_service)]
Tenant = Annotated[Identifier, Query(description="tenant id")]
User = Annotated[Identifier, Query(description="user id")]
ItemId = Annotated[str, Path(min_length=1, max_length=128)]


def _turns_shape(value: Any) -> str:
    return "batch" if isinstance(value, dict) and "turns" in value else "turn"


OneOrMany = Annotated[
    Union[Annotated[TurnBatch, Tag("batch")], Annotated[TurnInput, Tag("turn")]],
    Discriminator(_turns_shape),
]


# -- service ------------------------------------------------------------------------
@service_routes.get("/health", response_model=HealthInfo, summary="Liveness and how the service is secured")
def health(request: Request, access: Access) -> HealthInfo:
    keys = request.app.state.keys
    if keys.open and not is_loopback(_client_host(request)):
        raise Forbidden("no API keys are configured: only loopback clients are served", "loopback_only")
    access.backend.ping()
    return HealthInfo(status="ok", runtime=access.backend.name, version=engram.__version__,
                      auth="loopback-only" if keys.open else "api-keys")


@service_routes.get("/metrics", response_model=MetricsInfo, summary="Counters (admin key)")
def metrics(who: Who, access: Access) -> MetricsInfo:
    who.check_admin()
    counters = access.metrics.snapshot()
    counters.update({f"runtime.{k}": v for k, v in access.backend.counters().items()})
    return MetricsInfo(counters=dict(sorted(counters.items())))


# -- ingest, recall, feedback -----------------------------------------------------------
@memory_routes.post("/turns", response_model=IngestResult, summary="Ingest one turn or a batch {turns: [...]}",
                    responses={409: {"description": "a message id was re-sent with other content (`error.turns` "
                                                    "names each such turn; the other turns were ingested)"}})
async def post_turns(body: Annotated[OneOrMany, Body()], who: Who, access: Access,
                     request: Request) -> IngestResult:
    turns: list[TurnInput | dict[str, Any]] = list(body.turns) if isinstance(body, TurnBatch) else [body]
    limit = request.app.state.limits.max_batch_turns
    if len(turns) > limit:
        raise TooLarge(f"a batch holds at most {limit} turns, got {len(turns)}", "batch_too_large")
    return await in_writer(request, access.ingest, who, turns)


WRITER_THREADS = 2
"""Threads writes (ingest, feedback, user controls) may run on at once. The runtime serialises writes
anyway: those beyond these wait here, holding no thread of the shared pool, so reads (recall, search,
listings) never queue behind them."""


async def in_writer(request: Request, call: Callable[..., T], *args: Any) -> T:
    """`call(*args)` on one of the writer's threads (ingest, feedback, the user controls)."""
    limiter = getattr(request.app.state, "writer_threads", None)
    if limiter is None:
        limiter = request.app.state.writer_threads = anyio.CapacityLimiter(WRITER_THREADS)
    return await anyio.to_thread.run_sync(call, *args, limiter=limiter)


@memory_routes.post("/recall", response_model=RecallResponse, summary="Assemble the memory context")
def post_recall(body: RecallQuery, who: Who, access: Access, request: Request) -> RecallResponse:
    arrived = request.scope.get(ARRIVED)
    spent_ms = (time.perf_counter() - arrived) * 1000 if isinstance(arrived, float) else 0.0
    return access.recall(who, body, spent_ms)


@memory_routes.post("/search", response_model=SearchResponse,
                    summary="Search a user's memories (a new user or session is not an error)")
def post_search(body: SearchQuery, who: Who, access: Access) -> SearchResponse:
    found = access.search(who, body.tenant, body.user, body.session, body.query, body.limit)
    return search_response(found)


@memory_routes.post("/feedback", response_model=FeedbackResult, summary="Good/bad verdict on one recall")
async def post_feedback(body: FeedbackRequest, who: Who, access: Access, request: Request) -> FeedbackResult:
    return await in_writer(request, access.feedback, who, body)


@memory_routes.get("/sessions/{session}/summary", response_model=SummarySnapshotted,
                   summary="Latest summary of a session")
def get_summary(session: ItemId, tenant: Tenant, user: User, who: Who, access: Access) -> SummarySnapshotted:
    snapshot = access.summary(who, tenant, user, session)
    if snapshot is None:
        raise no_summary(session)
    return snapshot


# -- memories and user controls ------------------------------------------------------------
@memory_routes.get("/memories", response_model=list[MemoryRecord], summary="What is remembered about a user")
def list_memories(tenant: Tenant, user: User, who: Who, access: Access,
                  status: Literal["active", "all"] = "active") -> list[MemoryRecord]:
    return access.memories(who, tenant, user, status)


@memory_routes.get("/profile", response_model=ProfileResponse,
                   summary="The user's standing profile: what every recall starts with")
def get_profile(tenant: Tenant, user: User, who: Who, access: Access) -> ProfileResponse:
    return access.profile(who, tenant, user)


@memory_routes.get("/memories/{memory_id}", response_model=MemoryRecord)
def get_memory(memory_id: ItemId, tenant: Tenant, user: User, who: Who, access: Access) -> MemoryRecord:
    return access.memory(who, tenant, user, memory_id)


@memory_routes.get("/memories/{memory_id}/lineage", response_model=list[LineageStep],
                   summary="How a memory came to be, back to its L0 turns")
def get_lineage(memory_id: ItemId, tenant: Tenant, user: User, who: Who, access: Access) -> list[LineageStep]:
    return access.lineage(who, tenant, user, memory_id)


@memory_routes.post("/memories/{memory_id}/correct", response_model=ControlResult)
async def correct(memory_id: ItemId, body: CorrectionBody, who: Who, access: Access,
                  request: Request) -> ControlResult:
    return await in_writer(request, access.correct, who, body.tenant, body.user, memory_id, body.content)


@memory_routes.post("/memories/{memory_id}/pin", response_model=ControlResult)
async def pin(memory_id: ItemId, body: UserScope, who: Who, access: Access, request: Request) -> ControlResult:
    return await in_writer(request, access.pin, who, body.tenant, body.user, memory_id, True)


@memory_routes.post("/memories/{memory_id}/unpin", response_model=ControlResult)
async def unpin(memory_id: ItemId, body: UserScope, who: Who, access: Access, request: Request) -> ControlResult:
    return await in_writer(request, access.pin, who, body.tenant, body.user, memory_id, False)


@memory_routes.delete("/memories/{memory_id}", response_model=ControlResult, summary="Forget one memory")
async def forget_one(memory_id: ItemId, tenant: Tenant, user: User, who: Who, access: Access,
                     request: Request) -> ControlResult:
    return await in_writer(request, access.forget_one, who, tenant, user, memory_id)


@memory_routes.post("/forget", response_model=ControlResult,
                    summary="Forget memories by id, by topic text, or everything")
async def forget(body: ForgetBody, who: Who, access: Access, request: Request) -> ControlResult:
    return await in_writer(request, access.forget, who, body)


# -- global cards ----------------------------------------------------------------------------
@card_routes.get("", response_model=list[GlobalCard], summary="List cards, by folder, tag or agent")
def list_cards(tenant: Tenant, user: User, who: Who, cards: Cards, folder: str | None = None,
               tag: str | None = None, agent: str | None = None,
               include_deleted: bool = False) -> list[GlobalCard]:
    return cards.list_cards(who, tenant, user, folder, tag, agent, include_deleted)


@card_routes.post("", response_model=GlobalCard, status_code=201)
def create_card(body: CardCreate, who: Who, cards: Cards) -> GlobalCard:
    return cards.create(who, body)


@card_routes.get("/{card_id}", response_model=GlobalCard)
def get_card(card_id: ItemId, tenant: Tenant, user: User, who: Who, cards: Cards) -> GlobalCard:
    return cards.get(who, tenant, user, card_id)


@card_routes.patch("/{card_id}", response_model=GlobalCard, summary="Change the fields given")
def update_card(card_id: ItemId, body: CardUpdate, who: Who, cards: Cards) -> GlobalCard:
    return cards.update(who, card_id, body)


@card_routes.post("/{card_id}/enable", response_model=GlobalCard)
def enable_card(card_id: ItemId, body: CardVersion, who: Who, cards: Cards) -> GlobalCard:
    return cards.set_enabled(who, body.tenant, body.user, card_id, True, body.expected_version)


@card_routes.post("/{card_id}/disable", response_model=GlobalCard)
def disable_card(card_id: ItemId, body: CardVersion, who: Who, cards: Cards) -> GlobalCard:
    return cards.set_enabled(who, body.tenant, body.user, card_id, False, body.expected_version)


@card_routes.post("/{card_id}/bind", response_model=GlobalCard, summary="Bind agents to the card")
def bind_card(card_id: ItemId, body: CardAgents, who: Who, cards: Cards) -> GlobalCard:
    return cards.bind(who, body.tenant, body.user, card_id, body.agent_ids, body.expected_version)


@card_routes.post("/{card_id}/unbind", response_model=GlobalCard, summary="Unbind agents from the card")
def unbind_card(card_id: ItemId, body: CardAgents, who: Who, cards: Cards) -> GlobalCard:
    return cards.unbind(who, body.tenant, body.user, card_id, body.agent_ids, body.expected_version)


@card_routes.delete("/{card_id}", response_model=GlobalCard, summary="Delete a card (logically)")
def delete_card(card_id: ItemId, tenant: Tenant, user: User, who: Who, cards: Cards,
                expected_version: Annotated[int | None, Query(ge=1, description=(
                    "the card version the delete was decided on; another current version is a 409 "
                    "version_conflict"))] = None) -> GlobalCard:
    return cards.delete(who, tenant, user, card_id, expected_version)
