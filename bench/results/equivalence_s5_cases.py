import sys, os, tempfile, glob
sys.path.insert(0, os.getcwd())
from pathlib import Path
from bench.extraction import load_cases, run_cases
cases = load_cases(sorted(Path("bench/data").glob("extraction_*.jsonl")))
with tempfile.TemporaryDirectory() as tmp:
    mem = run_cases(cases, Path(tmp))
for key in sorted(mem):
    for m in mem[key]:
        print(key, m.model_dump_json(exclude={"created_at","updated_at","last_seen_at"} if False else None))
