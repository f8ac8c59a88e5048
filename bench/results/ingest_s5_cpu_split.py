"""CPU time per part of the embedded ingest, from process_time timers wrapped around each part (no profiler)."""
import sys, os, time, tempfile
from collections import defaultdict
from pathlib import Path
sys.path.insert(0, os.getcwd())
from bench.synthetic import generate_turns
from engram.runtime import engine as eng, log as lg
from engram.streams.topology import build_topology
pt = time.process_time
acc = defaultdict(float)
def wrap(obj, name, label):
    f = getattr(obj, name)
    def w(*a, **k):
        t = pt()
        try: return f(*a, **k)
        finally: acc[label] += pt() - t
    setattr(obj, name, w)
batch = generate_turns(int(sys.argv[1]), seed=7)
with tempfile.TemporaryDirectory() as tmp:
    rt = eng.EmbeddedRuntime(Path(tmp) / "d")
    for stage in build_topology(): pass
    for procs in rt._routes.values():
        for p in procs:
            if not getattr(p, "_wrapped", False):
                wrap(p, "process", "processor " + p.name); p._wrapped = True
    wrap(rt.log, "stage", "log.stage (encode+seal)")
    wrap(rt.projector, "apply", "projector.apply")
    wrap(rt, "_commit_progress", "commit_progress (flush log/store/states)")
    wrap(eng._Tx, "__exit__", "COMMIT")
    wrap(rt, "_recorded", "edge: recorded lookup")
    t0 = pt(); rt.ingest(batch); total = pt() - t0
    rt.close()
print(f"total CPU {total:.3f}s for {len(batch)} turns ({len(batch)/total:.0f} turns/CPU-s); load {open('/proc/loadavg').read().split()[:3]}")
for k, v in sorted(acc.items(), key=lambda kv: -kv[1]):
    print(f"{v:7.3f}s {100*v/total:5.1f}%  {k}")
print(f"{total-sum(acc.values()):7.3f}s {100*(total-sum(acc.values()))/total:5.1f}%  rest (engine loop, to_turn_event, screen, ...)")
