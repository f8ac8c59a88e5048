"""Single-valued aspects of the user besides where they live: the job, the rate they charge, an activity
dropped, a relationship ended. A newer entry for the slot takes out the older ones, at recall and in the
profile processor (which keeps digests, never text)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from engram.projections.ports import SearchHit
from engram.recall.profile import left_profile, superseded
from engram.recall.slots import ended_activities, ended_partners, job_claim, left_places, rate_claim
from engram.schemas.events import MemoryChanged
from engram.schemas.memory import MemoryRecord
from engram.streams.processor import ProcessorContext
from engram.streams.profile import ProfileProcessor, UserProfileState
from tests.drivers import profile_fact

T0 = datetime(2026, 2, 1, tzinfo=timezone.utc)


def _gone(*entries: tuple[str, str, int]) -> set[str]:
    return superseded([profile_fact(m, text, day, start=T0) for m, text, day in entries])


@pytest.mark.parametrize("text", [
    "User started a new job at a logistics firm", "User was laid off in March", "User quit their job to freelance",
    "用户换工作了，去了一家游戏公司", "用户下周一入职新单位", "用户上个月离职了", "用户说：我辞职了，自己开了一家面包店",
    "User opened their own bakery downtown",
])
def test_changes_of_job_claim_the_job_slot(text: str) -> None:
    assert job_claim(text)


@pytest.mark.parametrize("text", ["User works in Leeds", "User's job interview is on Monday", "用户在公司加班"])
def test_work_that_is_no_change_of_job_claims_nothing(text: str) -> None:
    assert not job_claim(text)


def test_a_new_job_takes_out_the_old_occupation_and_employer() -> None:
    gone = _gone(("role", "User is a pharmacist", 0), ("shop", "User works at a chemist on Elm Street", 1),
                 ("cat", "User's cat is called Pip", 2), ("new", "User started a new job at a logistics firm", 5))
    assert gone == {"role", "shop"}


def test_a_chinese_change_of_job_takes_out_the_old_role() -> None:
    gone = _gone(("role", "用户是收银员", 0), ("age", "用户35岁", 1), ("new", "用户说：我辞职了，自己开了一家面包店", 4))
    assert gone == {"role"}


@pytest.mark.parametrize("text, claimed", [
    ("User charges €40 an hour for tutoring", True), ("From now on User's rate is $55/h", True),
    ("用户的报价是每小时300元", True), ("用户涨价到千字200元", True),
    ("User keeps fun stuff to $200 a month", False), ("User is 42", False),
])
def test_a_rate_claim_is_an_amount_charged_per_unit_of_work(text: str, claimed: bool) -> None:
    assert bool(rate_claim(text)) is claimed


def test_a_newer_rate_takes_out_the_older_one_but_not_a_budget() -> None:
    gone = _gone(("old", "User charges €40 an hour for tutoring", 0), ("budget", "User keeps fun stuff to $200 a month", 1),
                 ("new", "User said: from now on I charge €55 an hour", 6))
    assert gone == {"old"}


def test_an_older_entry_naming_the_new_amount_stays() -> None:
    gone = _gone(("same", "User charges €55 an hour for lessons", 0), ("new", "User raised their rate to €55 an hour", 3))
    assert gone == set()


@pytest.mark.parametrize("text, dropped", [
    ("Tom quit judo and wants to try fencing", {"judo"}), ("User's son stopped violin last month", {"violin"}),
    ("用户说：儿子不学书法了，改学游泳", {"书法"}), ("用户说：小明说画画不学了", {"画画"}), ("用户说：她不踢 rugby 了", {"rugby"}),
])
def test_an_activity_dropped_is_named(text: str, dropped: set[str]) -> None:
    assert ended_activities(text) == frozenset(dropped)


def test_stopped_by_drops_nothing() -> None:
    assert ended_activities("User stopped by the bakery") == frozenset()


def test_a_dropped_activity_takes_out_the_entries_about_it_and_only_those() -> None:
    gone = _gone(("judo", "User's son Tom has judo on Tuesdays", 0), ("tom", "User's son Tom is 8", 1),
                 ("quit", "Tom quit judo and wants to try fencing", 5))
    assert gone == {"judo"}
    zh = _gone(("art", "用户说：儿子每周日上书法课", 0), ("age", "用户说：儿子今年7岁", 1), ("quit", "用户说：儿子不学书法了，改学游泳", 3))
    assert zh == {"art"}


@pytest.mark.parametrize("text, partners", [
    ("User said: Priya and I broke up last week", {"priya"}), ("User split up with Jonas", {"jonas"}),
    ("用户说：我和小林分手了", {"小林"}),
])
def test_a_relationship_ended_names_the_partner(text: str, partners: set[str]) -> None:
    assert partners <= ended_partners(text)


def test_a_breakup_takes_out_the_entries_naming_the_partner() -> None:
    gone = _gone(("bf", "User's boyfriend Jonas is a chef", 0), ("trip", "User and Jonas plan to visit Rome", 1),
                 ("dog", "User's dog is called Rex", 2), ("end", "User split up with Jonas", 4))
    assert gone == {"bf", "trip"}
    zh = _gone(("bf", "用户说：男朋友小林周末来看我", 0), ("job", "用户是护士", 1), ("end", "用户说：我和小林分手了", 3))
    assert zh == {"bf"}


def test_the_profile_processor_drops_a_superseded_rate_and_keeps_no_text() -> None:
    processor, state, removed = ProfileProcessor(), None, []
    for n, (memory_id, text) in enumerate([("old", "User charges €40 an hour for tutoring"),
                                           ("new", "User said: from now on I charge €55 an hour")]):
        record = profile_fact(memory_id, text, n, start=T0)
        event = MemoryChanged(event_id=f"e{n}", occurred_at=record.updated_at, tenant_id="t", user_id="u",
                              memory_id=memory_id, change="created", before=None, after=record, relation="new",
                              judge="rule")
        state, out = processor.process(state, event, ProcessorContext())
        removed += [(r.memory_id, r.reason) for e in out for r in getattr(e, "removed", ())]
    assert isinstance(state, UserProfileState) and set(state.document) == {"new"}
    assert removed == [("old", "superseded")]
    assert "40" not in state.model_dump_json() and "tutoring" not in state.model_dump_json()


def _process(records: list[MemoryRecord]) -> tuple[UserProfileState, list[tuple[str, str]]]:
    processor, state, removed = ProfileProcessor(), None, []
    for n, record in enumerate(records):
        event = MemoryChanged(event_id=f"e{n}", occurred_at=record.updated_at, tenant_id="t", user_id="u",
                              memory_id=record.memory_id, change="created", before=None, after=record,
                              relation="new", judge="rule")
        state, out = processor.process(state, event, ProcessorContext())
        removed += [(r.memory_id, r.reason) for e in out for r in getattr(e, "removed", ())]
    assert isinstance(state, UserProfileState)
    return state, removed


def test_a_change_said_in_passing_outside_the_profile_still_ends_a_profile_entry() -> None:
    state, removed = _process([profile_fact("m1", "User's son Tom has judo on Tuesdays", 0, start=T0),
                               profile_fact("m2", "User mentioned: Tom quit judo", 3, layer="L1", start=T0)])
    assert set(state.document) == set() and removed == [("m1", "superseded")]
    assert "judo" not in state.model_dump_json()


def test_a_memory_that_tells_of_no_change_outside_the_profile_is_not_kept() -> None:
    state, _ = _process([profile_fact("l1", "User mentioned: the printer jammed again", 0, layer="L1", start=T0)]
                        + [profile_fact("l3", "User is a nurse", 1, start=T0)])
    assert state.changes == {} and set(state.document) == {"l3"}


def test_recall_leaves_out_a_found_profile_memory_the_document_no_longer_holds() -> None:
    old = profile_fact("old", "User's son Tom has judo on Tuesdays", 0, start=T0)
    newer = profile_fact("new", "User's son Tom has chess on Fridays", 5, start=T0)
    hits = [SearchHit(record=r, keyword_score=1.0, vector_score=0.5) for r in (old, newer)]
    as_of = old.updated_at + timedelta(days=1)
    assert left_profile(hits, (frozenset(), as_of)) == {"old"}  # "new" is newer than the document: not judged
    assert left_profile(hits, None) == set()


@pytest.mark.parametrize(("text", "left"), [
    ("User said: my husband and I moved from Cork to Galway", {"Cork"}),
    ("用户上个月从长沙搬到了厦门", {"长沙"}),
    ("User's sister moved from Leeds to York", set()),
    ("用户的妹妹从长沙搬到了厦门", set()),
    ("User switched from Angular to Svelte", set()),
])
def test_the_place_left_is_the_users_own_move_away(text: str, left: set[str]) -> None:
    assert left_places(text) == frozenset(left)


def test_a_move_away_ends_what_named_the_old_place_but_not_where_the_user_comes_from() -> None:
    gone = _gone(("work", "用户在长沙工作", 0), ("origin", "用户来自长沙", 1), ("dog", "用户家的狗叫豆包", 2),
                 ("move", "用户上个月从长沙搬到了厦门", 5))
    assert gone == {"work"}
    gone = _gone(("park", "User walks the dog in a Cork park every morning", 0), ("from", "User is from Cork", 1),
                 ("move", "User said: my husband and I moved from Cork to Galway", 4))
    assert gone == {"park"}


def test_a_roommates_nationality_is_not_where_the_user_comes_from() -> None:
    gone = _gone(("phd", "用户说：我在格拉茨读博,室友是挪威人,人很好。", 0), ("move", "用户从格拉茨搬到了维也纳", 3))
    assert gone == {"phd"}


@pytest.mark.parametrize("text", ["User plans to move from Halifax to Moncton next year",
                                  "User might relocate from Halifax to Moncton", "用户打算明年从长沙搬到厦门"])
def test_a_move_only_planned_leaves_no_place(text: str) -> None:
    assert left_places(text) == frozenset()


def test_a_planned_move_ends_nothing_that_names_where_the_user_still_lives() -> None:
    assert _gone(("park", "User walks the dog in a Halifax park", 0),
                 ("plan", "User plans to move from Halifax to Moncton next year", 5)) == set()
    assert _gone(("work", "用户在长沙工作", 0), ("plan", "用户打算明年从长沙搬到厦门", 5)) == set()


def test_a_long_word_is_read_for_activities_in_linear_time() -> None:
    import time
    start = time.perf_counter()
    assert ended_activities("x" * 50_000 + " quit") == frozenset()
    assert ended_activities("他说 rugby 不踢了") == frozenset({"rugby"})
    assert time.perf_counter() - start < 1.0


def test_a_move_takes_out_a_place_said_by_what_the_user_did_there() -> None:
    gone = _gone(("work", "用户在绍兴做电商运营好几年了", 0), ("move", "用户说：上周终于搬到温州了,老公工作调动。", 3))
    assert gone == {"work"}


@pytest.mark.parametrize("text", ["User got the Westbrook job", "I landed the Northwind Labs role!"])
def test_a_job_named_by_its_employer_is_a_change_of_job(text: str) -> None:
    assert job_claim(text)
