"""MCP over stdio that answers every request carrying an id, even one it cannot read.

The SDK's stdio transport drops a line it cannot parse (a lone surrogate escape, nesting deeper than
its parser allows, broken JSON): a client waiting on that request id would wait forever. This
transport reads the lines itself; a line that does not parse as a JSON-RPC message is answered with a
JSON-RPC error (-32700 parse error, -32600 invalid request) under the request's id when the line
names one at its top level, and is otherwise logged and skipped (a notification needs no answer).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio

try:  # mcp >= 2
    import mcp_types as types  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # mcp 1.x
    import mcp.types as types  # type: ignore[no-redef, unused-ignore]
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

log = logging.getLogger("engram.access.mcp")
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
RequestId = str | int


def _validate(line: str) -> Any:
    adapter = getattr(types, "jsonrpc_message_adapter", None)
    if adapter is not None:
        return adapter.validate_json(line, by_name=False)
    return types.JSONRPCMessage.model_validate_json(line)  # type: ignore[attr-defined, unused-ignore]  # mcp 1.x


def top_level_id(line: str) -> RequestId | None:
    """The `id` member of the line's outermost JSON object, found without parsing nested values.

    Scans characters, tracking strings and depth, so a line too deep (or too broken) for a parser
    still yields the id it names; None when there is none or it is not a string or an integer.
    """
    depth, i, n, key, expect_value = 0, 0, len(line), None, False
    while i < n:
        ch = line[i]
        if ch == '"':
            end = _string_end(line, i)
            text = line[i:end + 1]
            if depth == 1 and expect_value and key == "id":
                return _decode(text)
            if depth == 1 and not expect_value:
                key = _decode(text)
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            expect_value = False
        elif ch in "}]":
            depth -= 1
        elif ch == ":" and depth == 1:
            expect_value = True
        elif ch == "," and depth == 1:
            expect_value, key = False, None
        elif depth == 1 and expect_value and key == "id" and (ch == "-" or ch.isdigit()):
            end = i + 1
            while end < n and line[end].isdigit():
                end += 1
            return int(line[i:end])
        i += 1
    return None


def _string_end(line: str, start: int) -> int:
    i = start + 1
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == '"':
            return i
        i += 1
    return len(line) - 1


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def error_answer(line: str, exc: Exception) -> SessionMessage | None:
    """The JSON-RPC error for a line that could not be read, or None when it names no id."""
    request_id = top_level_id(line)
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        return None
    code, message = _classify(line, exc)
    error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
    return SessionMessage(_message(error))


def _message(error: Any) -> Any:
    wrapper = getattr(types, "JSONRPCMessage", None)
    try:
        return wrapper(error) if wrapper is not None and wrapper is not type(error) else error
    except Exception:
        return error


def _classify(line: str, exc: Exception) -> tuple[int, str]:
    try:
        value = json.loads(line)
    except RecursionError:
        return PARSE_ERROR, "parse error: the request is nested too deeply"
    except ValueError:
        return PARSE_ERROR, "parse error: the request is not valid JSON"
    if _has_surrogate(value):
        return INVALID_REQUEST, "invalid request: a string in it is not valid UTF-8 (a lone surrogate escape)"
    if "recursion" in str(exc).lower() or "depth" in str(exc).lower():
        return PARSE_ERROR, "parse error: the request is nested too deeply"
    return INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message"


def _has_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class AnsweringLines:
    """stdin's lines for the SDK's stdio server, minus those that do not parse: those are answered here."""

    def __init__(self) -> None:
        self._answers: Any = None
        self._ready = anyio.Event()

    def answer_to(self, write_stream: Any) -> None:
        self._answers = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        async for line in stdin:
            if not line.strip():
                continue
            try:
                _validate(line)
            except Exception as exc:
                await self._answer(line, exc)
                continue
            yield line

    async def _answer(self, line: str, exc: Exception) -> None:
        answer = error_answer(line, exc)
        log.warning("unreadable MCP request%s: %s", "" if answer else " without an id (skipped)",
                    type(exc).__name__)
        if answer is not None:
            await self._ready.wait()
            await self._answers.send(answer)


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) over this process's stdin and stdout: the SDK's stdio server (which
    keeps stray output off the wire), fed lines that parse; the others are answered with an error."""
    lines = AnsweringLines()
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_to(write_stream)
        yield read_stream, write_stream


async def run_stdio(server: Any) -> None:
    """Run an MCP server (mcp 2 `MCPServer` or mcp 1 `FastMCP`) over `stdio_transport`."""
    lowlevel = getattr(server, "_lowlevel_server", None) or getattr(server, "_mcp_server")
    async with stdio_transport() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
