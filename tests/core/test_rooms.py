"""A live class's room, its pure parts (``bertlens.rooms``): codes, secrets, student ids, typed text, the tally."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

import bertlens.rooms
from bertlens.curriculum import LESSONS
from bertlens.rooms import (
    CODE_ALPHABET,
    CODE_LENGTH,
    LIMITS,
    STUDENT_ID_CHARS,
    RoomClosed,
    RoomError,
    RoomLimits,
    Tally,
    answer_form,
    clean_text,
    client_address,
    client_key,
    new_code,
    new_secret,
    new_student_id,
    normalise_code,
    secret_digest,
    secret_matches,
    storable,
    tally,
    valid_student_id,
)


def test_codes_use_no_character_that_reads_as_another():
    assert not set("01OIL") & set(CODE_ALPHABET)
    assert len(set(CODE_ALPHABET)) == len(CODE_ALPHABET) == 31
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in codes)


@pytest.mark.parametrize(
    "raw, code",
    [
        ("AB3K7Q", "AB3K7Q"),
        ("ab3k7q", "AB3K7Q"),
        ("ab3-k7q", "AB3K7Q"),
        (" AB3 K7Q ", "AB3K7Q"),
        ("AB3K7", None),  # too short
        ("AB3K7QR", None),  # too long
        ("AB0K7Q", None),  # 0 is no code character
        ("ABOK7Q", None),  # nor O
        ("AB1K7Q", None),
        ("ABIK7Q", None),
        ("ABLK7Q", None),
        ("AB_K7Q", None),
        ("'); DR", None),
        ("", None),
        (None, None),
    ],
)
def test_normalise_code(raw, code):
    assert normalise_code(raw) == code


def test_a_secret_is_random_and_kept_only_as_its_digest():
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50 and all(len(s) >= 43 for s in secrets)  # 32 bytes, URL-safe base64
    secret = secrets.pop()
    assert secret_digest(secret) == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in secret_digest(secret)


def test_secret_matches_only_the_secret_itself():
    secret = new_secret()
    digest = secret_digest(secret)
    assert secret_matches(secret, digest)
    for other in (None, "", secret[:-1], secret + "x", secret.upper(), digest, new_secret()):
        assert not secret_matches(other, digest)


def test_secret_matches_compares_in_constant_time(monkeypatch):
    compared, real = [], hmac.compare_digest

    def compare_digest(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(bertlens.rooms.hmac, "compare_digest", compare_digest)
    secret = new_secret()
    assert secret_matches(secret, secret_digest(secret)) and not secret_matches("guess", secret_digest(secret))
    assert compared == [(secret_digest(secret), secret_digest(secret)), (secret_digest("guess"), secret_digest(secret))]


def test_student_ids():
    ids = {new_student_id() for _ in range(50)}
    assert len(ids) == 50 and all(valid_student_id(i) for i in ids)
    for bad in (None, "", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg"):
        assert not valid_student_id(bad)
    assert STUDENT_ID_CHARS == 16


def test_clean_text_keeps_one_normalised_line():
    assert clean_text("  the\n  river\tbank ", 40, "a sentence") == "the river bank"
    assert clean_text("cafe\u0301", 40, "a word") == "caf\u00e9"  # NFC: one character
    assert clean_text("😀 日本語 👩\u200d💻", 40, "a word") == "😀 日本語 👩\u200d💻"  # the joiner is kept
    assert clean_text("x" * 40, 40, "a word") == "x" * 40


@pytest.mark.parametrize(
    "raw, message",
    [
        ("   ", "Type a word first."),
        ("x" * 41, "A word can be at most 40 characters long (this one has 41)."),
        ("a\x00b", "A word cannot hold control characters."),
        ("\ud800", "A word cannot hold control characters."),
    ],
)
def test_clean_text_refuses(raw, message):
    with pytest.raises(RoomError, match=f"^{re.escape(message)}$"):
        clean_text(raw, 40, "a word")


def test_storable():
    assert storable("naïve 😀 \u200d") and storable("")
    assert not storable("\x00") and not storable("\x1b[31m") and not storable("\udfff")


def test_answer_form_counts_a_choice_exactly_and_a_typed_word_lower_cased():
    choices = ("middle third", "late (last third)")
    assert answer_form("late (last third)", choices, 40) == "late (last third)"
    with pytest.raises(RoomError, match="not one of this question's choices"):
        answer_form("Late (last third)", choices, 40)
    assert answer_form("  Paris ", (), 40) == "paris"


def test_every_questions_choice_fits_what_the_store_keeps_of_an_answer():
    choices = [
        choice
        for lesson in LESSONS.values()
        for step in lesson.steps
        if step.question is not None
        for choice in getattr(step.question, "choices", ())
    ]
    assert choices and max(map(len, choices)) <= LIMITS.max_answer_chars
    assert all(clean_text(choice, LIMITS.max_answer_chars, "an answer") == choice for choice in choices)


def test_tally_counts_most_first_then_in_code_point_order():
    assert tally(["b", "a", "b", "a", "c", "B"]) == Tally(6, (("a", 2), ("b", 2), ("B", 1), ("c", 1)))
    assert tally([]) == Tally(0, ())


def test_room_closed_names_the_rooms_time():
    assert "over 24 hours old" in str(RoomClosed("AB3K7Q"))
    assert "over 1.5 hours old" in str(RoomClosed("AB3K7Q", RoomLimits(room_hours=1.5).room_hours))
    assert RoomLimits(room_hours=2).room_seconds == 7200


# A client's address, for the store's per-address limits.


def test_a_client_address_is_the_connections_unless_a_trusted_proxy_names_it():
    forwarded = ["198.51.100.1, 203.0.113.7", "192.0.2.5"]  # a client's own header first, the proxy's last
    assert client_address("192.0.2.9", forwarded, trust_forwarded_for=False) == "192.0.2.9"  # a client writes any
    assert client_address(None, forwarded, trust_forwarded_for=True) == "192.0.2.5"  # the one the proxy saw
    assert client_address(None, ["198.51.100.1, 203.0.113.7"], trust_forwarded_for=True) == "203.0.113.7"
    assert client_address("192.0.2.9", [" , "], trust_forwarded_for=True) is None
    assert client_address(None, [], trust_forwarded_for=False) is None  # a local connection


def test_a_client_key_is_a_digest_of_an_ipv4_address_or_an_ipv6_network():
    key = client_key("203.0.113.7")
    assert key is not None and re.fullmatch(r"[0-9a-f]{64}", key) and "203" not in key
    assert client_key(" 203.0.113.7 ") == key == client_key("::ffff:203.0.113.7")  # an IPv4-mapped address too
    assert client_key("203.0.113.8") != key
    home = client_key("2001:db8:1:2::1")
    assert client_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == home != client_key("2001:db8:1:3::1")  # one /64
    assert client_key(None) is None and client_key("") is None and client_key("not an address") is None
