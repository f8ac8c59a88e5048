"""Code and docs state their reasons themselves: no reference to a document outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\b(SPEC|GOLDEN|DESIGN)\b|BENCH(\.md|'s| §)|§|\b[Ss]ession [0-9]+\b|\b[Ii]ssue [0-9]+\b")
CHECKED = (".py", ".md", ".sql", ".toml", ".sh", ".json")
DATA = ("bench/data/", "bench/results/")


def test_no_code_or_doc_cites_a_document_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        if not name.endswith(CHECKED) or name.startswith(DATA) or name == "tests/unit/test_no_outside_references.py":
            continue
        path = ROOT / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert found == [], "say the reason itself:\n" + "\n".join(found)
