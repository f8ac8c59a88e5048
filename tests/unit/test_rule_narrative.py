"""Narrative-chat mechanisms of the rule extractor (streams/rules/narrative.py), one test per mechanism.

Sentences are written for these tests (none comes from LoCoMo or the extraction bench).
"""

from __future__ import annotations

import pytest

from engram.schemas.memory import MemoryType
from engram.streams.rules import extract_drafts
from engram.streams.rules.narrative import attachments, dropped_subject, front_time, is_event, is_phatic, is_task

T = MemoryType


def notes(text: str) -> list[tuple[MemoryType, str]]:
    return [(d.type, d.content) for d in extract_drafts("user", text, False)]


def contents(text: str) -> list[str]:
    return [content for _, content in notes(text)]


# fronted time
def test_fronted_time_is_moved_to_the_end_of_the_note() -> None:
    assert front_time("Last Tuesday I visited a glass-blowing studio") == ("I visited a glass-blowing studio",
                                                                          "last Tuesday")
    assert front_time("I visited a studio") == ("I visited a studio", "")
    assert contents("Three weeks ago we hiked to a glacier lake.") == [
        "User and others hiked to a glacier lake (three weeks ago)"]


def test_fronted_time_note_survives_a_compliment_and_a_question_around_it() -> None:
    got = contents("What a lovely garden! Last Sunday I ran a charity 5k for the food bank. Do you run?")
    assert got == ["User ran a charity 5k for the food bank (last Sunday)"]


# dropped subject
@pytest.mark.parametrize(("clause", "restored"), [
    ("Just bought a secondhand kayak", "I just bought a secondhand kayak"),
    ("Been practising the cello every evening", "I've been practising the cello every evening"),
    ("Gonna repaint the kitchen", "I'm going to repaint the kitchen"),
])
def test_dropped_subject_before_a_past_verb_or_a_plan(clause: str, restored: str) -> None:
    assert dropped_subject(clause) == restored


def test_dropped_subject_leaves_moods_and_other_subjects_alone() -> None:
    assert dropped_subject("Excited for the trip") is None
    assert dropped_subject("Was it fun") is None
    assert contents("Excited for the trip!") == []


def test_gerund_subject_is_not_a_dropped_i() -> None:
    # not "User is cooking for friends": the -ing phrase is the subject; the turn is only noted as said
    assert contents("Cooking for friends is such a joy.") == ["User mentioned: Cooking for friends is such a joy"]


# event notes
def test_event_note_is_kept_in_a_sentence_that_names_a_moment() -> None:
    assert is_event("I finished my first pottery wheel class")
    assert not is_event("I need a quick lunch idea")
    assert contents("This morning I swam two kilometres in the lake.") == [
        "User swam two kilometres in the lake (this morning)"]
    assert contents("I need a quick lunch idea for today.") == []


# values
@pytest.mark.parametrize(("text", "note"), [
    ("Learning languages is really important to me.", "User values learning languages"),
    ("My grandmother's recipes mean so much to me.", "User values their grandmother's recipes"),
    ("This old camera is special to me.", "User values the old camera"),
    ("Gardening brings me so much peace.", "User finds peace in gardening"),
])
def test_values(text: str, note: str) -> None:
    assert notes(text) == [(T.USER_PREFERENCE, note)]


def test_a_bare_pronoun_is_not_a_value() -> None:
    assert notes("That is so special to me!") == []
    assert notes("Your kind note means a lot to me.") == []


def test_chinese_values_need_the_speaker() -> None:
    assert notes("对我来说，按时睡觉是最重要的。") == [(T.USER_PREFERENCE, "用户看重按时睡觉")]
    assert notes("运动对我很重要。") == [(T.USER_PREFERENCE, "用户看重运动")]
    assert notes("这个很重要。") == []


# motives
def test_motive_whatever_the_subject() -> None:
    assert notes("The documentary inspired me to cut down on plastic.") == [
        (T.USER_GOAL, "User is motivated to cut down on plastic")]
    assert notes("It made me even more determined to finish my degree.") == [
        (T.USER_GOAL, "User is motivated to finish their degree")]


# experience through the object
def test_experience_through_the_object_is_noted_for_the_user() -> None:
    assert notes("Swimming has helped me a lot with my asthma.") == [
        (T.USER_FACT, "User's experience: swimming has helped them a lot with their asthma")]


def test_experience_with_an_empty_it_is_dropped() -> None:
    assert notes("It made me happy.") == []


# shared photos, presentatives and attachments
def test_shared_photo_and_presentative() -> None:
    assert contents("Here's a pic of my nephew at his graduation!") == [
        "User shared a photo of their nephew at his graduation"]
    assert contents("Check out my quilt for the county fair! Hope you like it.") == [
        "User shared their quilt for the county fair"]
    assert contents("Here's one I knitted last winter.") == ["User shared something they knitted last winter"]


def test_attachment_tag_is_a_shared_photo() -> None:
    text, drafts = attachments("Look! [image: a photo of a heron on a wooden fence]")
    assert text == "Look!"
    assert [d.content for d in drafts] == ["User shared a photo of a heron on a wooden fence"]
    assert contents("Ha, look at this. [image: a photo of a cat in a laundry basket]") == [
        "User shared a photo of a cat in a laundry basket"]


# embedded first-person clauses
def test_embedded_first_person_relative_and_liking() -> None:
    assert contents("The best part was the food market I visited on Saturday.") == [
        "User visited the food market on Saturday"]
    assert notes("It reminds me why I love teaching.") == [(T.USER_PREFERENCE, "User loves teaching")]


def test_you_in_a_relative_clause_keeps_an_event() -> None:
    assert contents("I finally read the novel you lent me last spring.") == [
        "User finally read the novel you lent them last spring"]
    assert contents("I'm so proud of you for doing that.") == []


# phatic clauses and task turns
@pytest.mark.parametrize("text", [
    "Thanks so much for telling me about it!",
    "Sounds amazing, Omar! Have a great trip!",
    "Glad you liked the cake! Take care.",
    "Congrats on the new job! You deserve it.",
    "Wow, that's beautiful! Where was it taken?",
])
def test_phatic_turns_give_nothing(text: str) -> None:
    assert notes(text) == []


def test_phatic_detector() -> None:
    assert is_phatic("Thanks for sharing that with me")
    assert not is_phatic("I went to a jazz night")


def test_task_turn_side_events_are_context() -> None:
    assert is_task("Can you help me plan a birthday party")
    assert is_task("What's a good way to learn chess")
    assert not is_task("Can you believe it")
    got = contents("Yesterday I repainted the fence. Can you help me pick a color for the shed? I'm trying to "
                   "finish it by June.")
    assert not any("fence" in c for c in got)
    assert any("finish" in c for c in got)
