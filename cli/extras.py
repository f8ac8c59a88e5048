"""The one-line install hint a command gives when an optional extra is not installed."""

from __future__ import annotations

import click


def missing_extra(what: str, extra: str, exc: ImportError) -> click.ClickException:
    """`what needs the <extra> extra: pip install 'engram[<extra>]' (<why>)`, as a CLI error."""
    return click.ClickException(f"{what} needs the {extra} extra: pip install 'engram[{extra}]' ({exc})")


__all__ = ["missing_extra"]
