"""Reuse the live-server fixtures of the access tests."""

from tests.access.conftest import deployment, open_server  # noqa: F401
