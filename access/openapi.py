"""The committed OpenAPI document: `python -m engram.access.openapi` rewrites access/openapi.json.

A test fails while the committed file and the app's schema differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COMMITTED = Path(__file__).with_name("openapi.json")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI schema of the HTTP app, as served at /v1/openapi.json."""
    from .http_app import create_app

    return create_app().openapi()


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    COMMITTED.write_text(render(openapi_document()), encoding="utf-8")
    print(f"wrote {COMMITTED}")


if __name__ == "__main__":
    main()
