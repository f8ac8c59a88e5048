"""Scanning every byte a data folder keeps, for canaries."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def files_under(*roots: Path) -> list[Path]:
    out = []
    for root in roots:
        if root.is_file():
            out.append(root)
            continue
        for folder, _, names in os.walk(root):
            out.extend(Path(folder) / name for name in names)
    return sorted(out)


def _stored_bytes(path: Path) -> bytes:
    """The file's bytes, holes left out: Kafka preallocates sparse index files of megabytes of zeros.

    A hole reads as zeros, and no needle is all zeros; each data extent is followed by one zero byte
    (the last byte of a UTF-16 needle may be the first zero after its extent).
    """
    with path.open("rb") as handle:
        fd, size = handle.fileno(), os.fstat(handle.fileno()).st_size
        parts, offset = [], 0
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError:  # no data after offset (ENXIO), or no SEEK_DATA here: read the rest
                if offset == 0 and not hasattr(os, "SEEK_DATA"):
                    return handle.read()
                break
            end = os.lseek(fd, start, os.SEEK_HOLE)
            handle.seek(start)
            parts.append(handle.read(end - start))
            parts.append(b"\x00")
            offset = end
        return b"".join(parts)


def _forms(needle: str) -> set[bytes]:
    return {needle.encode("utf-8"), needle.encode("utf-16-le"), needle.encode("unicode_escape"),
            needle.lower().encode("utf-8")}


def find(needles: Iterable[str], *roots: Path) -> dict[str, list[str]]:
    """needle -> files (under the roots) whose bytes contain it, in UTF-8, UTF-16 or escaped form."""
    wanted = {n: _forms(n) for n in needles}
    found: dict[str, list[str]] = {n: [] for n in wanted}
    for path in files_under(*roots):
        try:
            data = _stored_bytes(path)
        except OSError:
            continue
        low = data.lower()
        for needle, forms in wanted.items():
            if any(form in data or form.lower() in low for form in forms):
                found[needle].append(str(path))
    return {n: paths for n, paths in found.items() if paths}
