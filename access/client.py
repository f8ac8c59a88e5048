"""Python client for the Engram HTTP API, sync (`EngramClient`) and async (`AsyncEngramClient`).

Both speak the same pydantic models as the server (`engram.access.models`):

    with EngramClient("http://127.0.0.1:8700", api_key="key1") as engram:
        engram.ingest(TurnInput(tenant="acme", user="u1", agent="coach", session="s1",
                                message_id="m1", role="user", content="I prefer tea"))
        context = engram.safe_recall(RecallQuery(tenant="acme", user="u1", agent="coach",
                                                 session="s1", question="What should I drink?"))

Errors come back as `EngramError` subclasses carrying the server's code and
message. `safe_recall` never raises: on any failure it returns an empty
context (inject nothing), so memory can never break the chat. A new session
or a new user is not a failure: `recall` answers with `session_known` /
`user_known` false (long-term memory only, or an empty context).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from engram.schemas.events import SummarySnapshotted
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import GlobalCard, MemoryRecord

from .models import (
    CardCreate, CardUpdate, ControlResult, FeedbackRequest, FeedbackResult, ForgetBody, HealthInfo,
    IngestResult, LineageStep, MetricsInfo, RecallQuery, RecallResponse, SearchQuery, SearchResponse,
)

T = TypeVar("T")


class EngramError(Exception):
    """An error answer of the API (or no answer at all: status 0, code `unreachable`)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class EngramAuthError(EngramError):
    """401 or 403: missing, unknown or out-of-scope key."""


class EngramNotFound(EngramError):
    """404: unknown tenant, user, session, memory, card or recall."""


class EngramInvalid(EngramError):
    """400, 413 or 422: the request was refused as sent."""


class EngramUnavailable(EngramError):
    """5xx, or the server could not be reached."""


def _error_for(status: int) -> type[EngramError]:
    if status in (401, 403):
        return EngramAuthError
    if status == 404:
        return EngramNotFound
    if status >= 500 or status == 0:
        return EngramUnavailable
    return EngramInvalid


def _raise_for(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "http_error", response.text[:500]
    raise _error_for(response.status_code)(response.status_code, code, message)


@dataclass(frozen=True)
class _Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] | None = None
    body: BaseModel | None = None

    def request(self) -> dict[str, Any]:
        json = self.body.model_dump(mode="json", exclude_unset=True) if self.body is not None else None
        params = {k: v for k, v in (self.params or {}).items() if v is not None}
        return {"method": self.method, "url": self.path, "params": params or None, "json": json}


def _model(kind: type[T]) -> Callable[[Any], T]:
    return TypeAdapter(kind).validate_python


def _scope(tenant: str, user: str) -> dict[str, str]:
    return {"tenant": tenant, "user": user}


class _Api:
    """Every endpoint as a `_Call`: one description shared by the sync and the async client."""

    @staticmethod
    def ingest(turns: TurnInput | Sequence[TurnInput]) -> _Call[IngestResult]:
        body: BaseModel = turns if isinstance(turns, TurnInput) else _Batch(turns=list(turns))
        return _Call("POST", "/v1/turns", _model(IngestResult), body=body)

    @staticmethod
    def recall(query: RecallQuery) -> _Call[RecallResponse]:
        return _Call("POST", "/v1/recall", _model(RecallResponse), body=query)

    @staticmethod
    def search(tenant: str, user: str, query: str, session: str | None, limit: int) -> _Call[SearchResponse]:
        body = SearchQuery(tenant=tenant, user=user, query=query, session=session, limit=limit)
        return _Call("POST", "/v1/search", _model(SearchResponse), body=body)

    @staticmethod
    def feedback(body: FeedbackRequest) -> _Call[FeedbackResult]:
        return _Call("POST", "/v1/feedback", _model(FeedbackResult), body=body)

    @staticmethod
    def memories(tenant: str, user: str, status: str = "active") -> _Call[list[MemoryRecord]]:
        return _Call("GET", "/v1/memories", _model(list[MemoryRecord]), {**_scope(tenant, user), "status": status})

    @staticmethod
    def memory(tenant: str, user: str, memory_id: str, suffix: str = "") -> _Call[Any]:
        kind: Any = list[LineageStep] if suffix else MemoryRecord
        return _Call("GET", f"/v1/memories/{memory_id}{suffix}", _model(kind), _scope(tenant, user))

    @staticmethod
    def control(tenant: str, user: str, memory_id: str, action: str, **fields: Any) -> _Call[ControlResult]:
        body = _Control(tenant=tenant, user=user, **fields)
        return _Call("POST", f"/v1/memories/{memory_id}/{action}", _model(ControlResult), body=body)

    @staticmethod
    def forget_one(tenant: str, user: str, memory_id: str) -> _Call[ControlResult]:
        return _Call("DELETE", f"/v1/memories/{memory_id}", _model(ControlResult), _scope(tenant, user))

    @staticmethod
    def forget(body: ForgetBody) -> _Call[ControlResult]:
        return _Call("POST", "/v1/forget", _model(ControlResult), body=body)

    @staticmethod
    def summary(tenant: str, user: str, session: str) -> _Call[SummarySnapshotted]:
        return _Call("GET", f"/v1/sessions/{session}/summary", _model(SummarySnapshotted), _scope(tenant, user))

    @staticmethod
    def cards(tenant: str, user: str, **filters: Any) -> _Call[list[GlobalCard]]:
        return _Call("GET", "/v1/cards", _model(list[GlobalCard]), {**_scope(tenant, user), **filters})

    @staticmethod
    def card(method: str, card_id: str, action: str = "", params: dict[str, Any] | None = None,
             body: BaseModel | None = None) -> _Call[GlobalCard]:
        path = f"/v1/cards/{card_id}" + (f"/{action}" if action else "")
        return _Call(method, path, _model(GlobalCard), params, body)

    @staticmethod
    def create_card(body: CardCreate) -> _Call[GlobalCard]:
        return _Call("POST", "/v1/cards", _model(GlobalCard), body=body)

    @staticmethod
    def health() -> _Call[HealthInfo]:
        return _Call("GET", "/v1/health", _model(HealthInfo))

    @staticmethod
    def metrics() -> _Call[MetricsInfo]:
        return _Call("GET", "/v1/metrics", _model(MetricsInfo))


