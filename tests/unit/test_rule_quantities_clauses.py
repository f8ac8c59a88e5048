"""Quantities kept with their subject (rules/quantities) and clause repairs for long self-descriptions
(rules/clauses), on sentences written for these tests."""

from __future__ import annotations

from engram.schemas.memory import MemoryType as T
from engram.streams.rules.clauses import collapse_repeats, telegraphic, unwrap_reminders, verb_first
from engram.streams.rules.quantities import en_bare_age, zh_measured

from tests.unit.rule_helpers import contents, notes


def test_a_measured_attribute_of_the_user_keeps_its_amount_and_unit() -> None:
    assert "用户的年薪税前40万" in contents("我在银行做风控，年薪税前40万。")
    assert "用户的部门一共12个人" in contents("我是测试组长，部门一共12个人。")
    assert zh_measured("天气很好") is None
    assert zh_measured("你们公司多少人") is None


def test_a_measured_clause_about_someone_else_is_not_the_users() -> None:
    assert not [c for c in contents("他们公司一共300个人。") if "300" in c]


def test_ages_bare_and_embedded() -> None:
    assert en_bare_age("47") is not None and en_bare_age("7") is None and en_bare_age("470") is None
    found = notes("I'm a 39-year-old welder.")
    assert (T.USER_PROFILE, "User is 39 years old", False) in found
    assert "User is 61 years old" in contents("I'm Greta, 61, a beekeeper.")


def test_role_duration_gives_the_role_and_how_long() -> None:
    assert contents("我干了6年前端开发。") == ["用户是前端开发", "用户做了6年前端开发"] or \
        contents("我做了6年前端开发。") == ["用户是前端开发", "用户做了6年前端开发"]


def test_verb_first_and_telegraphic_clauses_in_a_self_description() -> None:
    assert verb_first("feed my chickens at dawn") == "I feed my chickens at dawn"
    assert verb_first("with my cousin") is None
    assert telegraphic("retired marine engineer from Hull") == "I'm a retired marine engineer from Hull"
    assert telegraphic("three rescue cats") == "I have three rescue cats"
    found = contents("Quick bio: I'm Ines, hospital pharmacist, huge fan of opera, tend my allotment on Sundays.")
    assert {"User is a hospital pharmacist", "User is a huge fan of opera",
            "User tends their allotment on Sundays"} <= set(found)


def test_reminder_frames_are_taken_off_the_statement() -> None:
    assert unwrap_reminders("Friendly reminder: I don't eat mushrooms.") == "I don't eat mushrooms."
    assert unwrap_reminders("Like I said earlier, I'm left-handed.") == "I'm left-handed."
    assert unwrap_reminders("再强调一下，我不吃羊肉。") == "我不吃羊肉。"
    assert contents("As I mentioned, I hate olives.") == [*contents("I hate olives."), "User repeated: I hate olives"]


def test_a_self_description_heading_makes_the_following_phrases_the_users() -> None:
    found = contents("Short bio: museum curator, 44, three grown daughters.")
    assert {"User is a museum curator", "User is 44 years old", "User has three grown daughters"} <= set(found)
    assert "用户29岁" in contents("我的基本情况：29岁，在武汉读博。")


def test_an_opinion_about_an_unnamed_thing_is_not_a_note() -> None:
    assert notes("Honestly I think it's overpriced.") == []


def test_a_contact_note_never_keeps_its_number() -> None:
    assert not [c for c in contents("My number is 867-5309 and I sell insurance.") if "5309" in c]


def test_scores_and_stays_keep_their_numbers() -> None:
    assert "用户的雅思考了7.5分" in contents("我在准备留学，雅思考了7.5分。")
    assert "用户在药厂上班两年多了" in contents("我学药学的，在药厂上班两年多了。")


def test_a_job_phrase_with_its_workplace_and_a_lone_adjective() -> None:
    assert telegraphic("night nurse at a clinic in Derry") == "I'm a night nurse at a clinic in Derry"
    assert telegraphic("widowed", heading=True) is None
    assert telegraphic("keen gardener", heading=True) == "I'm a keen gardener"


def test_still_and_need_read_as_the_user_said_them() -> None:
    assert contents("我依然不喝可乐。") == ["用户不喝可乐"]
    assert contents("I need to renew my lease by June.") == ["User needs to renew their lease by June"]


def test_emphatic_repeats_and_chinese_still_do_not_change_the_fact() -> None:
    assert collapse_repeats("I really, really miss it") == "I really miss it"
    assert contents("I truly, truly dislike karaoke.") == contents("I truly dislike karaoke.")
    assert contents("我依旧每周游泳。") == contents("我每周游泳。")


def test_team_sizes_ages_without_sui_and_our_organisation() -> None:
    assert contents("我们小组5个人，我是组长。") == ["用户是组长", "用户小组5个人"]
    assert contents("我今年四十二了。") == ["用户四十二岁"]
    assert contents("Our bakery has 7 staff.") == ["User's bakery has 7 staff"]
    assert not [c for c in contents("我们店开了三年，一共9个人。") if c.startswith("用户的一共")]
    assert contents("Our landlord is strict.") == []


def test_an_income_per_period_keeps_its_amount() -> None:
    assert "用户的每月房贷大概6千" in contents("我在苏州做设计，每月房贷大概6千。")
    assert "用户的一年奖金2万5" in contents("我做销售的，一年奖金2万5。")
