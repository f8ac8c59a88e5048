"""A scripted OpenAI-compatible HTTP server on loopback: the only test double of a model.

It answers `POST /v1/chat/completions` and `POST /v1/embeddings` the way the
real endpoints do (same JSON shapes, status codes, error bodies, usage), so
the adapters are driven through the real `openai` client. Answers come from
a script, per model name: queued replies first (in order), then the model's
responder function, then the server's default responder. Every request is
recorded. Scenarios: good answers, malformed JSON, slow answers (the client
times out), 429 with Retry-After, 500, 400 for an unsupported response_format.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from engram.core.embedding import HashingEmbedder
from engram.core.text import estimate_tokens


@dataclass(frozen=True)
class Request:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    received_at: float

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages") or [])

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m.get("role") == "system"), "")

    @property
    def prompt(self) -> str:
        """The last user message (the data part of the adapters' prompts)."""
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")

    @property
    def inputs(self) -> list[str]:
        raw = self.body.get("input", [])
        return [raw] if isinstance(raw, str) else list(raw)


@dataclass(frozen=True)
class Reply:
    """What to answer: a chat text, vectors, or an error status; optionally after a delay."""

    status: int = 200
    content: str = ""
    vectors: list[list[float]] | None = None
    delay_s: float = 0.0
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    usage: bool = True

    @classmethod
    def text(cls, content: str, delay_s: float = 0.0) -> Reply:
        return cls(content=content, delay_s=delay_s)

    @classmethod
    def json(cls, value: Any, delay_s: float = 0.0) -> Reply:
        return cls(content=json.dumps(value, ensure_ascii=False), delay_s=delay_s)

    @classmethod
    def malformed(cls) -> Reply:
        return cls(content='{"memories": [{"type": "user_fact", "content": "unterminated')

    @classmethod
    def slow(cls, seconds: float, content: str = "{}") -> Reply:
        return cls(content=content, delay_s=seconds)

    @classmethod
    def rate_limited(cls, retry_after_s: float = 0.0) -> Reply:
        return cls(status=429, error="Rate limit reached for requests",
                   headers={"retry-after": f"{retry_after_s:g}"})

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, error="The server had an error while processing your request")

    @classmethod
    def failure(cls, status: int, message: str) -> Reply:
        return cls(status=status, error=message)


Responder = Callable[[Request], Reply]


class ScriptedServer:
    """OpenAI-compatible endpoint on 127.0.0.1 answering from a script, recording every request."""

    def __init__(self, default: Responder | None = None, embed_dimensions: int = 64) -> None:
        self.requests: list[Request] = []
        self.embed_dimensions = embed_dimensions
        self._default = default
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._routes: dict[str, Responder] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- script ----------------------------------------------------------------
    def queue(self, model: str, *replies: Reply) -> None:
        """Replies for the next requests to `model`, in order (before its responder)."""
        with self._lock:
            self._queues[model].extend(replies)

    def route(self, model: str, responder: Responder) -> None:
        """Answer requests to `model` with `responder` once its queue is empty."""
        self._routes[model] = responder

    def requests_for(self, model: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.model == model]

    # -- lifecycle -----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering -------------------------------------------------------------------
    def _answer(self, path: str, body: dict[str, Any]) -> tuple[Request, Reply]:
        request = Request(path, body, time.monotonic())
        with self._lock:
            self.requests.append(request)
            queued = self._queues.get(request.model)
            reply = queued.popleft() if queued else None
        if reply is None:
            responder = self._routes.get(request.model) or self._default or _default_responder(self)
            reply = responder(request)
        return request, reply


def _default_responder(server: ScriptedServer) -> Responder:
    embedder = HashingEmbedder(server.embed_dimensions)

    def respond(request: Request) -> Reply:
        if request.path.endswith("/embeddings"):
            return Reply(vectors=[embedder.embed_one(t).tolist() for t in request.inputs])
        return Reply.failure(500, f"no script for model {request.model!r}")

    return respond


def chat_body(request: Request, reply: Reply) -> dict[str, Any]:
    prompt = sum(estimate_tokens(m.get("content", "")) for m in request.messages)
    out = estimate_tokens(reply.content)
    body: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{len(reply.content)}", "object": "chat.completion", "created": 0,
        "model": request.model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": reply.content}}],
    }
    if reply.usage:
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
    return body


def embeddings_body(request: Request, reply: Reply) -> dict[str, Any]:
    vectors = reply.vectors or []
    as_base64 = request.body.get("encoding_format") == "base64"
    data = [{"object": "embedding", "index": i,
             "embedding": base64.b64encode(np.asarray(v, dtype=np.float32).tobytes()).decode() if as_base64 else v}
            for i, v in enumerate(vectors)]
    tokens = sum(estimate_tokens(t) for t in request.inputs)
    return {"object": "list", "model": request.model, "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "invalid JSON body", "type": "invalid_request_error"}})
                return
            request, reply = server._answer(self.path, body)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.status != 200:
                kind = "rate_limit_error" if reply.status == 429 else "server_error"
                self._send(reply.status, {"error": {"message": reply.error, "type": kind, "code": None}},
                           reply.headers)
            elif self.path.endswith("/embeddings"):
                self._send(200, embeddings_body(request, reply))
            elif self.path.endswith("/chat/completions"):
                self._send(200, chat_body(request, reply))
            else:
                self._send(404, {"error": {"message": f"unknown path {self.path}", "type": "not_found"}})

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout scenario)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    return Handler
