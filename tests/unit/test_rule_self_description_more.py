"""Self-descriptions that run over several sentences and clause shapes that used to lose a fact (rules/clauses,
rules/en_turn, rules/zh, rules/quantities), on sentences written for these tests."""

from __future__ import annotations

from engram.schemas.memory import MemoryType as T
from engram.streams.rules.clauses import telegraphic, zh_emphatic_shi
from engram.streams.rules.quantities import en_measured, en_turning, zh_duration

from tests.unit.rule_helpers import contents, notes


def test_a_name_opens_a_description_that_runs_into_the_next_sentences() -> None:
    found = notes("I'm Oskar. Marine biologist. Pescatarian. Based in Bergen.")
    assert (T.USER_PROFILE, "User's name is Oskar", False) in found
    assert (T.USER_CONSTRAINT, "User is pescatarian", False) in found
    assert any("Bergen" in c for _, c, _ in found)
    assert any("biologist" in c for _, c, _ in found)


def test_a_condition_named_on_its_own_is_the_users() -> None:
    assert telegraphic("type 2 diabetic") == "I'm type 2 diabetic"
    assert telegraphic("left-handed") == "I'm left-handed"
    assert telegraphic("Tuesday afternoon") is None
    assert "User is asthmatic" in contents("Context so you know: I'm a plasterer, 33, asthmatic, I live in Hull.")


def test_a_goal_keeps_its_time() -> None:
    assert notes("My goal for next year is to swim the Channel.") == [
        (T.USER_GOAL, "User's goal for next year is to swim the Channel", False)]


def test_an_age_to_come_is_a_dated_fact_not_a_plan() -> None:
    draft = en_turning("I'm turning 65 next spring")
    assert draft is not None and draft.type is T.USER_FACT and draft.content == "User turns 65 next spring"
    assert en_turning("I'm turning the lights off") is None


def test_a_measured_clause_is_kept_whole() -> None:
    assert en_measured("I swim about 3 km") and not en_measured("I swim a lot")
    assert "User runs 40 km" in contents("I run 40 km and I'm aiming for a marathon.")


def test_been_in_a_named_place_for_a_while_is_where_the_user_lives() -> None:
    assert notes("I've been in Tallinn since 2019.") == [(T.USER_FACT, "User lives in Tallinn", False)]
    assert not [n for n in notes("I've been in a slump for weeks.") if "lives in" in n[1]]


def test_an_employer_said_without_a_verb_in_a_job_change() -> None:
    found = contents("I'm joining Canva in June, for now still at Atlassian.")
    assert "User works at Atlassian" in found
    assert "User works at Canva" not in found


def test_a_shared_im_across_and_gives_two_facts() -> None:
    assert contents("I'm dairy-free and training for a triathlon.") == [
        "User is dairy-free", "User is training for a triathlon"]


def test_chinese_latin_given_name_and_employer_by_kind() -> None:
    assert "用户叫Lena" in contents("你好，我是 Lena，在深圳做 data analyst。")
    found = contents("我在武汉一家设计院做结构设计。")
    assert "用户在武汉工作" in found and "用户是结构设计" in found


def test_emphatic_shi_reads_like_the_plain_clause() -> None:
    assert zh_emphatic_shi("是在厦门工作的") == "在厦门工作"
    assert zh_emphatic_shi("是学生") == "是学生"
    assert "用户喜欢听相声" in contents("我是真的很喜欢听相声。")


def test_a_stay_keeps_its_verb_and_object() -> None:
    assert zh_duration("在大连开了八年车") is not None
    assert zh_duration("之前在华为干了三年") is not None


def test_a_subject_less_clause_after_someone_elses_is_theirs() -> None:
    assert not [c for c in contents("我室友今年二十五，在学吉他。") if "吉他" in c and not c.startswith("用户说")]
    assert "用户在学吉他" in contents("我今年二十五，在学吉他。")


def test_me_heading_and_a_role_based_somewhere() -> None:
    found = contents("Me: 58, retired welder, keen birdwatcher.")
    assert "User is 58 years old" in found and any("welder" in c for c in found)
    assert "User lives in Galway" in contents("Make me a logo - I'm a tattoo artist based in Galway.")


def test_fear_degree_and_applying_read_as_what_they_say() -> None:
    assert notes("I'm scared of deep water.") == [(T.USER_PREFERENCE, "User is scared of deep water", True)]
    assert contents("I quite enjoy crosswords.") == ["User quite enjoys crosswords"]
    assert notes("I'm applying for a lectureship in Dundee.")[0][0] is T.USER_GOAL
    assert "用户40岁" in contents("说错了，我不是39岁，是40岁。")


def test_frequency_and_degree_adverbs_before_the_verb_are_skipped() -> None:
    from engram.streams.rules.person import third_person
    assert third_person("I hardly ever take the bus") == "User hardly ever takes the bus"
    assert third_person("I seldom watch TV") == "User seldom watches TV"


def test_a_shared_i_after_an_age_or_a_role_and_a_name_said_with_here() -> None:
    assert contents("I'm 47 and recently took up pottery.") == ["User is 47 years old", "User recently took up pottery"]
    assert "User is a dentist" in contents("I'm a dentist and mostly work evenings.")
    found = contents("Hey, Priyanka here. Data engineer at Zalando, 29.")
    assert "User's name is Priyanka" in found and "User is 29 years old" in found
    assert contents("Nobody here.") == []


def test_a_fronted_start_or_horizon_stays_with_the_note() -> None:
    assert contents("By the end of the month I want to finish my thesis draft.") == [
        "User wants to finish their thesis draft by the end of the month"]
    assert notes("Starting in May I'll be commuting to Utrecht.")[0][1].endswith("(starting in May)")
    assert en_turning("I'll turn 18 in June") is not None
    assert notes("I'm heading to grad school in the autumn.")[0][0] is T.USER_GOAL


def test_a_chinese_telegraphic_self_description() -> None:
    found = contents("简单介绍下自己：男，江西人，80后，会计，在备考注会。")
    assert {"用户是男性", "用户来自江西", "用户是80后", "用户是会计"} <= set(found)
    assert any(c.startswith("用户在备考注会") for c in found)
    assert "用户叫小刘" in contents("我是小刘，做运营的。")
    assert "用户叫老师" not in contents("我是老师。")


def test_a_city_that_starts_like_a_verb_is_still_a_place() -> None:
    assert contents("我现在在上海。") == ["用户在上海"]
    assert contents("我在上班。") == []
    assert "用户在杭州工作" in contents("我在杭州一家医院做护士。")


def test_a_name_with_its_origin_and_a_bare_origin_in_a_description() -> None:
    found = contents("Hello, I'm Ines from Porto. Pharmacist, 38.")
    assert "User's name is Ines" in found and "User is from Porto" in found
    assert "User is from Accra" in contents("About me: civil engineer, originally from Accra, two cats.")
