"""Where the user is, read from how they talk about its weather and seasons (`streams.rules.local_talk`)."""

from __future__ import annotations

import pytest

from engram.core.domains import ZH_WHEREABOUTS
from engram.streams.rules import extract_drafts


def _places(text: str) -> list[str]:
    return [d.content for d in extract_drafts("user", text) if d.attribute == "location"]


@pytest.mark.parametrize(("said", "note"), [
    ("长沙这天气真的离谱，早上穿棉袄中午穿短袖", "用户在长沙"),
    ("合肥今年梅雨季特别长，衣服都晒不干", "用户在合肥"),
    ("Oslo最近终于出太阳了，带孩子去公园转了一圈", "用户在Oslo"),
    ("Calgary winters are no joke, I need proper boots", "User is in Calgary"),
    ("The rain in Galway has been relentless all week", "User is in Galway"),
])
def test_a_place_whose_weather_the_user_talks_of_is_where_they_are(said: str, note: str) -> None:
    assert _places(said) == [note]


@pytest.mark.parametrize("said", [
    "下周要去昆明出差，昆明天气怎么样？",  # a trip's destination
    "Planning a trip to Lisbon, is Lisbon weather ok in March?",
    "今年夏天好热，空调都顶不住",  # no place
    "最近天气好冷",
    "Today's weather is lovely",
    "杭州和苏州这几天都在下雨",  # two places: which one is home cannot be told
])
def test_weather_talk_that_names_no_single_place_of_the_users_own_says_nothing(said: str) -> None:
    assert not [p for p in _places(said) if p.startswith(("用户在", "User is in"))]


def test_a_place_already_noted_as_where_the_user_is_is_not_noted_twice() -> None:
    assert _places("我在昆明，昆明天气真好") == ["用户在昆明"]


@pytest.mark.parametrize(("said", "home"), [
    ("用户在绵阳开火锅店", True), ("用户在洛阳送外卖", True), ("用户在家做饭", False), ("用户在考虑换工作", False),
    ("我在开会", False),
])
def test_a_place_said_by_what_the_user_does_there_is_about_where_they_are(said: str, home: bool) -> None:
    assert (ZH_WHEREABOUTS.search(said) is not None) is home


@pytest.mark.parametrize("said", [
    "感觉天气越来越冷了",  # a verb of feeling, no place
    "空调温度太低了",  # a thing's temperature
    "咖啡太热了喝不了",
    "办公室好冷，穿了两件毛衣",  # a room
    "宝宝好热，一直出汗",
    "Emma's winter coat is too small",  # a person's winter coat
    "Jake's summer camp starts Monday",
    "Apple's fall event is tomorrow",
    "Christmas traffic was awful",  # a time of year, no place
    "Morning traffic was brutal today",
])
def test_a_things_heat_or_a_persons_season_says_no_place(said: str) -> None:
    assert not [p for p in _places(said) if p.startswith(("用户在", "User is in"))]


@pytest.mark.parametrize(("said", "note"), [("长沙最近好热，开了一整天空调", "用户在长沙"),
                                            ("上海又下雨了", "用户在上海"),
                                            ("Denver winters are brutal", "User is in Denver")])
def test_a_places_own_weather_still_says_where_the_user_is(said: str, note: str) -> None:
    assert _places(said) == [note]


@pytest.mark.parametrize(("said", "note"), [("成都这几天一直下雨", "用户在成都"), ("太原今年冬天特别冷", "用户在太原")])
def test_a_city_whose_name_holds_a_function_character_is_still_a_place(said: str, note: str) -> None:
    assert _places(said) == [note]
