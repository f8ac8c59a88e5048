"""The benchmarks run, at a tiny size, and print well-formed results (no timing is asserted)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench.baselines import BM25, rrf
from bench.ingest_throughput import run_once
from bench.locomo import (
    RankedItem,
    load_conversation,
    normalise_evidence,
    parse_session_time,
    score_ranking,
)
from bench.minilm import MiniLM, WordPiece
from bench.synthetic import describe, generate_turns

REPO = Path(__file__).resolve().parents[2]


def _json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


# -- ingest throughput ---------------------------------------------------------------------------------

def test_synthetic_traffic_is_deterministic_and_mixed() -> None:
    first, second = generate_turns(1000, seed=11), generate_turns(1000, seed=11)
    assert first == second
    assert generate_turns(1000, seed=12) != first
    shape = describe(first)
    assert shape["turns"] == 1000
    assert shape["users"] == 10 and shape["sessions"] > shape["users"]
    assert 0.2 <= shape["mix"]["chitchat"] <= 0.4
    assert 0.2 <= shape["cjk_share"] <= 0.8 and 0.1 <= shape["assistant_share"] <= 0.5
    assert {"preference", "profile", "goal", "constraint", "decision", "contradiction", "repeat"} <= set(shape["mix"])
    times = [t.ts for t in first]
    assert times == sorted(times)


def test_ingest_run_measures_a_complete_ingest() -> None:
    result = run_once(300, seed=3)
    assert result["turns"] == result["appended"] == 300
    assert result["complete"] and result["processed_turns"] == 300
    assert result["seconds"] > 0 and result["turns_per_s"] > 0 and result["events_per_s"] > 0
    assert result["events_written"] > 300 and result["derived_events"] > 0
    assert result["event_types"]["TurnRecorded"] == 300
    assert result["active_memories"] > 0 and result["peak_rss_mib"] > 0


def test_ingest_command_prints_runs_and_a_summary() -> None:
    done = _run("-m", "bench.ingest_throughput", "--turns", "300", "--repeat", "1")
    records = _json_lines(done.stdout)
    assert [(r["kind"], r.get("encryption")) for r in records] == [
        ("ingest_run", "on"), ("ingest_run", "off"), ("ingest_summary", None)]
    summary = records[-1]
    assert summary["turns"] == 300 and summary["median_turns_per_s"] > 0 and summary["complete"]
    overhead = summary["encryption_overhead"]
    assert overhead["ingest_turns_per_s_on"] > 0 and overhead["ingest_turns_per_s_off"] > 0
    assert overhead["data_keys"] == summary["users"] and overhead["keys_db_bytes"] > 0
    assert "encryption: ingest" in done.stdout
    assert summary["machine"]["cores"] >= 1 and summary["machine"]["memory_gib"] > 0
    assert "turns/s" in done.stdout and "median" in done.stdout


# -- LoCoMo ----------------------------------------------------------------------------------------------

def _locomo_folder(tmp_path: Path) -> Path:
    """The dev conversations beside the repo (as in CI), else a small one in the same layout."""
    for folder in (os.environ.get("ENGRAM_LOCOMO_DIR"), REPO.parent / "shared" / "data" / "locomo"):
        if folder and any(Path(folder).glob("*.json")):
            return Path(folder)
    _write_tiny_locomo(tmp_path / "1.json")
    return tmp_path


def _write_tiny_locomo(path: Path) -> None:
    lines = [("Ann", "I adopted a rescue dog named Biscuit last week."), ("Bo", "That's lovely! What breed?"),
             ("Ann", "A beagle. We go hiking on Sundays now."), ("Bo", "I started learning the cello.")]
    data = {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{n + 1}", "text": t} for n, (s, t) in enumerate(lines)],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Look at my new instrument!",
                       "blip_caption": "a photo of a cello"}],
        "qa": [{"question": "What is the name of Ann's dog?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
               {"question": "What instrument does Bo play?", "answer": "cello", "evidence": ["D1:4; D2:1"], "category": 1},
               {"question": "When do they hike?", "answer": "Sundays", "evidence": ["D1:3"], "category": 2},
               {"question": "Unanswerable?", "evidence": ["D1:2"], "category": 5}],
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def test_locomo_parsing_and_scoring_rules(tmp_path: Path) -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert parse_session_time("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9, tzinfo=timezone.utc)
    assert normalise_evidence(["D8:6; D9:17", "D:11:26"]) == {"D8:6", "D9:17", "D11:26"}
    _write_tiny_locomo(tmp_path / "7.json")
    conv = load_conversation(tmp_path / "7.json")
    assert conv.name == "7" and len(conv.turns) == 5 and conv.skipped_category_5 == 1
    assert [q.category for q in conv.questions] == [4, 1, 2]
    assert conv.turns[-1].content.endswith("[image: a photo of a cello]")
    assert conv.turns[1].ts > conv.turns[0].ts and conv.eval_time > conv.turns[-1].ts

    wide = RankedItem(frozenset({"D1:1", "D1:2", "D1:3", "D1:4"}), 10)  # a summary: no evidence
    hit = RankedItem(frozenset({"D1:1"}), 10)
    assert score_ranking([wide], frozenset({"D1:1"}))["at_10"] is False
    assert score_ranking([wide] * 9 + [hit], frozenset({"D1:1"}))["at_10"] is True
    assert score_ranking([wide] * 10 + [hit], frozenset({"D1:1"}))["at_10"] is False
    big = RankedItem(frozenset({"D9:9"}), 995)
    assert score_ranking([big, hit], frozenset({"D1:1"}))["at_1000tok"] is False  # 995 + 10 > 1000
    assert score_ranking([big, RankedItem(frozenset({"D1:1"}), 5)], frozenset({"D1:1"}))["at_1000tok"] is True

    bm25 = BM25(["Ann adopted a dog named Biscuit", "Bo plays the cello", "nothing here"])
    assert bm25.rank("What is the name of the dog?")[0] == 0
    assert rrf([0, 1], [1, 2]) == [1, 0, 2]


def test_locomo_command_on_one_conversation(tmp_path: Path) -> None:
    folder = _locomo_folder(tmp_path)
    done = _run("bench/locomo.py", str(folder), "--limit-conversations", "1", "--limit-questions", "6",
                "--no-dense", "--embedder", "hashing")
    records = _json_lines(done.stdout)
    assert records[0]["kind"] == "locomo_run" and records[0]["machine"]["cores"] >= 1
    results = {(r["system"], r["conversation"]): r for r in records if r["kind"] == "locomo_result"}
    systems = {s for s, _ in results}
    assert systems == {"engram[hashing]", "bm25"}
    for (system, conv), r in results.items():
        assert 1 <= r["questions"] <= 6
        assert 0.0 <= r["any_at_10"] <= 1.0 and 0.0 <= r["any_at_1000tok"] <= 1.0
        assert r["any_at_1000tok"] >= 0.0 and sum(c["questions"] for c in r["by_category"].values()) == r["questions"]
        assert r["answer_at_1000tok"] is None or 0.0 <= r["answer_at_1000tok"] <= 1.0
        assert r["context"]["budget"] == 1000 and 0 < r["context"]["mean_tokens"] <= r["context"]["max_tokens"]
        assert "answer_at_1000tok" in r["by_category"]["1"]
    assert results[("bm25", "all")]["context"]["max_tokens"] <= 1000
    engram = next(r for (s, c), r in results.items() if s == "engram[hashing]" and c != "all")
    assert engram["engram"]["turns"] > 0 and engram["engram"]["processed_turns"] == engram["engram"]["appended"]
    assert "any@10" in done.stdout and "answer@1000tok" in done.stdout


# -- the dense baseline's numpy encoder, on a tiny random model ----------------------------------------

def _write_tiny_bert(folder: Path, vocab: list[str]) -> None:
    hidden, inter, layers = 8, 16, 2
    rng = np.random.default_rng(0)
    shapes = {"embeddings.word_embeddings.weight": (len(vocab), hidden),
              "embeddings.position_embeddings.weight": (64, hidden),
              "embeddings.token_type_embeddings.weight": (2, hidden),
              "embeddings.LayerNorm.weight": (hidden,), "embeddings.LayerNorm.bias": (hidden,)}
    for n in range(layers):
        p = f"encoder.layer.{n}."
        for name in ("query", "key", "value"):
            shapes[p + f"attention.self.{name}.weight"] = (hidden, hidden)
            shapes[p + f"attention.self.{name}.bias"] = (hidden,)
        shapes |= {p + "attention.output.dense.weight": (hidden, hidden), p + "attention.output.dense.bias": (hidden,),
                   p + "attention.output.LayerNorm.weight": (hidden,), p + "attention.output.LayerNorm.bias": (hidden,),
                   p + "intermediate.dense.weight": (inter, hidden), p + "intermediate.dense.bias": (inter,),
                   p + "output.dense.weight": (hidden, inter), p + "output.dense.bias": (hidden,),
                   p + "output.LayerNorm.weight": (hidden,), p + "output.LayerNorm.bias": (hidden,)}
    header, blobs, offset = {}, [], 0
    for name, shape in shapes.items():
        data = rng.standard_normal(shape).astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps(
        {"num_hidden_layers": layers, "num_attention_heads": 2, "hidden_size": hidden, "layer_norm_eps": 1e-12}))


def test_minilm_encoder_runs_on_a_tiny_model(tmp_path: Path) -> None:
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "the", "dog", "runs", "!", "我", "猫", "cafe"]
    _write_tiny_bert(tmp_path, vocab)
    pieces = WordPiece(tmp_path / "vocab.txt")
    ids = {v: i for i, v in enumerate(vocab)}
    assert pieces.encode("Unaffable dog!") == [ids["[CLS]"], ids["un"], ids["##aff"], ids["##able"], ids["dog"],
                                                ids["!"], ids["[SEP]"]]
    assert pieces.encode("我猫 Café zzz")[1:-1] == [ids["我"], ids["猫"], ids["cafe"], ids["[UNK]"]]
    model = MiniLM(tmp_path)
    alone = model.encode(["the dog"])
    batched = model.encode(["the dog runs the dog runs unaffable!", "the dog", "我"])
    assert batched.shape == (3, 8)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    assert np.allclose(alone[0], batched[1], atol=1e-5)  # padding does not leak into the embedding


def test_locomo_misses_sorts_every_question_into_one_bucket(tmp_path: Path) -> None:
    from bench.locomo_misses import analyse

    _write_tiny_locomo(tmp_path / "1.json")
    report = analyse(tmp_path, "hashing")
    top = {k: v for k, v in report["buckets"].items() if ":" not in k}
    assert sum(top.values()) == report["questions"] == 3
    assert set(top) <= {"hit", "uncovered", "not_retrieved", "below_budget"}
    assert report["prefix_tokens"]["all"] > 0 and "What is" not in json.dumps(report)
