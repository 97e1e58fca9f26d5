"""A class's student sends through Streamlit's protocol, as a browser tab does (AppTest reruns a whole page on every
click, so it cannot tell a fragment's rerun from the page's): "Send my answer" and "Send my sentence" rerun only
their box, store first, then say it is in; the answer box's rerun keeps the answer in the tab for a reload (the
lesson panel, which does that on a page's run, is not drawn again). One server, its rooms in a SQLite file."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from bertlens.curriculum import LESSONS
from bertlens.rooms import LIMITS, RoomStore
from components.services.rooms import SQLITE_PREFIX, open_store
from components.state.answers import ANSWERS_COOKIE, cookie_value, guess_key, question_key
from tests.live_server import streamlit_server

pytest.importorskip("websockets")
from scripts.streamlit_client import CLICK, Run, Session, element_body, run_to_end  # noqa: E402

TIMEOUT = 120
ASK = question_key("discover", 1)  # step 2: "What will BERT put in place of [MASK]?", one typed word
ROUND_INDEX = next(i for i, step in enumerate(LESSONS["senses"].steps) if step.class_sentences)
ROUND = question_key("senses", ROUND_INDEX)


@pytest.fixture(scope="module")
def server(tiny_pretraining_dir, tmp_path_factory) -> Iterator[tuple[str, RoomStore]]:
    """A server's URL and the store its rooms are in."""
    folder = tmp_path_factory.mktemp("class-fragments")
    url = f"{SQLITE_PREFIX}{folder / 'rooms.sqlite3'}"
    store = open_store(url, LIMITS)
    with streamlit_server(tiny_pretraining_dir, folder / "server.log", BERTLENS_CLASS_STORE=url) as address:
        yield address, store


def texts(run: Run) -> str:
    return "\n".join(element_body(e).body for e in run.elements if e.WhichOneof("type") in ("markdown", "alert"))


def widget_ids(run: Run) -> set[str]:
    return {widget_id for widget_id in (getattr(element_body(e), "id", "") for e in run.elements) if widget_id}


def join_and_send(address: str, code: str, box_key: str, text: str) -> tuple[Run, Run, str]:
    """A student joins by ``/?room=CODE`` (the room takes them to its step), types ``text`` in the box keyed
    ``box_key`` and sends it: the page's run, the send's run and the student's seat. Then the student looks at
    another page: the protocol client knows the fragment of the widgets a page shows, and of no other."""

    async def tab() -> tuple[Run, Run, str]:
        async with Session.connect(address, "", f"room={code}") as session:
            page = await session.run(timeout=TIMEOUT)
            assert set(session.fragment_of) == widget_ids(page)
            box = page.widget(box_key)
            (send,) = (b for b in page.drawn("button") if b.label.startswith("Send my"))
            sent = await session.run({box.id: text, send.id: CLICK}, timeout=TIMEOUT)
            assert set(session.fragment_of) == widget_ids(page) and session.fragment_of[send.id]  # its box's fragment
            seat = session.query_string.split("seat=")[1].split("&")[0]
            away = await session.open("tokenizer", f"room={code}&seat={seat}", timeout=TIMEOUT)
            assert not away.exceptions and set(session.fragment_of) == widget_ids(away)
            assert send.id not in session.fragment_of  # a click on it would wait for a fragment no more drawn
            return page, sent, seat

    return run_to_end(tab())


def test_an_answer_reruns_only_its_box_is_stored_first_and_kept_for_a_reload(server):
    address, store = server
    room, _ = store.open_room("discover", 2, time.time())
    page, sent, seat = join_and_send(address, room.code, guess_key(ASK), "cat")
    assert not page.exceptions and f"Live class **{room.code}**" in texts(page)
    assert not sent.exceptions and "Your answer is in" in texts(sent)
    assert store.answer_of(room.code, seat, ASK, time.time()) == "cat"
    assert f"Live class **{room.code}**" not in texts(sent) and not sent.charts()  # the box's run, not the page's
    handovers = [h.body for h in sent.drawn("html") if ANSWERS_COOKIE in h.body]  # the tab keeps it for a reload
    assert len(handovers) == 1 and json.dumps(cookie_value({"discover:1": "cat"})) in handovers[0]


def test_a_sentence_reruns_only_its_box_and_is_stored_first(server):
    address, store = server
    room, _ = store.open_room("senses", ROUND_INDEX + 1, time.time())
    page, sent, seat = join_and_send(address, room.code, f"{ROUND}_sentence", "I ate a green apple.")
    assert not page.exceptions and page.charts()  # the round's page: the class's map and the page's
    assert not sent.exceptions and "Your sentence is in" in texts(sent)
    assert store.sentence_of(room.code, seat, ROUND, time.time()) == "I ate a green apple."
    assert not sent.charts() and f"Live class **{room.code}**" not in texts(sent)  # the box's run, not the page's
