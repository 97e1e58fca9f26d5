"""The stack's own floor for a live class: a student's screen at a question with nothing of BERT Lens but its shape.

``python -m scripts.live_class_load --replicas 0 --floor`` runs the same class against this app, then against
BERT Lens, in one invocation: what one Streamlit server and one SQLite file cost before any of the app's own work.
Its shape is the app's at a question (``components.ui.classroom``, ``components.ui.lessons``):

- a student's page: a ``st.fragment(run_every=2 s)`` with one tiny read of the room's row, and the answer box in a
  fragment of its own whose button writes one row (the student's answer) in its callback, then says "Your answer
  is in";
- the teacher's (the host cookie in the handshake, not checked here): a ``st.fragment(run_every=1 s)`` counting the
  question's answers and the room's students, as "Answers in: N of M".

It uses the tables of the live classes' store (``components.services.rooms``: the tool opens the room there, and
checks the answers there afterwards), with a connection per call, as the store has. Started by the tool only, with
``BERTLENS_CLASS_STORE`` (``sqlite:///`` and the file's path) and ``BERTLENS_FLOOR_QUESTION`` (the question's key).
Of BERT Lens it imports only the server's hygiene the app has too (``bertlens.serving``: Nagle's algorithm off, the
objects alive after the first run frozen out of the collector's reach; without them a bare run here cost 0.1–0.2 s);
the app's other modules bring the model's libraries, which a floor has not.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import time
from contextlib import closing
from typing import Any

import streamlit as st

from bertlens.serving import freeze_long_lived_objects, send_small_messages_at_once

STORE = os.environ["BERTLENS_CLASS_STORE"].removeprefix("sqlite:///")
QUESTION = os.environ["BERTLENS_FLOOR_QUESTION"]
# The app's own names and words, which the load tool reads (components.state.classroom, components.ui.lessons):
HOST_COOKIE = "bertlens_host"
GUESS, SEND = f"{QUESTION}_guess", f"{QUESTION}_check"
WATCH_SECONDS, COUNT_SECONDS = 2.0, 1.0  # a student's look at the room; the teacher's count
ANSWERED = "_floor_answered"
SQLITE_BUSY_SECONDS = 10.0


def sql(statement: str, *params: str | int | float) -> list[Any]:
    """One statement, its own transaction, on a connection of its own."""
    with closing(sqlite3.connect(STORE, timeout=SQLITE_BUSY_SECONDS, isolation_level=None)) as connection:
        return connection.execute(statement, params).fetchall()


@st.fragment(run_every=WATCH_SECONDS)
def watch_room(code: str) -> None:
    sql("SELECT lesson, step FROM rooms WHERE code = ?", code)


@st.fragment(run_every=COUNT_SECONDS)
def answer_count(code: str) -> None:
    (answered,) = sql("SELECT count(*) FROM answers WHERE code = ? AND question = ?", code, QUESTION)[0]
    (students,) = sql("SELECT count(*) FROM students WHERE code = ?", code)[0]
    st.metric("Answers in", f"{answered} of {students}")


def store_answer(code: str, seat: str) -> None:
    answer = str(st.session_state.get(GUESS) or "")
    sql(
        "INSERT INTO answers (code, question, student, answer, at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (code, question, student) DO UPDATE SET answer = excluded.answer, at = excluded.at",
        code,
        QUESTION,
        seat,
        answer,
        time.time(),
    )
    st.session_state[ANSWERED] = answer


@st.fragment
def answer_box(code: str, seat: str) -> None:
    with st.form("answer", border=False):
        st.text_input("Your answer (one word)", key=GUESS)
        st.form_submit_button("Send my answer", key=SEND, on_click=store_answer, args=(code, seat))
    if st.session_state.get(ANSWERED):
        st.info("**Your answer is in.**")


@st.cache_resource(show_spinner=False)
def frozen() -> int:
    """Once a process, as the app does after its warm start."""
    return freeze_long_lived_objects()


send_small_messages_at_once()
frozen()
code = st.query_params.get("room", "")
room = sql("SELECT lesson, step FROM rooms WHERE code = ?", code)
if not room:
    st.warning(f"No open room has the code {code}.")
    st.stop()
lesson, step = room[0]
seat = st.session_state.setdefault("_floor_seat", st.query_params.get("seat") or secrets.token_hex(8))
st.query_params.update(room=code, seat=seat, lesson=lesson, step=str(step))  # the app's address at the step
st.markdown(f"Live class **{code}**")
if HOST_COOKIE in st.context.cookies:
    answer_count(code)
else:
    if not st.session_state.get("_floor_joined"):
        sql("INSERT INTO students (code, student, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", code, seat,
            time.time())  # fmt: skip
        st.session_state["_floor_joined"] = True
    watch_room(code)
    answer_box(code, seat)
