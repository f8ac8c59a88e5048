"""The config file: TOML, found at one documented place, checked whole before anything starts.

Where: the first that exists of

1. `ENGRAM_CONFIG` (a path; it must exist when set),
2. `<data folder>/engram.toml`,
3. `$XDG_CONFIG_HOME/engram/engram.toml` (`~/.config/engram/engram.toml`).

What: the sections and keys of `EngramConfig` (`[recall]`, `[embedder]`, `[merge]`, ...), e.g.

    [embedder]
    kind = "use"

    [recall]
    deadline_ms = 250
    context_turns_top = 1

An unknown section or key, or a value of the wrong kind or out of range, is
refused with a message naming the file and the key. A few settings also have an
environment variable, which wins over the file (`ENV_OVERRIDES`). Both runtimes
(the embedded one, `engram serve`, and every `engram worker` process) build
their processor context from `load_config`, so one file configures them all.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from .config import EngramConfig

CONFIG_ENV = "ENGRAM_CONFIG"
FILE_NAME = "engram.toml"
DEFAULT_DATA = Path.home() / ".engram"
ENV_OVERRIDES = {"embedder.kind": "ENGRAM_EMBEDDER"}
"""Settings an environment variable overrides (it wins over the file)."""

Source = Literal["default", "file", "env"]


class ConfigError(ValueError):
    """The config file cannot be used as written; the message names the file and the key."""


@dataclass(frozen=True)
class Setting:
    key: str
    value: Any
    source: Source
    origin: str = ""
    """The file or variable the value came from."""


def _data_folder(data: Path | str | None, env: Mapping[str, str]) -> Path:
    return Path(data) if data is not None else Path(env.get("ENGRAM_DATA") or DEFAULT_DATA).expanduser()


def candidates(data: Path | str | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where the config file is looked for, in order."""
    e = os.environ if env is None else env
    if e.get(CONFIG_ENV):
        return [Path(e[CONFIG_ENV]).expanduser()]
    user_config = Path(e.get("XDG_CONFIG_HOME") or Path.home() / ".config").expanduser()
    return [_data_folder(data, e) / FILE_NAME, user_config / "engram" / FILE_NAME]


def config_path(data: Path | str | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The config file in use, or None; a missing `ENGRAM_CONFIG` file is an error."""
    e = os.environ if env is None else env
    found = candidates(data, e)
    if e.get(CONFIG_ENV) and not found[0].is_file():
        raise ConfigError(f"{CONFIG_ENV}={e[CONFIG_ENV]}: no such file")
    return next((path for path in found if path.is_file()), None)


def read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None


def _with_env(values: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    merged = {section: dict(body) if isinstance(body, dict) else body for section, body in values.items()}
    for key, variable in ENV_OVERRIDES.items():
        if env.get(variable, "").strip():
            section, name = key.split(".", 1)
            target = merged.setdefault(section, {})
            if isinstance(target, dict):
                target[name] = env[variable].strip().lower()
    return merged


def build(values: dict[str, Any], where: str) -> EngramConfig:
    """EngramConfig from the file's values; ConfigError naming each bad key."""
    try:
        return EngramConfig.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            key = ".".join(str(part) for part in error["loc"]) or "(top level)"
            if error["type"] == "extra_forbidden":
                problems.append(f"unknown key {key}{_known_beside(error['loc'])}")
            else:
                problems.append(f"{key}: {error['msg']} (got {error.get('input')!r})")
        raise ConfigError(f"{where}: " + "; ".join(problems)) from None


def _known_beside(loc: tuple[Any, ...]) -> str:
    model: type[BaseModel] = EngramConfig
    for part in loc[:-1]:
        annotation = model.model_fields[str(part)].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        model = annotation
    section = ".".join(str(p) for p in loc[:-1])
    return f" (known{' in [' + section + ']' if section else ' sections'}: {', '.join(model.model_fields)})"


def load_config(data: Path | str | None = None, env: Mapping[str, str] | None = None) -> EngramConfig:
    """The effective configuration: defaults, then the config file, then the environment overrides."""
    e = os.environ if env is None else env
    path = config_path(data, e)
    values = read_file(path) if path is not None else {}
    where = str(path) if path is not None else "the environment"
    return build(_with_env(values, e), where)


def effective(data: Path | str | None = None, env: Mapping[str, str] | None = None) -> list[Setting]:
    """Every setting with its value and where it came from (`engram config`)."""
    e = os.environ if env is None else env
    path = config_path(data, e)
    values = read_file(path) if path is not None else {}
    config = build(_with_env(values, e), str(path))
    settings = []
    for key, value in _leaves(config):
        variable = ENV_OVERRIDES.get(key)
        if variable and e.get(variable, "").strip():
            settings.append(Setting(key, value, "env", variable))
        elif _lookup(values, key) is not None:
            settings.append(Setting(key, value, "file", str(path)))
        else:
            settings.append(Setting(key, value, "default"))
    return settings


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value


def _lookup(values: dict[str, Any], key: str) -> Any:
    node: Any = values
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


__all__ = ["CONFIG_ENV", "ConfigError", "ENV_OVERRIDES", "FILE_NAME", "Setting", "candidates", "config_path",
           "effective", "load_config"]
