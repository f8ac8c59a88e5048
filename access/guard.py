"""An outer ASGI layer for both servers: request size limit, optional auth, status counting.

The body is read (up to the limit) before the app sees it, so an oversize
request — with or without Content-Length — is answered 413 in the error shape
and the app never parses it. With an `authorize` callback every HTTP request
must pass it first, before any of its body is read (an unauthenticated upload
holds no memory). The arrival time is left in the scope (`ARRIVED`), so a
recall's deadline counts the time spent queued.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
import time
from typing import Any

import orjson

from .errors import AccessError, TooLarge
from .metrics import Metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ARRIVED = "engram.arrived"
"""Scope key: `time.perf_counter()` when the request reached the Guard (deadlines count from there)."""
Authorize = Callable[[Scope], None]
"""Raises an AccessError to refuse the request; may store what it learnt in the scope."""


class Guard:
    """Wraps an ASGI app: limits the body, runs `authorize`, counts responses by status."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, metrics: Metrics, prefix: str = "http",
                 authorize: Authorize | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.prefix = prefix
        self.authorize = authorize

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.setdefault(ARRIVED, time.perf_counter())
        counted = self._counting(send)
        try:
            if self.authorize is not None:
                self.authorize(scope)
            replay = await self._read_body(scope, receive)
        except AccessError as refused:
            self.metrics.add(f"{self.prefix}.refused.{refused.code}")
            await send_error(counted, refused)
            return
        await self.app(scope, replay, counted)

    def _counting(self, send: Send) -> Send:
        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.metrics.add(f"{self.prefix}.responses.{message['status'] // 100}xx")
            await send(message)
        return counted

    async def _read_body(self, scope: Scope, receive: Receive) -> Receive:
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            raise self._too_large()
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return _replay([message], receive)
            size += len(message.get("body", b""))
            if size > self.max_body_bytes:
                raise self._too_large()
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        return _replay([{"type": "http.request", "body": b"".join(chunks), "more_body": False}], receive)

    def _too_large(self) -> TooLarge:
        return TooLarge(f"request body larger than {self.max_body_bytes} bytes")


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()
    return replayed


async def send_error(send: Send, error: AccessError) -> None:
    body = orjson.dumps(error.body())
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
