"""bench.longmemeval on a tiny synthetic set: the metrics are computed and can fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from bench.lme_data import LmeQuestion, load_questions, parse_lme_date, to_question
from bench.longmemeval import score, session_scores
from bench.recall_items import RankedItem

REPO = Path(__file__).resolve().parents[2]

_FILLER = [
    ("user", "Can you give me some tips for growing tomatoes on a balcony?"),
    ("assistant", "Use a large pot, full sun and water them deeply twice a week."),
]


def _record(qid: str, question: str, answer: str, evidence: list[tuple[str, str]]) -> dict:
    sessions = [
        ("filler_1", "2023/05/01 (Mon) 09:00", [{"role": r, "content": c} for r, c in _FILLER]),
        ("answer_1", "2023/05/20 (Sat) 02:21",
         [{"role": r, "content": c, **({"has_answer": True} if r == "user" else {})} for r, c in evidence]),
        ("filler_2", "2023/06/02 (Fri) 18:30",
         [{"role": "user", "content": "\u200b\u200b"}, {"role": "user", "content": "What is a good name for a cat?"},
          {"role": "assistant", "content": "Maybe Miso, Pepper or Olive."}]),
    ]
    return {"question_id": qid, "question_type": "single-session-user", "question": question, "answer": answer,
            "question_date": "2023/07/01 (Sat) 10:00", "haystack_session_ids": [s for s, _, _ in sessions],
            "haystack_dates": [d for _, d, _ in sessions], "haystack_sessions": [m for _, _, m in sessions],
            "answer_session_ids": ["answer_1"]}


def _tiny_set(path: Path) -> None:
    said = [("user", "I finally adopted a beagle puppy and named him Biscuit."),
            ("assistant", "Biscuit is a lovely name for a beagle!")]
    never = [("user", "I started taking salsa dance classes on Thursdays."),
             ("assistant", "Salsa is a great way to stay active.")]
    data = [_record("q_in", "What did I name my beagle puppy?", "Biscuit", said),
            _record("q_out", "Which dance classes did I start taking?", "Argentine tango at the Volkshaus", never)]
    path.write_text(json.dumps(data), encoding="utf-8")


def test_records_become_dated_turns_with_ids_that_map_back(tmp_path: Path) -> None:
    _tiny_set(tmp_path / "lme.json")
    q = load_questions(tmp_path / "lme.json")[0]
    assert parse_lme_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=timezone.utc)
    assert q.skipped_invisible == 1 and len(q.turns) == 6
    assert [t.message_id for t in q.turns[:3]] == ["filler_1:0", "filler_1:1", "answer_1:0"]
    assert q.turns[3].ts > q.turns[2].ts and q.answer_turns == {"answer_1:0"}
    assert q.sessions_of({"answer_1:1", "filler_2:2", "unknown"}) == {"answer_1", "filler_2"}
    rounds = q.rounds()
    assert [sorted(ids) for ids, _ in rounds][:2] == [["filler_1:0", "filler_1:1"], ["answer_1:0", "answer_1:1"]]
    assert rounds[1][1].startswith("2023-05-20 user: I finally adopted")
    long = to_question(_record("q_long", "?", "x", [("user", "y" * 40_000)]))
    assert long.cut_long == 1 and max(len(t.content) for t in long.turns) == 32_000


def test_session_and_turn_metrics_follow_the_ranking(tmp_path: Path) -> None:
    _tiny_set(tmp_path / "lme.json")
    q: LmeQuestion = load_questions(tmp_path / "lme.json")[0]
    filler = RankedItem(frozenset({"filler_1:0"}), 5, "tomatoes")
    answer = RankedItem(frozenset({"answer_1:0"}), 5, "adopted a beagle named Biscuit")
    summary = RankedItem(frozenset({"answer_1:0", "answer_1:1", "filler_1:0", "filler_1:1"}), 5, "Biscuit")
    first = score(q, [answer, filler], [answer], answer.text)
    assert first["s_at_1"] and first["all_at_5"] and first["t_at_10"] and first["ev_1k"] and first["ans_1k"]
    late = score(q, [filler, summary, answer], [filler, summary], filler.text + "\n" + summary.text)
    assert not late["s_at_1"] and late["s_at_5"] and late["t_at_10"]
    assert late["ev_1k"] is False and late["ans_1k"] is True  # a summary's words count, its sources do not
    assert session_scores(q, [{"filler_1"}, {"filler_2"}]) == {
        "s_at_1": False, "all_at_5": False, "s_at_5": False, "s_at_10": False}


def test_longmemeval_command_on_a_tiny_set(tmp_path: Path) -> None:
    _tiny_set(tmp_path / "lme.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "bench/longmemeval.py", "--data", str(tmp_path / "lme.json")], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert records[0]["kind"] == "lme_run" and records[0]["turns"] == 12
    per_question = {(r["system"], r["question_id"]): r for r in records if r["kind"] == "lme_question"}
    assert set(per_question) == {(s, q) for s in ("engram[hashing]", "bm25_sessions", "bm25_rounds")
                                 for q in ("q_in", "q_out")}
    for system in ("engram[hashing]", "bm25_rounds"):
        assert per_question[(system, "q_in")]["ans_1k"] is True
        assert per_question[(system, "q_out")]["ans_1k"] is False  # the answer was never said
        assert per_question[(system, "q_in")]["t_at_10"] is True
    assert per_question[("bm25_sessions", "q_in")]["s_at_1"] is True
    results = {r["system"]: r for r in records if r["kind"] == "lme_result"}
    assert results["bm25_rounds"]["ans_1k"] == 0.5 and results["engram[hashing]"]["ans_1k"] == 0.5
    assert results["bm25_sessions"]["ans_1k"] is None
    context = results["engram[hashing]"]["context"]
    assert context["budget"] == 1000 and 0 < context["mean_tokens"] <= context["max_tokens"]
    assert results["bm25_rounds"]["context"]["max_tokens"] <= 1000
    assert set(results["engram[hashing]"]["by_type"]) == {"single-session-user"}
    assert "ans1k" in done.stdout and "context tokens" in done.stdout and "1/2" in done.stderr


def test_profile_both_gives_a_row_with_and_a_row_without_the_standing_profile(tmp_path: Path) -> None:
    _tiny_set(tmp_path / "lme.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "bench/longmemeval.py", "--data", str(tmp_path / "lme.json"),
                           "--profile", "both", "--no-baselines"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    systems = {r["system"] for r in records if r["kind"] == "lme_question"}
    assert systems == {"engram[hashing]", "engram[hashing,profile=off]"}
