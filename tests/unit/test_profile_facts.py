"""What a standing profile needs, read and kept current: where-statements are home, named ages are family,
weather raises home, a trip reaches the body's limits, recurring schedules and decisions are profile
entries, subjectless and fragmentary chat is still the user's, lasting clauses survive a momentary
sentence, and a new job, project or schedule supersedes the old one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from engram.core.domains import domain_overlap, domains_of, profile_layer
from engram.core.sensitive import may_show
from engram.recall.profile import superseded
from engram.schemas.memory import MemoryRecord, MemoryType
from engram.streams.rules import extract_drafts
from engram.streams.rules.common import sentences
from engram.streams.rules.standing_parts import join_fragments, lasting_clauses

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)


def _record(memory_id: str, content: str, day: int) -> MemoryRecord:
    at = T0 + timedelta(days=day)
    return MemoryRecord(memory_id=memory_id, tenant_id="t1", user_id="u1", layer="L3", type=MemoryType.USER_FACT,
                        slot="user_fact", content=content, confidence=0.8, importance=0.5, created_at=at,
                        updated_at=at, last_seen_at=at)


def _contents(text: str) -> list[str]:
    return [d.content for d in extract_drafts("user", text)]


@pytest.mark.parametrize("text", ["User is in Porto these days", "User runs a bakery out of Tromsø",
                                  "First night in the Hobart flat", "用户住在滨江那边", "公司把我调到成都了"])
def test_a_statement_of_where_is_home(text: str) -> None:
    assert "home" in domains_of(text)


@pytest.mark.parametrize("text", ["I hurt my back in October", "Please answer in Portuguese",
                                  "We met on Thursday", "Python is 3 times faster"])
def test_months_days_languages_and_ratios_are_no_place_nor_age(text: str) -> None:
    assert "home" not in domains_of(text) and "family" not in domains_of(text)


def test_someone_named_with_an_age_is_family() -> None:
    assert "family" in domains_of("Otto is 7 and Wren just turned 2")
    assert "family" not in domains_of("The meeting is 10:30")


def test_outings_and_weather_raise_home_and_a_trip_reaches_the_body() -> None:
    assert domain_overlap(domains_of("Ideas for a Sunday afternoon?"), domains_of("User is in Porto these days")) == 1.0
    assert domain_overlap(domains_of("这周六去哪儿玩？"), domains_of("用户住在滨江那边")) == 1.0
    assert "home" in domains_of("Winters here are endless and grey")
    assert may_show(domains_of("Plan a four-day trip to the coast"), "User tore a ligament in their knee")
    assert not may_show(domains_of("Draft a memo on the Q3 budget"), "User tore a ligament in their knee")


@pytest.mark.parametrize(("memory_type", "content", "expected"), [
    (MemoryType.USER_FACT, "User mentioned: choir is Mondays and Wednesdays 7 to 9, those nights are taken", True),
    (MemoryType.USER_FACT, "用户说：店里每周三休息", True),
    (MemoryType.USER_GOAL, "User decided to stop eating red meat", True),
    (MemoryType.USER_GOAL, "User wants to try bouldering someday", False),
    (MemoryType.USER_FACT, "User mentioned: the parade starts at noon", False),
])
def test_recurring_schedules_and_decisions_are_profile_entries(memory_type: MemoryType, content: str,
                                                                expected: bool) -> None:
    assert profile_layer(memory_type, memory_type.value, content) is expected


def test_a_fragment_joins_the_sentence_before_it() -> None:
    split = join_fragments(sentences("We're finally going on the big trip!! Lisbon, six days in May. Can't wait."))
    assert any("trip" in s and "Lisbon" in s for s, _ in split)
    assert join_fragments(sentences("I moved. Yes, it was hard.")) == sentences("I moved. Yes, it was hard.")


def test_a_momentary_sentence_gives_its_lasting_first_person_clause() -> None:
    split = lasting_clauses(sentences("I'm a sous-chef at a bistro in Ghent, and today was a double shift."))
    assert [s for s, _ in split] == ["I'm a sous-chef at a bistro in Ghent."]
    zh = lasting_clauses(sentences("今天买的饼干全含芝麻，我芝麻过敏，白买了"))
    assert [s for s, _ in zh] == ["我芝麻过敏"]


def test_chat_without_a_subject_is_still_the_users_profile() -> None:
    assert any("Hobart" in c for c in _contents("Boxes everywhere. New place is in Sandy Bay, Hobart."))
    assert any("Otto" in c for c in _contents("Two kids at home now. Otto is 7 and Wren just turned 2."))
    assert any("Lisbon" in c for c in _contents("hotel is sorted!! Lisbon, May 4th to 10th."))
    assert any("芝麻" in c for c in _contents("今天买的饼干全含芝麻，我芝麻过敏，白买了"))
    assert any("Brightline" in c for c in _contents("Big news: first day at Brightline Labs tomorrow, running QA."))


def test_a_wish_about_answers_is_kept_though_the_turn_was_understood() -> None:
    contents = _contents("Please keep answers under 80 words. I'm swamped and I hate long reads.")
    assert any("80 words" in c for c in contents)


def test_a_lasting_fact_of_a_new_domain_is_kept_beside_the_notes() -> None:
    assert any("哮喘" in c for c in _contents("我爸今年68了，哮喘好多年了"))
    assert not any("flu" in c for c in _contents("Yesterday my cat knocked over a vase, and I had the flu."))


def test_a_new_job_a_new_client_and_a_moved_schedule_supersede_the_old() -> None:
    job = [_record("a", "User works night shifts at the county hospital", 0),
           _record("b", "User took the job at a design studio", 5),
           _record("c", "User has a sister called Ines", 1)]
    assert superseded(job) == {"a"}
    client = [_record("a", "用户说：这个项目每周一要去苏州见客户", 0), _record("b", "用户说：项目换了，新客户在杭州", 4)]
    assert superseded(client) == {"a"}
    schedule = [_record("a", "User has piano lessons on Tuesday evenings", 0),
                _record("b", "User has yoga on Friday mornings", 1),
                _record("c", "User moved piano lessons to Thursday afternoons", 6)]
    assert superseded(schedule) == {"a"}  # the yoga names nothing the change does: it stays


def test_people_and_pets_are_kept_by_name_with_their_relation() -> None:
    assert "用户家的柴犬叫团子" in _contents("我家柴犬团子今天把拖鞋叼走了")
    assert "User's terrier is called Pickle" in _contents("Pickle, our terrier, ate a whole sock this morning.")
    assert not any(c.startswith("用户家的") for c in _contents("我女儿今年上小学了"))  # "今年" is no name
