"""Where the user lives is one slot: a newer statement that they live, arrived or moved somewhere takes
out the older entries about where they live, its weather and its area that name another place."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG

from engram.recall.home_slot import claim_places, home_claim
from engram.recall.profile import superseded
from engram.recall.service import RecallRequest
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import MemoryChanged, ProfileChanged
from engram.schemas.memory import MemoryRecord
from engram.streams.processor import ProcessorContext
from engram.streams.profile import LiveEntry, ProfileProcessor, UserProfileState, live_entry, profile_document
from tests.drivers import profile_fact, turn

T0 = datetime(2026, 5, 1, tzinfo=timezone.utc)


def _entry(memory_id: str, content: str, day: int, layer: str = "L3") -> MemoryRecord:
    return profile_fact(memory_id, content, day, layer, T0)


@pytest.mark.parametrize("text", [
    "User just arrived in Denver for the new job", "User relocated to Osaka in the spring",
    "User is based out of the Lagos office now", "User lives in Valparaiso",
    "用户说：刚到西安，手续总算办完了", "用户说：上周搬来青岛了", "用户说：来苏州工作了，一切都新鲜",
    "User said: we finally closed on a house in Tacoma",
])
def test_arrivals_moves_and_residences_claim_the_home_slot(text: str) -> None:
    assert home_claim(text)


@pytest.mark.parametrize("text", [
    "User just arrived at the office", "用户说：刚到公司，先开个会", "User's sister lives in Tampa",
    "User is moving the call to Friday", "User loves the food in Lima",
])
def test_arriving_at_work_a_relatives_home_and_a_meeting_claim_nothing(text: str) -> None:
    assert not home_claim(text)


def test_a_claim_names_its_place() -> None:
    assert claim_places("User moved from Leeds to Cardiff") == {"Cardiff"}
    assert claim_places("用户说：刚到西安，手续总算办完了") == {"西安"}
    assert claim_places("User said: we moved house") == frozenset()


def test_a_newer_arrival_takes_out_the_older_home_weather_and_area_entries_of_another_place() -> None:
    records = [_entry("rain", "用户说：成都天天下雨，被子都是潮的", 0),
               _entry("area", "User said: restaurants in our part of Halifax close early", 1),
               _entry("same", "用户说：西安的冬天比我想的干", 2),
               _entry("diet", "用户不吃香菜", 2),
               _entry("arrived", "用户说：刚到西安，手续总算办完了", 3)]
    assert superseded(records) == {"rain", "area"}


def test_the_newest_residence_wins_and_an_older_claim_of_another_place_leaves() -> None:
    records = [_entry("old", "User lives in Valparaiso", 0), _entry("here", "User said: it's midnight here in Santiago", 1),
               _entry("new", "User relocated to Osaka in the spring", 2)]
    assert superseded(records) == {"old", "here"}
    assert superseded(records[:2]) == set(), "a place said in passing is no claim: a trip says as much"


def test_the_profile_document_drops_the_old_home_as_superseded() -> None:
    processor, state = ProfileProcessor(), UserProfileState()
    out: list[ProfileChanged] = []
    for n, (memory_id, text) in enumerate([("weather", "User said: the winters in Winnipeg are brutal"),
                                           ("arrived", "User just arrived in Perth for good")]):
        record = _entry(memory_id, text, n)
        event = MemoryChanged(event_id=f"e{n}", occurred_at=record.created_at, tenant_id="t", user_id="u",
                              memory_id=memory_id, change="created", after=record, relation="new", judge="rule")
        state, emitted = processor.process(state, event, ProcessorContext())  # type: ignore[assignment]
        out += [e for e in emitted if isinstance(e, ProfileChanged)]
    assert [(r.memory_id, r.reason) for r in out[-1].removed] == [("weather", "superseded")]
    assert state is not None and set(state.document) == {"arrived"}


def test_a_superseded_home_is_not_quoted_beside_another_note_of_its_turn(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path, ctx=default_context(DEFAULT_CONFIG, {"ENGRAM_EMBEDDER": "hashing"}))
    runtime.ingest([turn("ugh. also it's 2am here in Halifax and I'm still debugging, send coffee", at=T0),
                    turn("relocated!! I'm based out of our Perth office now, the time difference is wild",
                         session="s2", at=T0 + timedelta(days=3))])
    result = runtime.recall(RecallRequest("t1", "u1", "a1", "fresh", "Where should I take a visiting colleague "
                                          "for dinner? And how do I stop debugging so late?",
                                          T0 + timedelta(days=6)))
    assert "Perth" in result.memory_section
    assert "Halifax" not in result.memory_section
    runtime.close()


def test_a_hometown_and_the_home_itself_are_not_where_the_user_lives_now() -> None:
    records = [_entry("origin", "User is originally from Lagos", 0), _entry("grew", "用户说：我在大理长大", 0),
               _entry("saving", "User is saving for a house deposit", 0),
               _entry("moved", "User relocated to Osaka in the spring", 2)]
    assert superseded(records) == set()


def test_a_residence_restated_takes_out_only_entries_naming_another_place() -> None:
    records = [_entry("winters", "User said: winters here are endless", 0),
               _entry("other", "User said: the buses in Dunedin are always late", 0),
               _entry("lives", "User lives in Winnipeg", 2)]
    assert superseded(records) == {"other"}, "a statement of residence is no move: a placeless entry may be of it"
    moved = [*records[:2], _entry("commute", "User's commute is fifty minutes each way", 1),
             _entry("arrived", "User just arrived in Winnipeg for good", 2)]
    assert superseded(moved) == {"winters", "other", "commute"}


def test_holding_on_is_no_home_and_a_diet_condition_is_food() -> None:
    from engram.core.domains import domains_of
    assert "home" not in domains_of("用户有点怕撑不住") and "home" not in domains_of("用户记住了密码位置")
    assert "home" in domains_of("用户住在滨江") and "home" in domains_of("用户说：我们租住在老城区")
    assert "food" in domains_of("User's son is coeliac") and "food" in domains_of("用户有乳糜泻")


@pytest.mark.parametrize("text", [
    "User just arrived in Lisbon for a conference", "User landed in Seoul for a week of meetings",
    "User arrived in Madrid on business, flying back on Friday", "用户说：刚到杭州出差，后天回去",
    "用户说：刚到成都开会", "用户说：刚到厦门玩几天", "User's son just arrived in Lisbon",
])
def test_a_trip_or_a_relatives_arrival_does_not_take_the_users_home_away(text: str) -> None:
    records = [_entry("home", "User lives in Ottawa", 0), _entry("later", text, 2)]
    assert superseded(records) == set()
    assert not home_claim(text)


def test_a_chinese_arrival_names_its_place_without_the_trip() -> None:
    assert claim_places("用户说：刚到杭州出差，后天回去") == {"杭州"}
    assert claim_places("用户说：刚到成都开会") == {"成都"}


def _saved_before(record: MemoryRecord, *missing: str) -> LiveEntry:
    """A live entry as a profile state saved before the fields `missing` were kept loads it."""
    saved = live_entry(record, 1).model_dump(mode="json")
    for field in missing:
        saved.pop(field)
    saved.pop("moved", None)
    return LiveEntry.model_validate(saved)


def test_a_profile_state_saved_before_the_home_slot_removes_nothing_it_cannot_tell() -> None:
    older = [_entry("placeless", "User said: the summers here are sticky", 0),
             _entry("named", "User said: the ferries in Nanaimo are always late", 0)]
    claim = _entry("claim", "User just arrived in Regina for good", 2)
    no_places = {r.memory_id: _saved_before(r, "places", "moves_home") for r in [*older, claim]}
    assert set(profile_document(no_places)) == {"placeless", "named", "claim"}
    no_moves = {r.memory_id: _saved_before(r, "moves_home") for r in [*older, claim]}
    assert set(profile_document(no_moves)) == {"placeless", "claim"}, "a claim not known to be a move is a residence"
    fresh = {r.memory_id: live_entry(r, 1) for r in [*older, claim]}
    assert set(profile_document(fresh)) == {"claim"}


def test_a_move_with_a_pastime_said_beside_it_is_still_a_claim() -> None:
    assert home_claim("用户说：来苏州工作了，周末带孩子出去玩")
