"""The operations table (`engram.access.operations`, rendered in docs/api.md) is what every door takes.

Each door is read the way its users see it: the Python method's signature, the click command's
parameters, the committed OpenAPI document, the MCP tools' advertised schemas.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import click
import pytest

from engram.access.mcp_server import EngramMCP
from engram.access.operations import (
    CONFIGURED, DOC, OPERATIONS, OPTIONAL, PINNABLE, REQUIRED, Door, Operation, with_table,
)
from engram.access.service import AccessService
from engram.cli.main import cli
from engram.memory import Memory

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = json.loads((ROOT / "access" / "openapi.json").read_text(encoding="utf-8"))
CLI_ONLY = {"as_json", "data"}
Args = dict[str, Any]


def _normal(name: str, default: Any) -> Any:
    """A recall deadline left out means the configured one, on every door; an empty list is just optional."""
    if isinstance(default, (list, dict)) and not default:
        return OPTIONAL
    return CONFIGURED if name == "deadline_ms" and default is None else default


def _json_default(schema: dict[str, Any]) -> Any:
    """The default an OpenAPI schema states; a nullable one without a stated default defaults to null."""
    if "default" in schema:
        return schema["default"]
    return None if {"type": "null"} in schema.get("anyOf", []) else OPTIONAL


def python_args(door: Door) -> Args:
    method = getattr(Memory, door.call.removeprefix("Memory."))
    defaults = {p.name: p.default for p in inspect.signature(Memory.__init__).parameters.values()}
    found: Args = {}
    for p in list(inspect.signature(method).parameters.values())[1:]:
        if p.name.startswith("_"):
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            found[p.name] = OPTIONAL
        elif p.default is inspect.Parameter.empty:
            found[p.name] = REQUIRED
        elif p.default is None and p.name in ("tenant", "agent", "session"):
            found[p.name] = defaults[p.name]  # the Memory's own, `default` / `assistant` / `default`
        else:
            found[p.name] = _normal(p.name, p.default)
    return found


def cli_args(door: Door) -> Args:
    command = cli.commands[door.call.removeprefix("engram ")]
    found: Args = {}
    for p in command.params:
        if p.name in CLI_ONLY or p.name is None:
            continue
        if isinstance(p, click.Argument):
            found[p.name] = OPTIONAL if p.nargs == -1 else REQUIRED
        else:
            found[p.name] = REQUIRED if p.required else _normal(p.name, p.default)
    return found


def _schema(ref_or_schema: dict[str, Any]) -> dict[str, Any]:
    ref = ref_or_schema.get("$ref")
    return OPENAPI["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else ref_or_schema


def http_args(door: Door) -> Args:
    method, path = door.call.split(" ", 1)
    operation = OPENAPI["paths"][path][method.lower()]
    found: Args = {p["name"]: REQUIRED if p.get("required") else _normal(p["name"], _json_default(p["schema"]))
                   for p in operation.get("parameters", [])}
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is None:
        return found
    shapes = [_schema(s) for s in body.get("oneOf", [body])]
    schema = next(s for s in shapes if "turns" not in s.get("properties", {}))  # one turn, not the batch
    for name, prop in schema["properties"].items():
        found[name] = REQUIRED if name in schema.get("required", []) else _normal(name, _json_default(prop))
    return found


def mcp_tools(**pins: str) -> dict[str, dict[str, Any]]:
    server = EngramMCP(AccessService(object()), **pins).server  # type: ignore[arg-type]
    return {name: tool.parameters for name, tool in server._tool_manager._tools.items()}


def mcp_args(door: Door) -> Args:
    schema = mcp_tools()[door.call]
    found: Args = {}
    for name, prop in schema["properties"].items():
        if name in schema.get("required", []):
            found[name] = REQUIRED
        elif name in ("tenant", "user") and prop.get("default", "") is None:
            found[name] = PINNABLE
        else:
            found[name] = _normal(name, prop.get("default", OPTIONAL))
    return found


READERS = {"Python": python_args, "CLI": cli_args, "HTTP": http_args, "MCP": mcp_args}
DOORS = [(op, surface, door) for op in OPERATIONS for surface, door in op.doors().items() if door is not None]


@pytest.mark.parametrize(("op", "surface", "door"), DOORS, ids=[f"{o.name}-{s}" for o, s, _ in DOORS])
def test_each_door_takes_exactly_the_arguments_and_defaults_of_the_table(op: Operation, surface: str,
                                                                          door: Door) -> None:
    found = READERS[surface](door)
    for old in door.deprecated:
        found.pop(old, None)  # still accepted, not part of the API
    expected = {arg.name: arg.default for arg in door.args}
    assert found == expected, f"{op.name} on {surface} ({door.call})"


@pytest.mark.parametrize("op", OPERATIONS, ids=[o.name for o in OPERATIONS])
def test_an_argument_has_one_default_on_every_door(op: Operation) -> None:
    """Where two doors take the same argument they agree on it (the scope rule and listed differences aside)."""
    seen: dict[str, dict[str, Any]] = {}
    for surface, door in op.doors().items():
        for arg in door.args if door else ():
            seen.setdefault(arg.name, {})[surface] = arg.default
    for name, by_door in seen.items():
        if name in op.differences or name in ("tenant", "user"):
            continue
        assert len({repr(v) for v in by_door.values()}) == 1, f"{op.name}: {name} differs: {by_door}"


def test_the_scope_rule_tenant_defaults_locally_and_is_required_on_the_network() -> None:
    for op in OPERATIONS:
        for surface, door in op.doors().items():
            tenant = next((a.default for a in door.args if a.name == "tenant"), None) if door else None
            if tenant is not None:
                assert tenant == {"Python": "default", "CLI": "default", "HTTP": REQUIRED,
                                  "MCP": PINNABLE}[surface], (op.name, surface)


def test_a_pinned_mcp_server_does_not_advertise_tenant_or_user() -> None:
    for name, schema in mcp_tools(tenant="home", user="ana").items():
        assert not {"tenant", "user"} & set(schema["properties"]), name
        assert not {"tenant", "user"} & set(schema.get("required", [])), name
    assert all({"tenant", "user"} <= set(s["properties"]) for s in mcp_tools(tenant="home").values()) is False


def test_every_mcp_tool_and_memory_command_is_in_the_table() -> None:
    listed = {door.call for op in OPERATIONS for door in op.doors().values() if door is not None}
    assert set(mcp_tools()) <= listed
    from engram.cli.controls import COMMANDS

    assert {f"engram {c.name}" for c in COMMANDS} <= listed
    public = {n for n, v in vars(Memory).items() if callable(v) and not n.startswith("_")}
    assert public - {"close", "resolve"} <= {c.removeprefix("Memory.") for c in listed}


def test_docs_api_md_carries_the_current_table() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert doc == with_table(doc), "docs/api.md is stale: run python -m engram.access.operations"
