"""Errors of the access layer. Each maps to one HTTP status and a stable code.

The HTTP app renders every one as `{"error": {"code": ..., "message": ...}}`;
the MCP server returns the message as a tool error; the Python client raises
them back from the response body.
"""

from __future__ import annotations

from typing import Any


class AccessError(Exception):
    """A request the access layer refuses, with an HTTP status and a stable code."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


class BadRequest(AccessError):
    """The request is well formed but cannot be carried out as asked."""


class Unauthorized(AccessError):
    """No credentials, or credentials nobody issued."""

    status = 401
    code = "unauthorized"


class Forbidden(AccessError):
    """Valid credentials that do not reach this tenant or operation."""

    status = 403
    code = "forbidden"


class NotFound(AccessError):
    """An unknown tenant, user, session, memory, card or recall."""

    status = 404
    code = "not_found"


class Conflict(AccessError):
    """The request contradicts what is recorded (a message id re-sent with other content)."""

    status = 409
    code = "conflict"

    def __init__(self, message: str, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code)
        self.details = details or {}

    def body(self) -> dict[str, Any]:
        """`{"error": {code, message, ...details}}`: `turns` (index, message_id, reason, message) and `ingested`."""
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class InvalidTurns(BadRequest):
    """Some turns of a batch were invalid and not recorded; the valid ones were (`details`: `turns`, each
    with index, message_id, reason and message, and `ingested`, what was recorded)."""

    status = 422
    code = "invalid_turns"

    def __init__(self, message: str, details: dict[str, Any], changes: list[Any] | None = None) -> None:
        super().__init__(message)
        self.details = details
        self.changes = changes or []
        """The memory changes the valid turns caused (`MemoryChange`)."""

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class TooLarge(AccessError):
    """The request body or batch is larger than the configured limit."""

    status = 413
    code = "payload_too_large"


class Unavailable(AccessError):
    """The memory back end could not answer in time."""

    status = 503
    code = "unavailable"


def unknown_user(tenant: str, user: str) -> NotFound:
    return NotFound(f"nothing is recorded for user {user!r} in tenant {tenant!r} (unknown tenant or user)",
                    "unknown_user")


def unknown_session(tenant: str, user: str, session: str) -> NotFound:
    return NotFound(f"session {session!r} of user {user!r} in tenant {tenant!r} is unknown: no turn of it "
                    "was ever recorded", "unknown_session")


def unknown_memory(memory_id: str) -> NotFound:
    return NotFound(f"no active memory {memory_id!r} for this user", "unknown_memory")


def invalid_input(errors: list[Any], limit: int = 5) -> BadRequest:
    """A BadRequest `invalid_request` naming each invalid field: `user: must be ...; content: ...`.

    `errors` are pydantic's `ValidationError.errors()`; the text is safe to send (no lone surrogate).
    """
    parts = []
    for error in errors[:limit]:
        location = ".".join(str(p) for p in error.get("loc", ())) or "value"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    message = ("; ".join(parts) + more).encode("utf-8", "backslashreplace").decode("utf-8")
    return BadRequest(message, "invalid_request")