class _Batch(BaseModel):
    turns: list[TurnInput]


class _Control(BaseModel):
    tenant: str
    user: str
    content: str | None = None
    agent_ids: list[str] | None = None


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class EngramClient:
    """Synchronous client. Use as a context manager, or call `close()`."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url, headers=_headers(api_key), timeout=timeout,
                                  transport=transport)
        self.failures = 0

    def _run(self, call: _Call[T]) -> T:
        try:
            response = self._http.request(**call.request())
        except httpx.HTTPError as exc:
            raise EngramUnavailable(0, "unreachable", str(exc)) from exc
        _raise_for(response)
        return call.parse(response.json())

    def ingest(self, turns: TurnInput | Sequence[TurnInput]) -> IngestResult:
        return self._run(_Api.ingest(turns))

    def recall(self, query: RecallQuery) -> RecallResponse:
        return self._run(_Api.recall(query))

    def safe_recall(self, query: RecallQuery) -> RecallResponse:
        """`recall` that never raises: any failure yields an empty context (counted in `failures`)."""
        try:
            return self.recall(query)
        except Exception:
            self.failures += 1
            return RecallResponse.empty(query)

    def search(self, tenant: str, user: str, query: str, session: str | None = None,
               limit: int = 10) -> SearchResponse:
        """Search a user's memories; a new user or session gives no results and a false flag, not an error."""
        return self._run(_Api.search(tenant, user, query, session, limit))

    def feedback(self, body: FeedbackRequest) -> FeedbackResult:
        return self._run(_Api.feedback(body))

    def memories(self, tenant: str, user: str, status: str = "active") -> list[MemoryRecord]:
        return self._run(_Api.memories(tenant, user, status))

    def memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        return self._run(_Api.memory(tenant, user, memory_id))

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
        return self._run(_Api.memory(tenant, user, memory_id, "/lineage"))

    def correct(self, tenant: str, user: str, memory_id: str, content: str) -> ControlResult:
        return self._run(_Api.control(tenant, user, memory_id, "correct", content=content))

    def pin(self, tenant: str, user: str, memory_id: str, pinned: bool = True) -> ControlResult:
        return self._run(_Api.control(tenant, user, memory_id, "pin" if pinned else "unpin"))

    def forget_one(self, tenant: str, user: str, memory_id: str) -> ControlResult:
        return self._run(_Api.forget_one(tenant, user, memory_id))

    def forget(self, body: ForgetBody) -> ControlResult:
        return self._run(_Api.forget(body))

    def summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted:
        return self._run(_Api.summary(tenant, user, session))

    def cards(self, tenant: str, user: str, folder: str | None = None, tag: str | None = None,
              agent: str | None = None, include_deleted: bool = False) -> list[GlobalCard]:
        return self._run(_Api.cards(tenant, user, folder=folder, tag=tag, agent=agent,
                                    include_deleted=include_deleted))

    def create_card(self, body: CardCreate) -> GlobalCard:
        return self._run(_Api.create_card(body))

    def card(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        return self._run(_Api.card("GET", card_id, params=_scope(tenant, user)))

    def update_card(self, card_id: str, body: CardUpdate) -> GlobalCard:
        return self._run(_Api.card("PATCH", card_id, body=body))

    def set_card_enabled(self, tenant: str, user: str, card_id: str, enabled: bool) -> GlobalCard:
        return self._run(_Api.card("POST", card_id, "enable" if enabled else "disable",
                                   body=_Control(tenant=tenant, user=user)))

    def bind_card(self, tenant: str, user: str, card_id: str, agent_ids: list[str], bind: bool = True) -> GlobalCard:
        return self._run(_Api.card("POST", card_id, "bind" if bind else "unbind",
                                   body=_Control(tenant=tenant, user=user, agent_ids=agent_ids)))

    def delete_card(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        return self._run(_Api.card("DELETE", card_id, params=_scope(tenant, user)))

    def health(self) -> HealthInfo:
        return self._run(_Api.health())

    def metrics(self) -> MetricsInfo:
        return self._run(_Api.metrics())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EngramClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncEngramClient:
    """Asynchronous client (same methods as `EngramClient`, awaited)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 10.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, headers=_headers(api_key), timeout=timeout,
                                       transport=transport)
        self.failures = 0

    async def _run(self, call: _Call[T]) -> T:
        try:
            response = await self._http.request(**call.request())
        except httpx.HTTPError as exc:
            raise EngramUnavailable(0, "unreachable", str(exc)) from exc
        _raise_for(response)
        return call.parse(response.json())

    async def ingest(self, turns: TurnInput | Sequence[TurnInput]) -> IngestResult:
        return await self._run(_Api.ingest(turns))

    async def recall(self, query: RecallQuery) -> RecallResponse:
        return await self._run(_Api.recall(query))

    async def safe_recall(self, query: RecallQuery) -> RecallResponse:
        """`recall` that never raises: any failure yields an empty context (counted in `failures`)."""
        try:
            return await self.recall(query)
        except Exception:
            self.failures += 1
            return RecallResponse.empty(query)

    async def search(self, tenant: str, user: str, query: str, session: str | None = None,
                     limit: int = 10) -> SearchResponse:
        return await self._run(_Api.search(tenant, user, query, session, limit))

    async def feedback(self, body: FeedbackRequest) -> FeedbackResult:
        return await self._run(_Api.feedback(body))

    async def memories(self, tenant: str, user: str, status: str = "active") -> list[MemoryRecord]:
        return await self._run(_Api.memories(tenant, user, status))

    async def memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        return await self._run(_Api.memory(tenant, user, memory_id))

    async def lineage(self, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
        return await self._run(_Api.memory(tenant, user, memory_id, "/lineage"))

    async def correct(self, tenant: str, user: str, memory_id: str, content: str) -> ControlResult:
        return await self._run(_Api.control(tenant, user, memory_id, "correct", content=content))

    async def pin(self, tenant: str, user: str, memory_id: str, pinned: bool = True) -> ControlResult:
        return await self._run(_Api.control(tenant, user, memory_id, "pin" if pinned else "unpin"))

    async def forget_one(self, tenant: str, user: str, memory_id: str) -> ControlResult:
        return await self._run(_Api.forget_one(tenant, user, memory_id))

    async def forget(self, body: ForgetBody) -> ControlResult:
        return await self._run(_Api.forget(body))

    async def summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted:
        return await self._run(_Api.summary(tenant, user, session))

    async def cards(self, tenant: str, user: str, folder: str | None = None, tag: str | None = None,
                    agent: str | None = None, include_deleted: bool = False) -> list[GlobalCard]:
        return await self._run(_Api.cards(tenant, user, folder=folder, tag=tag, agent=agent,
                                          include_deleted=include_deleted))

    async def create_card(self, body: CardCreate) -> GlobalCard:
        return await self._run(_Api.create_card(body))

    async def card(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        return await self._run(_Api.card("GET", card_id, params=_scope(tenant, user)))

    async def update_card(self, card_id: str, body: CardUpdate) -> GlobalCard:
        return await self._run(_Api.card("PATCH", card_id, body=body))

    async def set_card_enabled(self, tenant: str, user: str, card_id: str, enabled: bool) -> GlobalCard:
        return await self._run(_Api.card("POST", card_id, "enable" if enabled else "disable",
                                         body=_Control(tenant=tenant, user=user)))

    async def bind_card(self, tenant: str, user: str, card_id: str, agent_ids: list[str],
                        bind: bool = True) -> GlobalCard:
        return await self._run(_Api.card("POST", card_id, "bind" if bind else "unbind",
                                         body=_Control(tenant=tenant, user=user, agent_ids=agent_ids)))

    async def delete_card(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        return await self._run(_Api.card("DELETE", card_id, params=_scope(tenant, user)))

    async def health(self) -> HealthInfo:
        return await self._run(_Api.health())

    async def metrics(self) -> MetricsInfo:
        return await self._run(_Api.metrics())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEngramClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
