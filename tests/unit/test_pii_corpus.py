"""Redaction holds on a generated corpus of variants: widths, separators, spacing, languages.

Every secret is rendered in every way a person might type it, inside sentences
of both languages, and must be gone from `redact`'s output in all of them
(compared width-folded with separators stripped, so a half-kept number counts).
Ordinary numbers (dates, prices, versions, counts) must survive.
"""

from __future__ import annotations

import itertools
import re

import pytest

from engram.core.pii import fold_width, redact

FULL = {ch: chr(ord(ch) + 0xFEE0) for ch in "0123456789+-.()@:Xx"}


def full_width(text: str) -> str:
    return "".join(FULL.get(ch, ch) for ch in text)


def grouped(digits: str, sizes: tuple[int, ...], sep: str) -> str:
    out, pos = [], 0
    for size in sizes:
        out.append(digits[pos : pos + size])
        pos += size
    if pos < len(digits):
        out.append(digits[pos:])
    return sep.join(out)


SEPARATORS = ("", " ", "-", ".", "  ")
WIDTHS = (str, full_width)

# (label in zh, label in en) -> digits and groupings
NUMBERS = {
    "phone": (("手机号", "电话", "联系方式："), ("my phone number is", "call me on", "mobile:"), "13912345678", (3, 4, 4)),
    "id": (("身份证号", "身份证："), ("my ID number is", "ID:"), "11010519491231002X", (6, 8, 4)),
    "card": (("银行卡号", "卡号"), ("card number", "my card is"), "6222020000000000125", (4, 4, 4, 4)),
    # a 19-digit salary card that fails Luhn: only its label says what it is
    "salary_card": (("工资卡卡号", "卡号是"), ("salary card number:", "card no."), "6217000010012345678", (4, 4, 4, 4)),
    "account": (("账号", "账户是"), ("account number", "acct #"), "0123456789012", (4, 4, 5)),
}
TEMPLATES_ZH = ("我的{label}{value}，记一下", "{label}{value}", "好的，{label} {value} 以后联系")
TEMPLATES_EN = ("Hi, {label} {value}, thanks", "{label} {value}.", "ok so {label}: {value} and that's it")


def _numeric_corpus() -> list[tuple[str, str]]:
    cases = []
    for kind, (zh_labels, en_labels, digits, sizes) in NUMBERS.items():
        for sep, width in itertools.product(SEPARATORS, WIDTHS):
            value = width(grouped(digits, sizes, sep))
            for label in zh_labels:
                cases.extend((kind, t.format(label=label, value=value)) for t in TEMPLATES_ZH)
            for label in en_labels:
                cases.extend((kind, t.format(label=label, value=value)) for t in TEMPLATES_EN)
    return cases


def _plain(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", fold_width(text).lower())


NUMERIC = _numeric_corpus()
DIGITS = {kind: spec[2] for kind, spec in NUMBERS.items()}


@pytest.mark.parametrize("kind,text", NUMERIC, ids=[f"{k}-{i}" for i, (k, _) in enumerate(NUMERIC)])
def test_numbers_in_every_rendering_are_redacted(kind: str, text: str) -> None:
    redacted = redact(text).text
    secret = DIGITS[kind].lower()
    assert secret not in _plain(redacted), redacted
    assert secret[-6:] not in _plain(redacted), redacted  # not even the tail


def test_unlabelled_valid_numbers_are_redacted_in_every_width_and_separator() -> None:
    for digits, sizes in (("13912345678", (3, 4, 4)), ("11010519491231002X", (6, 8, 4)),
                          ("6222020000000000125", (4, 4, 4, 4))):
        for sep, width in itertools.product(("", " ", "-"), WIDTHS):
            text = f"记下 {width(grouped(digits, sizes, sep))} 谢谢"
            assert digits.lower() not in _plain(redact(text).text), text
    for phone in ("139.1234.5678", "139 1234 5678", "+86 139-1234-5678", "１３９１２３４５６７８"):
        assert "12345678" not in _plain(redact(f"打 {phone} 找我").text), phone


PASSWORDS = ("hunter2", "S3cr3t!!", "correct horse battery staple", "p@ss w0rd 42")
PW_LABELS_EN = ("password", "my pw", "the passphrase", "pwd", "passcode", "PIN")
PW_LABELS_ZH = ("密码", "口令", "我的密码")
PW_SEPS = (" is ", ": ", "=", " is: ", "：")
QUOTES = (('"', '"'), ("“", "”"), ("'", "'"), ("", ""))


def _password_corpus() -> list[tuple[str, str]]:
    cases = []
    for pw, label, sep, (q0, q1) in itertools.product(PASSWORDS, PW_LABELS_EN + PW_LABELS_ZH, PW_SEPS, QUOTES):
        multiword = " " in pw
        if multiword and not q0 and "passphrase" not in label:
            continue  # an unquoted multi-word value is only taken whole after "passphrase"
        zh = not label.isascii()
        sep = {" is ": "是", " is: ": "是：", "=": "="}.get(sep, sep) if zh else sep
        text = f"{label}{sep}{q0}{pw}{q1}" + ("，别说出去" if zh else ", don't tell anyone")
        cases.append((pw, text))
    return cases


PW_CORPUS = _password_corpus()


@pytest.mark.parametrize("pw,text", PW_CORPUS, ids=[str(i) for i in range(len(PW_CORPUS))])
def test_passwords_in_every_phrasing_are_redacted_whole(pw: str, text: str) -> None:
    redacted = redact(text).text
    for word in pw.split():
        assert word not in redacted, redacted


EMAILS = ("a.b+c@example.co.uk", "jane.doe (at) example (dot) com", "jane.doe [at] example.com",
          "jane.doe at example dot com", "ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ", "JANE@EXAMPLE.ORG")


@pytest.mark.parametrize("email", EMAILS)
def test_emails_and_their_obfuscations_are_redacted(email: str) -> None:
    for template in ("mail me at {}", "我的邮箱是{}，谢谢", "{}"):
        redacted = redact(template.format(email)).text
        assert "example" not in fold_width(redacted).lower(), redacted


def test_pem_private_keys_are_redacted_whole_even_truncated() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq1w2e3r4t5y6u7i8o9p0"
    for kind in ("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "):
        pem = f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"
        assert redact(f"here is my key:\n{pem}\nthanks").text == "here is my key:\n[PRIVATE_KEY]\nthanks"
        assert "MIIEvQ" not in redact(f"key: -----BEGIN {kind}PRIVATE KEY-----\n{body}").text


ORDINARY = (
    "in 2024 I paid 300 yuan", "3个月内跳槽，晚上8点后", "version 1.2.3", "+15 points",
    "我家有2个孩子，老大10岁", "the meeting is on 2024-05-17 at 10:30", "I ran 10.5 km in 58 minutes",
    "订单金额 1,299.00 元", "room 1203, floor 12", "password reset link sent", "I forgot my password",
    "look at this. Then go", "I work at google.com now", "pinned the issue", "the ping was 35 ms",
    "we shipped 120000 units in Q3", "my card game collection", "phone call tomorrow",
)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_and_numbers_are_left_alone(text: str) -> None:
    assert redact(text).text == text
