"""The HTTP API driven as a client would, against a real uvicorn server on loopback."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx

from engram.schemas.events import FeedbackGiven, RecallServed

from .conftest import MAX_BATCH, MAX_BODY, Deployment, new_id, turn

FACTS = ["I prefer green tea in the morning", "My name is Ana Lima", "I work as a nurse in Lisbon",
         "I love hiking in the mountains on weekends", "I plan to learn Rust this year",
         "I don't like coffee at all", "I live in Porto", "I always run before breakfast",
         "我喜欢喝绿茶", "I need vegetarian recipes for dinner", "I prefer short answers with examples"]


def _user_with_facts(d: Deployment, facts: list[str] = FACTS, session: str = "s1") -> str:
    user = new_id("user")
    response = d.as_a().post("/v1/turns", json={"turns": [turn(d.tenant_a, user, f, session=session) for f in facts]})
    assert response.status_code == 200, response.text
    return user


def _recall(d: Deployment, user: str, question: str, session: str = "s1", **extra: object) -> httpx.Response:
    extra.setdefault("deadline_ms", 10_000)  # behaviour, not speed: a loaded test machine must not degrade it
    body = {"tenant": d.tenant_a, "user": user, "agent": "coach", "session": session, "question": question, **extra}
    return d.as_a().post("/v1/recall", json=body)


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return str(error["message"])


def test_a_single_turn_and_a_batch_are_ingested_and_a_resent_turn_is_a_duplicate(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    single = turn(d.tenant_a, user, "I prefer green tea in the morning", message_id="m1")
    first = d.as_a().post("/v1/turns", json=single).json()
    assert first["appended"] == 1 and first["events"]["MemoryChanged"] == 1
    batch = [single, turn(d.tenant_a, user, "My name is Ana Lima", message_id="m2")]
    second = d.as_a().post("/v1/turns", json={"turns": batch}).json()
    assert (second["received"], second["appended"], second["duplicates"]) == (2, 1, 1)
    contents = {m["content"] for m in d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()}
    assert contents == {"User prefers green tea in the morning", "User's name is Ana Lima"}


def test_recall_assembles_the_context_and_logs_the_observation(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    body = _recall(d, user, "What should I drink in the morning?", system_prompt="You are a coach.").json()
    assert body["injected"] and "User prefers green tea in the morning" in body["context"]
    assert body["messages"][0]["role"] == "system" and body["messages"][0]["content"].startswith("You are a coach.")
    assert body["messages"][-1] == {"role": "user", "content": "What should I drink in the morning?"}
    assert body["recent"], "the short-term window carries the session's last turns"
    served = d.backend.event(d.tenant_a, user, body["recall_id"])
    assert isinstance(served, RecallServed) and served.user_id == user and served.injected_count == len(body["items"])
    assert d.backend.event(d.tenant_b, user, body["recall_id"]) is None, "an event is scoped to its tenant"
    assert d.backend.event(d.tenant_a, new_id("user"), body["recall_id"]) is None, "and to its user"


def test_feedback_attaches_to_the_recall_it_names(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    recall_id = _recall(d, user, "What tea do I like?").json()["recall_id"]
    answer = d.as_a().post("/v1/feedback", json={"tenant": d.tenant_a, "user": user, "recall_id": recall_id,
                                                 "rating": "bad", "reason": "irrelevant", "remark": "not tea"})
    assert answer.status_code == 200, answer.text
    feedback = d.backend.event(d.tenant_a, user, answer.json()["feedback_id"])
    assert isinstance(feedback, FeedbackGiven)
    assert (feedback.recall_id, feedback.rating, feedback.reason) == (recall_id, 2, "irrelevant")
    assert feedback.causation_ids == (recall_id,)


def test_feedback_on_an_unknown_or_another_users_recall_is_404(deployment: Deployment) -> None:
    d = deployment
    owner, other = _user_with_facts(d), _user_with_facts(d)
    recall_id = _recall(d, owner, "What tea do I like?").json()["recall_id"]
    for user, rid in ((owner, new_id("recall")), (other, recall_id)):
        response = d.as_a().post("/v1/feedback", json={"tenant": d.tenant_a, "user": user, "recall_id": rid,
                                                       "rating": 1})
        _error(response, 404, "unknown_recall")


def test_a_new_session_gets_long_term_memory_and_a_new_user_an_empty_context(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    before = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    fresh = _recall(d, user, "What should I drink in the morning?", session="brand-new")
    assert fresh.status_code == 200, fresh.text
    body = fresh.json()
    assert (body["user_known"], body["session_known"], body["degraded"]) == (True, False, False)
    assert "User prefers green tea in the morning" in body["context"]
    assert body["recent"] == [] and not any(i["kind"] == "summary" for i in body["items"])
    stranger = _recall(d, new_id("user"), "What should I drink?")
    assert stranger.status_code == 200, stranger.text
    assert (stranger.json()["user_known"], stranger.json()["session_known"]) == (False, False)
    assert (stranger.json()["context"], stranger.json()["injected"], stranger.json()["items"]) == ("", False, [])
    known = _recall(d, user, "What should I drink in the morning?").json()
    assert (known["user_known"], known["session_known"]) == (True, True)
    after = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    assert after.get("recall.new_session", 0) == before.get("recall.new_session", 0) + 1
    assert after.get("recall.unknown_user", 0) == before.get("recall.unknown_user", 0) + 1


def test_search_is_normal_for_a_new_session_and_a_new_user(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    found = d.as_a().post("/v1/search", json={"tenant": d.tenant_a, "user": user, "session": "never",
                                              "query": "tea"}).json()
    assert found["session_known"] is False and found["user_known"] is True
    assert found["results"][0]["memory"]["content"] == "User prefers green tea in the morning"
    nobody = d.as_a().post("/v1/search", json={"tenant": d.tenant_a, "user": new_id("user"), "query": "tea"})
    assert nobody.status_code == 200 and nobody.json() == {"results": [], "user_known": False,
                                                           "session_known": False}
    foreign = d.as_a().post("/v1/search", json={"tenant": d.tenant_b, "user": user, "query": "tea"})
    _error(foreign, 403, "forbidden_tenant")


def test_a_chat_loop_that_recalls_before_recording_has_memory_on_the_first_message_of_a_new_session(
        deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    sessions = [("s1", ["I prefer green tea in the morning", "I live in Porto"]),
                ("s2", ["What should I drink in the morning?", "Thanks!"])]
    first_contexts = []
    for session, messages in sessions:
        for index, message in enumerate(messages):
            recalled = _recall(d, user, message, session=session)  # recall first, then record the exchange
            assert recalled.status_code == 200, recalled.text
            if index == 0:
                first_contexts.append(recalled.json())
            exchange = [turn(d.tenant_a, user, message, session=session),
                        turn(d.tenant_a, user, "Noted.", session=session, role="assistant")]
            assert d.as_a().post("/v1/turns", json={"turns": exchange}).status_code == 200
    assert first_contexts[0]["user_known"] is False and first_contexts[0]["context"] == ""
    assert first_contexts[1]["session_known"] is False and first_contexts[1]["user_known"] is True
    assert "User prefers green tea in the morning" in first_contexts[1]["context"]


def test_reads_of_one_named_thing_say_it_does_not_exist(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    stranger = new_id("user")
    missing = d.as_a().get("/v1/memories/m1", params={"tenant": d.tenant_a, "user": stranger})
    assert "unknown tenant or user" in _error(missing, 404, "unknown_user")
    listed = d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": stranger})
    assert listed.status_code == 200 and listed.json() == []  # a new user has no memories, as in recall
    summary = d.as_a().get("/v1/sessions/nope/summary", params={"tenant": d.tenant_a, "user": user})
    _error(summary, 404, "unknown_session")
    _error(d.as_a().get("/v1/memories/nope", params={"tenant": d.tenant_a, "user": user}), 404, "unknown_memory")


def test_list_get_and_lineage_of_a_memory(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    scope = {"tenant": d.tenant_a, "user": user}
    memories = d.as_a().get("/v1/memories", params=scope).json()
    tea = next(m for m in memories if m["content"] == "User prefers green tea in the morning")
    assert d.as_a().get(f"/v1/memories/{tea['memory_id']}", params=scope).json() == tea
    lineage = d.as_a().get(f"/v1/memories/{tea['memory_id']}/lineage", params=scope).json()
    assert lineage[0]["change"] == "created"
    assert lineage[0]["turns"][0]["content"] == "I prefer green tea in the morning"
    _error(d.as_a().get("/v1/memories/nope/lineage", params=scope), 404, "unknown_memory")


def test_correct_pin_and_unpin_report_what_really_changed(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    scope = {"tenant": d.tenant_a, "user": user}
    memory_id = next(m["memory_id"] for m in d.as_a().get("/v1/memories", params=scope).json()
                     if m["slot"] == "user_fact.location")
    corrected = d.as_a().post(f"/v1/memories/{memory_id}/correct", json={**scope, "content": "User lives in Braga"})
    assert corrected.json()["affected"] == 1 and corrected.json()["changes"][0]["after"] == "User lives in Braga"
    assert [d.as_a().post(f"/v1/memories/{memory_id}/pin", json=scope).json()["affected"] for _ in range(2)] == [1, 0]
    assert d.as_a().get(f"/v1/memories/{memory_id}", params=scope).json()["pinned"] is True
    assert d.as_a().post(f"/v1/memories/{memory_id}/unpin", json=scope).json()["affected"] == 1
    _error(d.as_a().post(f"/v1/memories/{new_id('mem')}/pin", json=scope), 404, "unknown_memory")


def test_forget_one_and_forget_by_topic_delete_exactly_what_they_say(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    scope = {"tenant": d.tenant_a, "user": user}
    before = d.as_a().get("/v1/memories", params=scope).json()
    rust = next(m["memory_id"] for m in before if "Rust" in m["content"])
    one = d.as_a().delete(f"/v1/memories/{rust}", params=scope).json()
    assert one["affected"] == 1 and one["changes"][0]["memory_id"] == rust
    _error(d.as_a().delete(f"/v1/memories/{rust}", params=scope), 404, "unknown_memory")
    topic = d.as_a().post("/v1/forget", json={**scope, "topic_text": "coffee"}).json()
    assert topic["affected"] == 1 and "coffee" in topic["changes"][0]["before"]
    after = {m["memory_id"] for m in d.as_a().get("/v1/memories", params=scope).json()}
    assert after == {m["memory_id"] for m in before} - {rust, topic["changes"][0]["memory_id"]}
    assert d.as_a().post("/v1/forget", json={**scope, "topic_text": "submarines"}).json()["affected"] == 0


def test_forget_everything_reaches_every_projection_and_recall_comes_back_empty(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    scope = {"tenant": d.tenant_a, "user": user}
    active = len(d.as_a().get("/v1/memories", params=scope).json())
    assert d.as_a().get("/v1/sessions/s1/summary", params=scope).status_code == 200
    assert _recall(d, user, "What tea do I like?").json()["injected"]
    result = d.as_a().post("/v1/forget", json={**scope, "everything": True}).json()
    assert result["affected"] == active >= 10
    assert {c["change"] for c in result["changes"]} == {"deleted"}
    assert d.as_a().get("/v1/memories", params=scope).json() == []
    _error(d.as_a().get("/v1/sessions/s1/summary", params=scope), 404, "no_summary")
    empty = _recall(d, user, "What tea do I like?").json()
    assert (empty["context"], empty["items"], empty["recent"], empty["injected"]) == ("", [], [], False)
    assert empty["messages"] == [{"role": "user", "content": "What tea do I like?"}]
    assert d.as_a().post("/v1/forget", json={**scope, "everything": True}).json()["affected"] == 0


def test_a_recall_that_cannot_run_within_its_deadline_returns_nothing(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    from tests.unit.test_recall_deadline import BlockingStore

    runtime = d.backend.runtime
    real = runtime.reader
    blocked = BlockingStore(real, {"has_user", "has_session", "list_cards", "persona_memories", "search_memories",
                                   "latest_summary", "recent_turns"})
    runtime.reader = blocked  # type: ignore[assignment]
    try:  # every store read is stuck
        start = time.perf_counter()
        body = _recall(d, user, "What tea do I like?", deadline_ms=100).json()
        elapsed = time.perf_counter() - start
    finally:
        runtime.reader = real
        blocked.release.set()
    assert body["degraded"] and body["context"] == "" and not body["injected"]
    assert elapsed < 2.0
    assert _recall(d, user, "What tea do I like?", deadline_ms=5000).json()["injected"]


def test_every_error_is_json_with_a_code_and_a_message(deployment: Deployment) -> None:
    d = deployment
    raw = d.as_a().post("/v1/recall", content=b'{"tenant": ', headers={"content-type": "application/json"})
    _error(raw, 400, "malformed_json")
    message = _error(d.as_a().post("/v1/turns", json=turn(d.tenant_a, "u", "")), 422, "invalid_request")
    assert "content" in message
    _error(d.as_a().post("/v1/turns", json=turn(d.tenant_a, "bad user", "hello there")), 422, "invalid_request")
    _error(d.as_a().post("/v1/forget", json={"tenant": d.tenant_a, "user": "u"}), 422, "invalid_request")
    _error(d.as_a().post("/v1/recall", json={"tenant": d.tenant_a, "user": "u", "extra": 1}), 422, "invalid_request")
    _error(d.as_a().get("/v1/nowhere"), 404, "not_found")
    _error(d.as_a().put("/v1/recall", json={}), 405, "method_not_allowed")


def _chunks(size: int) -> Iterator[bytes]:
    yield b'{"turns": ['
    yield b" " * size
    yield b"]}"


def test_oversize_requests_are_refused_with_413(deployment: Deployment) -> None:
    d = deployment
    big = turn(d.tenant_a, "u", "x" * (MAX_BODY + 10))
    _error(d.as_a().post("/v1/turns", json=big), 413, "payload_too_large")
    chunked = d.as_a().post("/v1/turns", content=_chunks(MAX_BODY), headers={"content-type": "application/json"})
    _error(chunked, 413, "payload_too_large")
    many = [turn(d.tenant_a, "u", f"I like number {i}") for i in range(MAX_BATCH + 1)]
    assert "at most" in _error(d.as_a().post("/v1/turns", json={"turns": many}), 413, "batch_too_large")
    small = d.as_a().post("/v1/turns", content=_chunks(10), headers={"content-type": "application/json"})
    _error(small, 422, "invalid_request")


def test_health_is_open_and_metrics_need_an_admin_key(deployment: Deployment) -> None:
    d = deployment
    health = d.http(None).get("/v1/health").json()
    assert health == {"status": "ok", "runtime": "embedded", "version": health["version"], "auth": "api-keys"}
    _error(d.as_a().get("/v1/metrics"), 403, "admin_only")
    before = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    d.as_a().get("/v1/nowhere")
    after = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    assert after["http.responses.4xx"] == before.get("http.responses.4xx", 0) + 1
    assert after["runtime.events.TurnRecorded"] >= 1


def test_a_failing_recall_gives_an_empty_context_and_is_counted(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    with d.backend.exclusive():  # a damaged projection row makes the recall itself fail
        d.backend.runtime.db.execute("UPDATE proj_memories SET payload = x'7b' WHERE tenant=? AND user=?",
                                     (d.tenant_a, user))
    before = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    body = _recall(d, user, "What tea do I like?").json()
    assert body["degraded"] and body["context"] == "" and body["messages"][-1]["content"] == "What tea do I like?"
    after = d.http(d.admin_key).get("/v1/metrics").json()["counters"]
    assert after["runtime.recall.failed"] == before.get("runtime.recall.failed", 0) + 1
    assert after["recall.degraded"] == before.get("recall.degraded", 0) + 1


def test_the_recall_deadline_is_end_to_end(deployment: Deployment) -> None:
    d = deployment
    user = _user_with_facts(d)
    hurried = _recall(d, user, "What should I drink in the morning?", deadline_ms=0.001).json()
    assert hurried["degraded"] and hurried["context"] == "" and hurried["items"] == []
    assert not _recall(d, user, "What should I drink in the morning?").json()["degraded"]


def test_a_body_is_not_read_before_the_key_is_checked(deployment: Deployment) -> None:
    d = deployment
    huge = b"{" + b" " * (MAX_BODY * 4) + b"}"
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.post(f"{d.url}/v1/turns", content=huge, headers={**headers, "Content-Type": "application/json"})
        assert response.status_code == 401, response.text
    big = d.as_a().post("/v1/turns", content=huge, headers={"Content-Type": "application/json"})
    assert big.status_code == 413


# -- safe edges: re-sent ids, control characters, odd times, limits ----------------------------------------
def test_a_resent_message_id_with_other_content_is_409_and_the_same_content_a_duplicate(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    original = turn(d.tenant_a, user, "I prefer green tea in the morning", message_id="m1")
    assert d.as_a().post("/v1/turns", json=original).status_code == 200
    same = d.as_a().post("/v1/turns", json=original)
    assert same.status_code == 200 and (same.json()["appended"], same.json()["duplicates"]) == (0, 1)
    changed = {**original, "content": "I prefer black coffee in the morning"}
    message = _error(d.as_a().post("/v1/turns", json=changed), 409, "message_id_conflict")
    assert "'m1'" in message and "different content" in message
    contents = {m["content"] for m in d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()}
    assert contents == {"User prefers green tea in the morning"}


def test_a_batch_with_a_conflict_names_the_turn_and_ingests_the_others(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    assert d.as_a().post("/v1/turns", json=turn(d.tenant_a, user, "My name is Ana Lima", message_id="m1")).is_success
    batch = [turn(d.tenant_a, user, "I work as a nurse in Lisbon", message_id="m2"),
             turn(d.tenant_a, user, "My name is Bea Costa", message_id="m1"),
             turn(d.tenant_a, user, "I live in Porto", message_id="m3")]
    response = d.as_a().post("/v1/turns", json={"turns": batch})
    _error(response, 409, "message_id_conflict")
    error = response.json()["error"]
    assert [(t["index"], t["message_id"], t["reason"]) for t in error["turns"]] == [(1, "m1", "conflict")]
    assert (error["ingested"]["received"], error["ingested"]["appended"]) == (3, 2)
    contents = {m["content"] for m in d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()}
    assert "User's name is Ana Lima" in contents and not any("Bea" in c for c in contents)
    assert any("Porto" in c for c in contents) and any("nurse" in c for c in contents)


def test_control_characters_are_stripped_and_a_far_future_ts_is_clamped(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    sneaky = {**turn(d.tenant_a, user, "I live in \u202ePorto\u202c\x07", message_id="m1"),
              "ts": "2999-01-01T00:00:00Z"}
    response = d.as_a().post("/v1/turns", json=sneaky)
    assert response.status_code == 200, response.text
    assert len(response.json()["warnings"]) == 1 and "2999-01-01" in response.json()["warnings"][0]
    memories = d.as_a().get("/v1/memories", params={"tenant": d.tenant_a, "user": user}).json()
    assert [m["content"] for m in memories] == ["User lives in Porto"]
    assert memories[0]["created_at"] < "2100"


def test_old_times_and_oversized_trace_parent_or_metadata_are_422(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    base = turn(d.tenant_a, user, "I like hiking")
    for field, value in (("ts", "1970-01-01T00:00:00Z"), ("trace_id", "t" * 129), ("parent_id", "p" * 129),
                         ("metadata", {"k": "v" * 1025}), ("metadata", {f"k{i}": "v" for i in range(33)})):
        message = _error(d.as_a().post("/v1/turns", json={**base, field: value}), 422, "invalid_request")
        assert field in message


def test_the_profile_lists_the_standing_entries_and_a_new_user_has_none(deployment: Deployment) -> None:
    d, user = deployment, new_id("user")
    d.as_a().post("/v1/turns", json={"turns": [
        turn(d.tenant_a, user, "I'm allergic to peanuts.", message_id="p1"),
        turn(d.tenant_a, user, "I've been dealing with depression since last winter.", message_id="p2")]})
    body = d.as_a().get("/v1/profile", params={"tenant": d.tenant_a, "user": user}).json()
    assert body["user_known"] and body["user_id"] == user
    entries = {e["content"]: e for e in body["entries"]}
    peanuts = next(e for c, e in entries.items() if "peanut" in c)
    assert "food" in peanuts["domains"] and peanuts["sensitive"] == [] and peanuts["memory_id"]
    assert any(e["sensitive"] == ["mental"] for e in entries.values())
    assert body["version"] >= 1  # the versioned profile document
    scope = {"tenant": d.tenant_a, "user": user}
    d.as_a().post(f"/v1/memories/{peanuts['memory_id']}/pin", json=scope).raise_for_status()
    pinned = d.as_a().get("/v1/profile", params=scope).json()
    assert pinned["version"] == body["version"] + 1 and pinned["entries"][0]["pinned"]
    d.as_a().delete(f"/v1/memories/{peanuts['memory_id']}", params=scope).raise_for_status()
    forgotten = d.as_a().get("/v1/profile", params=scope).json()
    assert forgotten["version"] == pinned["version"] + 1
    assert peanuts["memory_id"] not in {e["memory_id"] for e in forgotten["entries"]}
    stranger = d.as_a().get("/v1/profile", params={"tenant": d.tenant_a, "user": new_id("user")}).json()
    assert stranger["entries"] == [] and stranger["user_known"] is False and stranger["version"] == 0
