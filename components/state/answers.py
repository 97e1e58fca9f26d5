"""Lesson answers kept through a reload of the tab, so a reload does not ask the student again.

A page reloads when its connection comes back (``components.ui.reconnect``: a network blip, a replica lost behind
the balancer) and when the student reloads it; either opens a new session, and the answers to the lesson's
questions lived only in the old one. A tiny script keeps them in the tab's own storage (``sessionStorage``:
it survives a reload, and a new tab or a class link opened again starts afresh, so "predict first" is not given
away to the next class on the projector). When the page goes (``pagehide``), the script hands them to the next
page in a cookie that lives ``HANDOVER_SECONDS`` (``ANSWERS_COOKIE``, at most ``MAX_ANSWERS_CHARS`` characters);
the new session reads it when it starts, and its page removes it. A browser does not say whether a page goes
for a reload or for good, so a tab of the same browser opened within those seconds of closing one gets its
answers. The cookie never travels in a link. What it holds is read strictly: only this curriculum's questions,
each answer one of the question's choices or a word as long as the answer box takes.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol
from urllib.parse import quote, unquote

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from bertlens.curriculum import LESSONS

ANSWERS_COOKIE = "bertlens_answers"
MAX_ANSWERS_CHARS = 3000  # the cookie's value, quoted (browsers keep 4 KB a cookie)
MAX_ANSWER_CHARS = 40  # the answer box's max_chars
RESTORED = "_lesson_answers_restored"  # session flag: the cookie has been read
HANDOVER_SECONDS = 30  # the cookie's life: from a page's pagehide to the reloaded page's first run
HANDOVER_SCRIPT = """<script>
(() => {
  sessionStorage.setItem("COOKIE", VALUE);
  if (window.bertlensAnswers) return;  // once per page load
  window.bertlensAnswers = true;
  document.cookie = "COOKIE=; max-age=0; path=/; SameSite=Lax";  // handed over: this page's session has them
  window.addEventListener("pagehide", () => {
    const value = sessionStorage.getItem("COOKIE");
    if (value) document.cookie = `COOKIE=${value}; max-age=SECONDS; path=/; SameSite=Lax`;
  });
})();
</script>""".replace("COOKIE", ANSWERS_COOKIE).replace("SECONDS", str(HANDOVER_SECONDS))


class SessionState(Protocol):  # st.session_state, or a dict in tests
    def get(self, key: str, /) -> Any: ...

    def __setitem__(self, key: str, value: Any, /) -> None: ...


Kept = dict[str, str | None]  # "lesson:step index" -> the answer, or None for a question skipped unanswered


def question_key(lesson: str, index: int) -> str:
    """The session-state prefix of a step's question (its widgets' keys, ``answer_key``, ``skipped_key``)."""
    return f"_lesson_{lesson}_{index}"


def answer_key(question: str) -> str:
    """Where the session keeps the answer checked for ``question`` (a ``question_key``)."""
    return f"{question}_answer"


def guess_key(question: str) -> str:
    """The key of ``question``'s answer box (a radio or a text box): what the student chose or typed, not yet taken."""
    return f"{question}_guess"


def skipped_key(question: str) -> str:
    """Where the session keeps that the student opened ``question``'s page without answering."""
    return f"{question}_skipped"


_ASKED = [(lesson.key, index, step.question) for lesson in LESSONS.values() for index, step in enumerate(lesson.steps)]
# Every question of the curriculum, by "lesson:step index": its session-state prefix, and its choices (none: a word)
QUESTIONS = {f"{lesson}:{index}": question_key(lesson, index) for lesson, index, question in _ASKED if question}
CHOICES = {f"{lesson}:{index}": question.choices for lesson, index, question in _ASKED if question}


def kept_answers(state: SessionState) -> Kept:
    """The answers and skips this session holds, in the curriculum's order."""
    kept: Kept = {}
    for name, prefix in QUESTIONS.items():
        if isinstance(answer := state.get(answer_key(prefix)), str) and answer:
            kept[name] = answer
        elif state.get(skipped_key(prefix)):
            kept[name] = None
    return kept


def cookie_value(kept: Kept) -> str:
    """``kept`` as the cookie's value (quoted JSON); the earliest questions are left out when it would not fit."""
    names = list(kept)
    while True:
        value = quote(json.dumps({name: kept[name] for name in names}, separators=(",", ":")), safe="")
        if len(value) <= MAX_ANSWERS_CHARS or not names:
            return value
        names.pop(0)


def read_cookie(value: object) -> Kept:
    """The answers a cookie holds; nothing from a value that is not one this module wrote (never an error)."""
    if not isinstance(value, str) or not value or len(value) > MAX_ANSWERS_CHARS:
        return {}
    try:
        found = json.loads(unquote(value))
    except Exception as error:  # any parse error (RecursionError: "[" nested 2,000 deep) is a bad cookie
        logging.getLogger("bertlens").warning(
            "Ignored an unreadable %s cookie (%s).", ANSWERS_COOKIE, type(error).__name__
        )
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: answer for name, answer in found.items() if name in QUESTIONS and _could_answer(name, answer)}


def _could_answer(name: str, answer: object) -> bool:
    """None (skipped), one of the question's choices, or a word as long as the answer box takes."""
    if answer is None:
        return True
    if not isinstance(answer, str):
        return False
    return answer in CHOICES[name] if CHOICES[name] else 0 < len(answer) <= MAX_ANSWER_CHARS


def restore(state: SessionState, kept: Kept) -> None:
    """Put kept answers and skips into a session that has none of its own for those questions."""
    for name, answer in kept.items():
        prefix = QUESTIONS[name]
        if state.get(answer_key(prefix)) or state.get(skipped_key(prefix)):
            continue
        if answer is None:
            state[skipped_key(prefix)] = True
        else:
            state[answer_key(prefix)] = answer


def restore_answers() -> None:
    """Once a session, before its questions are drawn: the answers the browser kept (from the session before a
    reload)."""
    if not st.session_state.get(RESTORED):
        st.session_state[RESTORED] = True
        restore(st.session_state, read_cookie(st.context.cookies.get(ANSWERS_COOKIE)))


def keep_answers(where: DeltaGenerator | None = None) -> None:
    """After the questions are drawn (an answer is taken while its form is drawn): keep the session's answers in
    the tab. An invisible script at the sidebar's end (in the page it would add a gap), drawn on every run so
    that Streamlit does not remove it before its code has loaded; the browser runs it again when they change.
    ``where``: a placeholder in the sidebar instead (a fragment's, which writes outside itself only there)."""
    if kept := kept_answers(st.session_state):
        value = json.dumps(cookie_value(kept))  # the student's text comes last: nothing in it is replaced
        (where or st.sidebar).html(HANDOVER_SCRIPT.replace("VALUE", value), unsafe_allow_javascript=True)
