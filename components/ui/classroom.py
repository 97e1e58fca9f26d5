"""A live class's parts on the page: start and join, the join view for the projector, the class bar, the live count
of answers and the class's answers beside the model's (what follows the teacher's step: ``components.ui.lessons``).

Every read and write goes to the store (``components.services.classroom``), never to one process's memory: a
student sent to another replica finds the room, the step and their answer there.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from urllib.parse import urlencode

import plotly.graph_objects as go
import streamlit as st

from bertlens.class_link import data_uri, qr_svg
from bertlens.lessons import Question, Reveal
from bertlens.rooms import LIMITS, Room, RoomError, Tally
from bertlens.wording import percent
from components.services.classroom import room_store
from components.services.text import literal
from components.state.classroom import HOST_COOKIE, ROOM, Membership, host_of, this_client
from components.ui.class_link import app_url
from components.ui.exports import chart
from components.ui.palette import PALETTE

JOIN_LABEL = "QR code of the live class's join link"
SHOW_JOIN = "_class_show_join"  # the run after a click opens the join view
GUESSES = "_class_join_guesses"  # this tab's codes that opened no room: times
OPENED_ROOMS = "_class_opened"  # when this tab opened its rooms
WATCH_SECONDS = 2.0  # a student's page looks for the teacher's step and reveal this often
COUNT_SECONDS = 1.0  # the teacher's count of answers: one aggregate query this often
TOP_WORDS = 8  # the class's typed words drawn; the rest counted as "other words"
JOIN_CSS = """<style>
.bl-join { display: flex; gap: 2rem; align-items: center; flex-wrap: wrap; }
.bl-join img { width: min(100%, calc(100dvh - 12rem)); min-width: 12rem; aspect-ratio: 1; shape-rendering: crispEdges; }
.bl-join .bl-code { font: 700 4rem/1.1 ui-monospace, monospace; letter-spacing: 0.3em; color: #111; }
.bl-join .bl-link { font-size: 1.3rem; overflow-wrap: anywhere; }
</style>"""


def start_class(lesson: str, step: int) -> bool:
    """Open a room at ``lesson``'s ``step`` with this tab as its host (the join view opens on the next run); False,
    said, when the tab has opened ``LIMITS.rooms_per_tab_hour`` rooms this hour or the store refuses (its address
    has opened ``LIMITS.rooms_per_client_hour``, or the store holds its most open rooms)."""
    now = time.time()
    opened = [at for at in st.session_state.get(OPENED_ROOMS, []) if now - at < 3600]
    try:
        if len(opened) >= LIMITS.rooms_per_tab_hour:
            raise RoomError(f"A tab can open at most {LIMITS.rooms_per_tab_hour} live classes an hour.")
        room, secret = room_store().open_room(lesson, step, now, this_client())
    except RoomError as error:
        st.warning(literal(str(error)), icon=":material/group_off:")
        return False
    st.session_state[OPENED_ROOMS] = [*opened, now]
    host_of(room.code, secret)
    st.session_state[SHOW_JOIN] = True
    return True


def join_box() -> str | None:
    """The home page's code box: the code of an open room, once typed and sent; None otherwise. Codes that open
    no room are counted: past ``LIMITS.join_guesses_per_minute`` a minute, this tab waits; past
    ``LIMITS.wrong_codes_per_client`` in ``LIMITS.wrong_codes_minutes`` minutes, every tab of its address does (the
    store counts those, whatever the session)."""
    with st.form("class_join", border=False), st.container(horizontal=True, vertical_alignment="bottom"):
        typed = st.text_input("Room code", max_chars=12, placeholder="e.g. K7Q-3XB", key="class_code")
        sent = st.form_submit_button("Join the class", icon=":material/login:")
    if not sent:
        return None
    now = time.time()
    guesses = [at for at in st.session_state.get(GUESSES, []) if now - at < 60]
    if len(guesses) >= LIMITS.join_guesses_per_minute:
        st.warning(
            f"Too many codes that open no room from this tab: at most {LIMITS.join_guesses_per_minute} a minute. Wait a "
            "minute, and check the code on the projector.",
            icon=":material/timer:",
        )
        return None
    try:
        room = room_store().find_room(typed, this_client(), now)
    except RoomError as error:
        st.session_state[GUESSES] = [*guesses, now]
        st.warning(literal(str(error)), icon=":material/group_off:")
        return None
    return room.code


def join_url(code: str) -> str:
    """The link students open: the app's home with the room's code (the room then takes them to its step)."""
    return f"{app_url()}/?{urlencode({ROOM: code})}"


def show_join_view(member: Membership) -> None:
    if st.session_state.pop(SHOW_JOIN, False):
        join_view(member.code, join_url(member.code))


@st.dialog("Join the live class", width="large", icon=":material/groups:")
def join_view(code: str, url: str) -> None:
    """For the projector: the join link's QR code, the code in large type (read aloud, typed on the home page) and
    the link."""
    svg = qr_svg(url, JOIN_LABEL)
    image = f'<img alt="{html.escape(JOIN_LABEL)}" src="{data_uri(svg)}">' if svg else ""
    spaced = f"{code[:3]} {code[3:]}"
    st.html(
        f'{JOIN_CSS}<div class="bl-join">{image}<div><p>Scan, or open BERT Lens and type the code:</p>'
        f'<p class="bl-code" aria-label="Room code {" ".join(code)}">{spaced}</p>'
        f'<p class="bl-link">{html.escape(url)}</p></div></div>'
    )


def forget_host_key() -> None:
    """The class ended: this browser's host key goes too (a shared computer's next user is nobody's host)."""
    st.html(
        f'<script>document.cookie = "{HOST_COOKIE}=; max-age=0; path=/; SameSite=Strict";</script>',
        unsafe_allow_javascript=True,
    )


def class_bar(member: Membership, room: Room, away: bool) -> str | None:
    """One line above the page: the room, its students and what this tab can do. The action clicked: "back" (to
    the class's step), "join view", "end" or "leave"; None."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key="class_bar"):
        students = f"{room.students} student" + ("" if room.students == 1 else "s")
        if member.hosting:
            st.markdown(f":material/groups: Live class **{room.code}** · {students} · you lead it")
            if st.button("Join view", icon=":material/qr_code_2:", key="_class_join_view"):
                return "join view"
            if st.button("End the class", key="_class_end", help="Closes the room and deletes its answers"):
                return "end"
        else:
            where = "you are looking around" if away else "following the teacher"
            st.markdown(f":material/groups: Live class **{room.code}** · {where}")
            if away and st.button("Back to the class", key="_class_back", type="primary"):
                return "back"
            if st.button("Leave the class", key="_class_leave"):
                return "leave"
    return None


@st.fragment(run_every=WATCH_SECONDS)
def watch_room(code: str, seen: Room) -> None:
    """A student's page, every ``WATCH_SECONDS``: one read of the room; a new step, a reveal or a closed room runs
    the whole page again (which follows it)."""
    try:
        room = room_store().room(code, time.time())
    except RoomError:
        st.rerun(scope="app")
    if (room.lesson, room.step, room.revealed) != (seen.lesson, seen.step, seen.revealed):
        st.rerun(scope="app")


@st.fragment(run_every=COUNT_SECONDS)
def answer_count(code: str, question: str) -> None:
    """The teacher's count of answers, live: how many, not what (that waits for the reveal). One aggregate query
    and one read of the room a second."""
    now = time.time()
    try:
        answered, students = room_store().tally(code, question, now).answered, room_store().room(code, now).students
    except RoomError as error:
        st.warning(literal(str(error)))
        return
    st.metric("Answers in", f"{answered} of {students}", label_visibility="visible")


def class_answers(tally: Tally, question: Question, reveal: Reveal, yours: str | None) -> None:
    """After the reveal: the class's answers as bars beside the model's answer (a question with choices: a bar per
    choice, the model's marked; a typed word: the class's words, and the model's top guesses with their
    probabilities). ``yours``: the student's answer, "" when they gave none; None for the teacher."""
    if question.choices:
        counts = dict(tally.counts)
        labels = list(question.choices)
        values = [counts.get(choice, 0) for choice in labels]
        models = [bool(reveal.judge(label)) for label in labels]  # the reveal's own comparison
        colours = [PALETTE[1] if model else PALETTE[0] for model in models]
        marks = ["BERT's answer" if model else "" for model in models]
        fig = _bars(labels, values, colours, marks, f"The class's answers ({tally.answered})", "students")
        chart(fig, "class-answers", key="class_answers", words=_count_words(labels, values, reveal.answer))
    else:
        words = [word for word, _ in tally.counts[:TOP_WORDS]]
        values = [count for _, count in tally.counts[:TOP_WORDS]]
        if other := sum(count for _, count in tally.counts[TOP_WORDS:]):
            words, values = [*words, "other words"], [*values, other]
        guessed = {word.lower() for word, _ in reveal.ranking}
        colours = [PALETTE[1] if word in guessed else PALETTE[0] for word in words]
        marks = ["in BERT's top guesses" if word in guessed else "" for word in words]
        left, right = st.columns(2)
        with left:
            fig = _bars(words, values, colours, marks, f"The class's words ({tally.answered})", "students")
            chart(fig, "class-words", key="class_words", words=_count_words(words, values, None))
        with right:
            labels = [word for word, _ in reveal.ranking]
            probabilities = [probability for _, probability in reveal.ranking]
            fig = _bars(
                labels,
                probabilities,
                [PALETTE[1]] * len(labels),
                [percent(p) for p in probabilities],
                "BERT's top guesses",
                "probability",
            )
            chart(
                fig,
                "bert-guesses",
                key="class_model_guesses",
                words=", ".join(f"{w}: {percent(p)}" for w, p in reveal.ranking),
            )
    if yours == "":
        st.caption("You did not answer this one.")


def _bars(
    labels: list[str], values: Sequence[float], colours: list[str], marks: list[str], title: str, unit: str
) -> go.Figure:
    labels = [html.escape(label) for label in labels]  # a student's word is text: plotly draws tags in labels
    fig = go.Figure(
        go.Bar(
            x=values,
            y=labels,
            orientation="h",
            marker_color=colours,
            text=marks,
            textposition="auto",
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=unit,
        yaxis={"autorange": "reversed", "type": "category"},
        height=120 + 36 * len(labels),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


def _count_words(labels: list[str], values: Sequence[float], model: str | None) -> str:
    counts = ", ".join(f"{label}: {value:g}" for label, value in zip(labels, values))
    return counts + (f"; BERT's answer: {model}" if model else "")
