"""Lesson answers kept through a reload (components.state.answers): what the page keeps and hands over, what it accepts
back, and a new session (a reload) that finds the old session's answers."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from urllib.parse import unquote

from bertlens.curriculum import LESSONS
from components.state import answers
from components.state.answers import (
    ANSWERS_COOKIE,
    CHOICES,
    HANDOVER_SECONDS,
    MAX_ANSWER_CHARS,
    MAX_ANSWERS_CHARS,
    QUESTIONS,
    cookie_value,
    kept_answers,
    question_key,
    read_cookie,
    restore,
)
from tests.pages.test_lessons_page import DISCOVER, answer_and_check, app, page_waits, shown, step_link

FIRST, SECOND, *_ = QUESTIONS  # "discover:1", ...
COOKIE_SAFE = re.compile(r"^[A-Za-z0-9%._~-]*$")  # no ; , " or space: nothing can end the value or add attributes


def test_every_question_of_the_curriculum_and_nothing_else_can_be_kept():
    expected = {
        f"{lesson.key}:{index}"
        for lesson in LESSONS.values()
        for index, step in enumerate(lesson.steps)
        if step.question is not None
    }
    assert set(QUESTIONS) == expected and FIRST == "discover:1" and QUESTIONS[FIRST] == "_lesson_discover_1"


def test_answers_and_skips_go_through_the_cookie_unchanged():
    state = {
        f"{QUESTIONS[FIRST]}_answer": 'cat"; path=/; Domain=evil ☕',  # quotes, semicolons, non-ASCII: all quoted
        f"{QUESTIONS[SECOND]}_skipped": True,
        "_lesson_nosuch_3_answer": "ignored",
        "text": "not an answer",
    }
    kept = kept_answers(state)
    assert kept == {FIRST: 'cat"; path=/; Domain=evil ☕', SECOND: None}
    value = cookie_value(kept)
    assert COOKIE_SAFE.match(value) and read_cookie(value) == kept


def test_an_answer_wins_over_a_skip_of_the_same_question():
    state = {f"{QUESTIONS[FIRST]}_answer": "dog", f"{QUESTIONS[FIRST]}_skipped": True}
    assert kept_answers(state) == {FIRST: "dog"}


def test_a_value_it_did_not_write_gives_nothing_and_no_error():
    nested = ("[" * 1_100, "[" * 2_999, "%5B" * 1_000)  # deeper than the JSON decoder's recursion limit
    for value in (None, "", "%7B", "not json", "%5B1%2C2%5D", "null", "x" * (MAX_ANSWERS_CHARS + 1), *nested):
        assert read_cookie(value) == {}, value
    mixed = {FIRST: "a" * (MAX_ANSWER_CHARS + 1), "overview:6": "", "discover:3": 3, "nosuch:1": "x", "discover:0": "x"}
    assert read_cookie(cookie_value({**mixed, SECOND: "ok"})) == {SECOND: "ok"}  # an empty answer is no answer


def test_a_choice_question_takes_back_only_one_of_its_choices():
    """A radio's value must be one of its options: a kept answer that is not one (an edited cookie) would break
    the question's radio, so it is not taken."""
    longest = max(CHOICES["overview:4"], key=len)
    assert len(longest) > MAX_ANSWER_CHARS  # a choice may be longer than a typed word
    kept = {"discover:3": "street", "overview:4": longest}
    assert read_cookie(cookie_value({**kept, "discover:4": "paris", "overview:7": "IsNext"})) == kept


def test_every_answer_fits_and_the_earliest_give_way_under_a_smaller_limit(monkeypatch):
    longest = {name: max(CHOICES[name], key=len) if CHOICES[name] else "☕" * MAX_ANSWER_CHARS for name in QUESTIONS}
    value = cookie_value(longest)
    assert len(value) <= MAX_ANSWERS_CHARS and read_cookie(value) == longest  # the curriculum's worst case fits
    monkeypatch.setattr(answers, "MAX_ANSWERS_CHARS", len(value) // 2)
    back = read_cookie(cookie_value(longest))
    assert back and len(back) < len(longest) and list(back) == list(QUESTIONS)[-len(back) :]


def test_restore_fills_only_questions_the_session_has_not_answered_or_skipped():
    third = list(QUESTIONS)[2]
    state = {f"{QUESTIONS[FIRST]}_answer": "mine", f"{QUESTIONS[third]}_skipped": True}
    restore(state, {FIRST: "kept", SECOND: None, third: "dog"})
    assert state == {
        f"{QUESTIONS[FIRST]}_answer": "mine",
        f"{QUESTIONS[SECOND]}_skipped": True,
        f"{QUESTIONS[third]}_skipped": True,  # skipped here: the kept answer does not reveal the page's answer
    }
    state = {}
    restore(state, {third: "dog"})
    assert state == {f"{QUESTIONS[third]}_answer": "dog"}


def kept_in_tab(at) -> str | None:
    """The value the page's script keeps in the tab's storage (and hands over in the cookie), if it draws one."""
    bodies = [e.proto.body for e in at.get("html") if ANSWERS_COOKIE in e.proto.body]
    if not bodies:
        return None
    (body,) = bodies
    assert f"max-age={HANDOVER_SECONDS}; path=/; SameSite=Lax" in body
    found = re.search(rf'sessionStorage.setItem\("{ANSWERS_COOKIE}", ("[^"]*")\);', body)
    assert found, body
    return json.loads(found[1])


def test_a_reload_finds_the_answer_the_session_before_gave(monkeypatch, tiny_pretraining_dir):
    """A reload (the connection back, a replica lost, F5) opens a new session: the question asked again, and the
    page waited again, although the student had answered."""
    at = app(monkeypatch, tiny_pretraining_dir, "fill_mask", **step_link(DISCOVER, 1, 2))
    assert page_waits(at) and kept_in_tab(at) is None  # nothing to keep yet
    answer_and_check(at, question_key("discover", 1))
    value = kept_in_tab(at)
    assert value is not None and json.loads(unquote(value)) == {"discover:1": "paris"}

    monkeypatch.setattr(answers.st, "context", SimpleNamespace(cookies={ANSWERS_COOKIE: value}))
    again = app(monkeypatch, tiny_pretraining_dir, "fill_mask", **step_link(DISCOVER, 1, 2))
    assert not again.exception and not page_waits(again) and "you said “paris”" in shown(again)
    assert again.text_input(key="_lesson_discover_1_guess").value == "paris"
