"""The memory section names each memory type once, above its memories, in recall order."""

from __future__ import annotations

from datetime import datetime, timezone

from engram.recall.context import RecalledItem, render_memory_section

DAY = datetime(2023, 5, 8, tzinfo=timezone.utc)


def _memory(item_id: str, text: str, memory_type: str) -> RecalledItem:
    return RecalledItem("memory", item_id, text, 0.5, 5, (item_id,), DAY, details={"type": memory_type}, event_time=DAY)


def test_long_term_lines_are_grouped_under_their_type_once() -> None:
    items = [RecalledItem("profile", "p", "User's name is Mel", 1.0, 5, details={"type": "user_profile"}),
             _memory("a", "User likes jazz", "user_preference"), _memory("b", "User went to Berlin", "user_fact"),
             _memory("c", "User likes sushi", "user_preference")]
    section = render_memory_section(items, "What do I like?")
    long_term = section.split("## Long-term memory\n", 1)[1].splitlines()
    assert long_term == ["[user_profile]", "- User's name is Mel",
                         "[user_preference]", "- User likes jazz (2023-05-08)", "- User likes sushi (2023-05-08)",
                         "[user_fact]", "- User went to Berlin (2023-05-08)"]
    assert section.count("[user_preference]") == 1


def test_an_item_without_a_type_has_no_heading() -> None:
    item = RecalledItem("memory", "x", "User likes tea", 0.5, 4, event_time=DAY)
    assert render_memory_section([item], "tea?").endswith("## Long-term memory\n- User likes tea (2023-05-08)")
