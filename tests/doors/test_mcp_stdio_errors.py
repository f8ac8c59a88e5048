"""`engram mcp` over stdio answers every request that carries an id, with a JSON-RPC error when it
cannot be read (a lone surrogate, nesting too deep, not JSON at all)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "1"}}}


def _call(request_id: object, arguments: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "memory_write", "arguments": arguments}})


def test_every_request_with_an_id_gets_an_answer_even_when_it_cannot_be_read(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    lines = [
        json.dumps(HELLO),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(2, {"tenant": "t", "user": "\ud800", "agent": "a", "content": "I like tea"}),  # escaped surrogate
        _call("three", {"tenant": "t", "user": "u", "agent": "a", "content": "tea \udfff"}),
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"deep": ' + deep + "}}",
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {not json',
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
    ]
    server = subprocess.Popen([sys.executable, "-m", "engram.cli.main", "--data", str(tmp_path / "data"), "mcp"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("\n".join(lines) + "\n")
    server.stdin.flush()  # stdin stays open, as a client's does, until every answer is in
    answers: dict[object, dict[str, object]] = {}
    watchdog = threading.Timer(120, server.kill)
    watchdog.start()
    try:
        while not {1, 2, "three", 4, 5, 6} <= set(answers):
            line = server.stdout.readline()
            if not line:
                break
            answer = json.loads(line)
            answers[answer.get("id")] = answer
    finally:
        watchdog.cancel()
        server.stdin.close()
        server.wait(timeout=60)
    assert set(answers) >= {1, 2, "three", 4, 5, 6}, answers
    for request_id in (2, "three", 4, 5):
        answer = answers[request_id]
        assert "result" not in answer and answer["error"]["code"] in (-32700, -32600, -32602), answer
        assert answer["error"]["message"]
    assert "utf-8" in answers[2]["error"]["message"].lower() or "surrogate" in answers[2]["error"]["message"]
    assert answers[6]["result"]["tools"], "the server goes on serving after the bad requests"
