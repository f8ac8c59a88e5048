import sys, os, time, tempfile, pickle
sys.path.insert(0, os.getcwd())
from pathlib import Path
from bench.synthetic import generate_turns
from engram.runtime.engine import EmbeddedRuntime
from engram.streams.extract import ExtractProcessor
from engram.streams.processor import ProcessorContext
batch = generate_turns(5000, seed=7)
with tempfile.TemporaryDirectory() as tmp:
    rt = EmbeddedRuntime(Path(tmp)/"d")
    rt.ingest(batch)
    turns = [e for _, e in rt.log.scan(types=("TurnRecorded",))]
    rt.close()
pt=time.process_time
p=ExtractProcessor(); ctx=ProcessorContext(extractor=None)
t=pt(); outs=[p.process(None, x, ctx)[1] for x in turns]; print("extract (warm cache)", pt()-t)
t=pt(); b=pickle.dumps(turns, protocol=5); print("pickle turns", pt()-t, len(b))
t=pt(); pickle.loads(b); print("unpickle turns", pt()-t)
t=pt(); b2=pickle.dumps(outs, protocol=5); print("pickle outs", pt()-t, len(b2))
t=pt(); pickle.loads(b2); print("unpickle outs", pt()-t)
from engram.streams.rules import _drafts
_drafts.cache_clear()
from engram.core import text_caches; text_caches.clear_text_caches()
p=ExtractProcessor()
t=pt(); outs=[p.process(None, x, ctx)[1] for x in turns]; print("extract (cold cache)", pt()-t)
