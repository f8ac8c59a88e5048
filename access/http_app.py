"""The HTTP service: a FastAPI app under /v1, wrapped in the size-limiting Guard.

`create_app` builds the FastAPI app (its OpenAPI is committed as
`access/openapi.json`); `create_server_app` adds the Guard and is what
`engram serve` runs. Every error is `{"error": {"code": ..., "message": ...}}`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

import engram

from .auth import KeyRing
from .backend import MemoryBackend
from .cards import CardService
from .errors import AccessError
from .guard import ASGIApp, Guard
from .metrics import Metrics
from .models import ErrorBody
from .routes import card_routes, memory_routes, service_routes
from .service import AccessService

log = logging.getLogger("engram.access")

ERROR_RESPONSES = {status: {"model": ErrorBody} for status in (400, 401, 403, 404, 413, 422)}
STATUS_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 406: "not_acceptable",
                415: "unsupported_media_type"}


@dataclass(frozen=True)
class Limits:
    """Request limits; every one can be set from the environment."""

    max_body_bytes: int = 4 * 1024 * 1024
    max_batch_turns: int = 500

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if env is None else env
        return cls(int(env.get("ENGRAM_MAX_BODY_BYTES", cls.max_body_bytes)),
                   int(env.get("ENGRAM_MAX_BATCH_TURNS", cls.max_batch_turns)))


def create_app(backend: MemoryBackend | None = None, keys: KeyRing | None = None,
               limits: Limits | None = None, metrics: Metrics | None = None) -> FastAPI:
    """The FastAPI app. Without a back end it still describes itself (for the OpenAPI export)."""
    app = FastAPI(title="Engram", version=engram.__version__, openapi_url="/v1/openapi.json",
                  docs_url="/v1/docs", redoc_url=None, responses=ERROR_RESPONSES,  # type: ignore[arg-type]
                  description="Event-sourced long-term memory for AI agents: ingest, recall, feedback, "
                              "global cards and user controls. Authenticate with `Authorization: Bearer <key>`.")
    metrics = metrics or Metrics()
    app.state.keys = keys or KeyRing()
    app.state.limits = limits or Limits()
    app.state.metrics = metrics
    if backend is not None:
        app.state.access = AccessService(backend, metrics)
        app.state.cards = CardService(app.state.access)
    for router in (service_routes, memory_routes, card_routes):
        app.include_router(router, prefix="/v1")
    _install_error_handlers(app)
    return app


def create_server_app(backend: MemoryBackend, keys: KeyRing, limits: Limits | None = None) -> ASGIApp:
    """The app `engram serve` runs: the FastAPI app behind the Guard (size limit, status counts)."""
    limits = limits or Limits()
    metrics = Metrics()
    from .app import pre_authorizer

    app = create_app(backend, keys, limits, metrics)
    return Guard(app, limits.max_body_bytes, metrics, authorize=pre_authorizer(keys))


def _error(status: int, code: str, message: str) -> JSONResponse:
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # never echo what cannot be sent
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AccessError)
    async def access_error(request: Request, exc: AccessError) -> JSONResponse:
        request.app.state.metrics.add(f"errors.{exc.code}")
        exc.message = exc.message.encode("utf-8", "backslashreplace").decode("utf-8")
        return JSONResponse(exc.body(), status_code=exc.status,
                            headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "malformed_json", "the request body is not valid JSON")
        request.app.state.metrics.add("errors.invalid_request")
        return _error(422, "invalid_request", describe_errors(errors))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = STATUS_CODES.get(exc.status_code, "http_error")
        message = str(exc.detail) if exc.status_code != 404 else f"no such endpoint: {request.url.path}"
        return _error(exc.status_code, code, message)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        request.app.state.metrics.add("errors.internal")
        return _error(500, "internal_error", "internal error (logged on the server)")


def describe_errors(errors: list[dict[str, object]], limit: int = 5) -> str:
    """`body.turns.0.content: String should have at most 32000 characters; ...`"""
    parts = []
    for error in errors[:limit]:
        loc = error.get("loc", ())
        location = ".".join(str(p) for p in loc) if isinstance(loc, (list, tuple)) else str(loc)
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more
