from __future__ import annotations

import hashlib
import hmac

import pytest

from engram.core.pii import (
    PLACEHOLDERS,
    contains_pii,
    find_pii,
    id_card_valid,
    luhn_valid,
    redact,
)

VALID_ID = "11010519491231002X"  # the GB 11643 specimen number
VALID_CARD = "4111111111111111"  # a standard Luhn-valid test card


def rules(text: str) -> list[str]:
    return [hit.rule for hit in redact(text).hits]


def test_mainland_mobile_is_replaced_and_never_bare_hashed() -> None:
    result = redact("我的电话是13800138000，以后有事打给我")
    assert result.text == "我的电话是[PHONE]，以后有事打给我"
    assert "13800138000" not in result.text
    (hit,) = result.hits
    assert hit.rule == "pii.phone"
    assert hit.digest == ""  # no key, no digest: a bare hash of a phone number is the phone number
    assert (hit.start, hit.end) == (5, 16)


def test_audit_digest_is_keyed_per_tenant() -> None:
    a = redact("call 13800138000", key=b"tenant-a-secret").hits[0].digest
    b = redact("call 13800138000", key=b"tenant-b-secret").hits[0].digest
    assert a == hmac.new(b"tenant-a-secret", b"13800138000", hashlib.sha256).hexdigest()
    assert a != b and a != hashlib.sha256(b"13800138000").hexdigest()


def test_mobile_inside_a_longer_digit_run_is_not_a_phone() -> None:
    assert "pii.phone" not in rules("order no. 9913800138000123")
    assert "pii.phone" not in rules("no 213800138000")


@pytest.mark.parametrize(
    "text",
    ["call +86 138 0013 8000", "+8613800138000", "138-0013-8000", "tel +1 (555) 123-4567",
     "office 010-12345678", "US 415-555-2671", "+44 20 7946 0958"],
)
def test_other_phone_formats_are_redacted(text: str) -> None:
    assert rules(text) == ["pii.phone"]


def test_short_numbers_years_and_prices_are_left_alone() -> None:
    for text in ["in 2024 I paid 300 yuan", "3个月内跳槽，晚上8点后", "version 1.2.3", "+15 points"]:
        assert redact(text).hits == ()


def test_id_card_checksum_positive_and_negative() -> None:
    assert id_card_valid(VALID_ID)
    assert id_card_valid(VALID_ID.lower())
    assert not id_card_valid("110105194912310021")  # wrong check digit
    assert not id_card_valid("110105194913310028")  # month 13
    assert rules(f"身份证号{VALID_ID}") == ["pii.id_card"]
    assert redact(f"身份证号{VALID_ID}").text == "身份证号[ID_CARD]"
    assert "pii.id_card" not in rules("编号110105194912310021")


def test_luhn_positive_and_negative() -> None:
    assert luhn_valid(VALID_CARD)
    assert luhn_valid("6222020000000000125")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("41111111x1111111")


def test_bank_cards_need_luhn_and_may_be_grouped() -> None:
    assert rules(f"card {VALID_CARD}") == ["pii.bank_card"]
    assert rules("卡号 6222 0200 0000 0000 125") == ["pii.bank_card"]
    assert rules("card 4111-1111-1111-1111 exp") == ["pii.bank_card"]
    assert rules("tracking 4111111111111112") == []


def test_card_followed_by_an_unrelated_number_is_still_found() -> None:
    assert redact("我4111111111111111 0").text == "我[BANK_CARD] 0"
    assert redact("card 4111 1111 1111 1111 2024 x").text == "card [BANK_CARD] 2024 x"


def test_secrets_glued_together_are_all_found() -> None:
    assert redact(f"我{VALID_ID}13800138000:{VALID_ID}").text == "我[ID_CARD][PHONE]:[ID_CARD]"
    assert redact("0sk-abcdefghijklmnop1234").text == "0[API_KEY]"


def test_email_password_and_keys() -> None:
    assert redact("mail me at a.b+c@example.co.uk").text == "mail me at [EMAIL]"
    assert redact("我的密码是hunter2，别告诉别人").text == "我的密码是[PASSWORD]，别告诉别人"
    assert redact("password: S3cret!!").text == "password: [PASSWORD]"
    assert redact("pwd=abc123 ok").text == "pwd=[PASSWORD] ok"
    assert redact("key sk-abcdefghijklmnop1234").text == "key [API_KEY]"
    assert redact("ghp_abcdefghijklmnopqrstuvwxyz1234").text == "[API_KEY]"
    assert redact("AKIAIOSFODNN7EXAMPLE").text == "[API_KEY]"
    assert redact("xoxb-1234567890-abcdef").text == "[API_KEY]"
    assert redact("my api key is AbCdEf1234567890XyZ").text == "my api key is [API_KEY]"
    assert redact("密钥：Zx9Yw8Vu7Ts6Rq5Po4").text == "密钥：[API_KEY]"


def test_keys_and_phones_right_after_chinese_text_are_found() -> None:
    result = redact("我的密钥sk-abcdefghijklmnop1234，电话+86 13800138000")
    assert result.text == "我的密钥[API_KEY]，电话[PHONE]"


def test_words_that_merely_contain_key_or_token_are_not_secrets() -> None:
    for text in ["the tokenizer_config_file_v2_large", "monkey business", "a passionate keyboard player",
                 "task-abcdefghijklmnop1234"]:
        assert redact(text).hits == ()


def test_several_hits_are_replaced_in_order_without_overlap() -> None:
    text = f"phone 13800138000, mail x@y.com, id {VALID_ID}"
    result = redact(text)
    assert [h.rule for h in result.hits] == ["pii.phone", "pii.email", "pii.id_card"]
    assert result.text == "phone [PHONE], mail [EMAIL], id [ID_CARD]"
    for hit in result.hits:
        assert hit.digest == ""


def test_clean_text_is_returned_unchanged_and_placeholders_are_known() -> None:
    text = "我喜欢Java编程"
    result = redact(text)
    assert result.text is text and not result.changed
    assert not contains_pii(text) and find_pii(text) == []
    assert set(PLACEHOLDERS) == {
        "pii.phone", "pii.id_card", "pii.bank_card", "pii.email", "pii.password", "pii.api_key",
        "pii.account", "pii.private_key",
    }
