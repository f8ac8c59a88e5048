"""Dump everything derived from a fixed input: events (decoded, canonical JSON) and store rows."""
import hashlib, json, sys, os, tempfile
from datetime import datetime, timezone
from pathlib import Path
sys.path.insert(0, os.getcwd())
from bench.synthetic import generate_turns
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.codec import to_dict
out = open(sys.argv[1], "w")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
for enc in (True, False):
  for bs in (2000, 97):
    batch = generate_turns(n, seed=11)
    with tempfile.TemporaryDirectory() as tmp:
        rt = EmbeddedRuntime(Path(tmp) / "d", batch_size=bs, encryption=enc)
        rt.ingest(batch[: n // 2], now=datetime(2026, 1, 1, tzinfo=timezone.utc))
        rt.ingest(batch[n // 2 :], now=datetime(2026, 1, 2, tzinfo=timezone.utc))
        rt.ingest(batch[:50], now=datetime(2026, 1, 3, tzinfo=timezone.utc))
        for seq, ev in rt.log.scan():
            out.write(f"{enc} {bs} {seq} {json.dumps(to_dict(ev), sort_keys=True, ensure_ascii=False)}\n")
        for table in ("log_state",):
            for row in rt.db.execute(f"SELECT processor, key, value FROM {table} ORDER BY processor, key"):
                out.write(f"{enc} {bs} state {row[0]} {row[1]} {bytes(row[2]).decode()}\n")
        tables = [r[0] for r in rt.db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'log_%' AND name NOT LIKE 'sqlite%' ORDER BY name")]
        for t in tables:
            rows = rt.db.execute(f"SELECT * FROM {t}").fetchall()
            rows = sorted(repr(r) for r in rows)
            out.write(f"{enc} {bs} table {t} {len(rows)} {hashlib.sha256(''.join(rows).encode()).hexdigest()}\n")
        h = rt.replay()
        out.write(f"{enc} {bs} replay {h}\n")
        rt.close()
