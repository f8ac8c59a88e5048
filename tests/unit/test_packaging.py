"""The wheel must contain every package folder (pyproject lists them explicitly), and the build says nothing."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = _config()
    data_only = {package for package in config["package-data"] if package.endswith(".json")}
    listed = set(config["packages"]) - data_only
    found = set()
    for package, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    assert found == listed


def test_a_data_folder_inside_a_package_is_listed_as_one() -> None:
    """setuptools warns for 60 lines ("Package would be ignored") about a folder of package data that is
    not in `packages`; `schemas/json` is such a folder."""
    config = _config()
    for package, patterns in config["package-data"].items():
        assert package in config["packages"], package
        assert all("/" not in pattern for pattern in patterns), (package, patterns)
