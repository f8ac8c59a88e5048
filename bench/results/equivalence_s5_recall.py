import sys, os, tempfile, hashlib
from datetime import datetime, timezone
from pathlib import Path
sys.path.insert(0, os.getcwd())
from bench.synthetic import generate_turns
from engram.runtime.engine import EmbeddedRuntime
from engram.recall.service import RecallRequest
batch = generate_turns(1500, seed=11)
h = hashlib.sha256(); n = 0
with tempfile.TemporaryDirectory() as tmp:
    rt = EmbeddedRuntime(Path(tmp) / "d", encryption=True)
    rt.ingest(batch, now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    for t in batch[::15]:
        r = rt.recall(RecallRequest(t.tenant, t.user, "a", t.session, t.content, datetime(2026, 2, 1, tzinfo=timezone.utc)))
        h.update(repr((r.memory_section, [(i.memory_id if hasattr(i, "memory_id") else repr(i)) for i in r.items], r.retrieved_ids, r.recent)).encode()); n += 1
    rt.close()
print(n, h.hexdigest())
