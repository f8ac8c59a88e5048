"""The committed OpenAPI document matches the app, and the server serves it."""

from __future__ import annotations

import json

import httpx

from engram.access.openapi import COMMITTED, openapi_document, render

from .conftest import Deployment


def test_the_committed_openapi_matches_the_app() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(openapi_document()), (
        "access/openapi.json is stale: run `python -m engram.access.openapi` and commit it"
    )


def test_the_server_serves_the_committed_document(deployment: Deployment) -> None:
    served = httpx.get(f"{deployment.url}/v1/openapi.json").json()
    assert served == json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert {"/v1/turns", "/v1/recall", "/v1/memories", "/v1/feedback", "/v1/forget", "/v1/cards"} <= set(served["paths"])
    error = served["paths"]["/v1/recall"]["post"]["responses"]["422"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ErrorBody"}
