"""A live class in AppTest: a teacher's session and several students' sessions on one store (a SQLite file, as one
server has; tests/services/test_rooms_store.py runs the store's invariants on PostgreSQL too). Students answer, the
teacher sees how many, reveals, and everyone sees the class's answers beside the model's, each number equal to the
store's count and to the model's own output. In a Word senses round the class's sentences are placed on the map by
the model's vectors and the page's own PCA, and the teacher (only) hides one from every map."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA
from streamlit.testing.v1 import AppTest

import components.ui.classroom
from bertlens.curriculum import LESSONS
from bertlens.rooms import LIMITS, RoomClosed, client_key, new_student_id
from bertlens.sense_presets import PRESETS
from bertlens.senses import at_layer, embed_word
from bertlens.wording import percent
from components.services.rooms import open_store
from components.services.text import literal
from components.state.classroom import MEMBER, Membership
from components.ui.classroom import OPENED_ROOMS
from tests.conftest import APPTEST_TIMEOUT, ROOT, tables
from tests.core.test_mlm import reference_fill_mask
from tests.pages.test_lessons_page import shown, step_link

DISCOVER = LESSONS["discover"]
ASK = "_lesson_discover_1"  # step 2: "What will BERT put in place of [MASK]?" on the fill-mask page
SENTENCE = "The [MASK] chased the mouse."


@pytest.fixture
def rooms(tmp_path, monkeypatch):
    """The store every session of the test shares (through ``BERTLENS_CLASS_STORE``), and the test's own handle on it."""
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    monkeypatch.setenv("BERTLENS_CLASS_STORE", url)
    return open_store(url, LIMITS)


def class_tab(page: str, link: dict[str, str], code: str, secret: str | None, seat: str | None = None) -> AppTest:
    """A tab on ``page`` at the lesson step ``link``, in room ``code``; the teacher's when given the secret."""
    at = AppTest.from_file(str(ROOT / f"pages/{page}.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update({**link, "room": code, **({"seat": seat} if seat else {})})
    if secret is not None:
        at.session_state[MEMBER] = Membership(code, new_student_id(), secret)
    return at.run()


@pytest.fixture
def session(monkeypatch, tiny_pretraining_dir):
    """A tab on the fill-mask page at discover's step 2 (``class_tab``)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(tiny_pretraining_dir))
    return lambda code, secret=None, seat=None: class_tab("fill_mask", step_link(DISCOVER, 1, 2), code, secret, seat)


def send(at: AppTest, word: str) -> AppTest:
    at.text_input(key=f"{ASK}_guess").input(word)
    return at.button(key=f"{ASK}_check").click().run()


def param(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def in_words(at: AppTest) -> list[str]:
    return [c.value.removeprefix("In words — ") for c in at.caption if c.value.startswith("In words — ")]


def test_the_class_answers_the_teacher_counts_reveals_and_all_see_the_class_beside_bert(
    rooms, session, tiny_bundle, masked_lm
):
    room, secret = rooms.open_room("discover", 2, time.time())
    teacher = session(room.code, secret)
    students = [session(room.code) for _ in range(3)]
    assert not teacher.exception and all(not s.exception for s in students)
    assert [(m.label, m.value) for m in teacher.metric] == [("Answers in", "0 of 0")]  # before anyone joined
    assert teacher.run().metric[0].value == "0 of 3"
    for student, word in zip(students, ("Dog", "cat", "dog")):
        send(student, word)
        assert "Your answer is in" in shown(student)  # stored first, then said
        assert not in_words(student) and not student.success and not [t for t in student.text_input if t.key == "text"]
    teacher.run()
    assert teacher.metric[0].value == "3 of 3"  # how many, not what
    assert not in_words(teacher) and not [t for t in teacher.text_input if t.key == "text"]  # the page waits

    teacher.button(key=f"{ASK}_reveal").click().run()
    assert not teacher.exception and rooms.room(room.code, time.time()).revealed == {ASK}
    tally = rooms.tally(room.code, ASK, time.time())
    assert tally.answered == 3 and dict(tally.counts) == {"dog": 2, "cat": 1}  # "Dog" and "dog": one word
    top = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, SENTENCE, 5)[0]
    bert = ", ".join(f"{guess['token_str'].strip()}: {percent(guess['score'])}" for guess in top)
    for at in [teacher, *(s.run() for s in students)]:
        assert not at.exception
        words = in_words(at)
        assert words[0] == literal("dog: 2, cat: 1") and words[1] == literal(
            bert
        )  # the store's count; the MLM head's own top 5
        assert [t for t in at.text_input if t.key == "text"]  # revealed: the page opens
    assert f"“**{top[0]['token_str'].strip()}**”" in shown(teacher)


def test_a_second_answer_replaces_the_first_and_a_reload_keeps_it(rooms, session):
    room, _ = rooms.open_room("discover", 2, time.time())
    student = session(room.code)
    seat = param(student, "seat")
    send(student, "cat")
    time.sleep(LIMITS.answer_seconds)  # a person answering again
    send(student, "bird")
    assert rooms.tally(room.code, ASK, time.time()).counts == (("bird", 1),)  # never two answers of one student
    again = session(room.code, seat=seat)  # a reload (or another replica): a new session, the same seat
    assert "Your answer is in" in shown(again) and again.text_input(key=f"{ASK}_guess").value == "bird"
    assert rooms.room(room.code, time.time()).students == 1
    again.button(key=f"{ASK}_skip").click().run()  # a student may still look at the page before the reveal
    assert not again.exception and [t for t in again.text_input if t.key == "text"]


def test_without_the_host_key_nothing_is_revealed_and_it_says_why(rooms, session):
    room, _ = rooms.open_room("discover", 2, time.time())
    forger = session(room.code, secret="not-the-key")  # a forged host: a session that claims a key
    assert not forger.exception
    forger.button(key=f"{ASK}_reveal").click().run()
    assert "Only the teacher who opened this room" in " ".join(w.value for w in forger.warning)
    assert rooms.room(room.code, time.time()).revealed == frozenset()


def test_students_follow_the_teachers_step_unless_looking_around(rooms, session):
    room, secret = rooms.open_room("discover", 2, time.time())
    following, looking = session(room.code), session(room.code)
    looking.button(key="_lesson_back").click().run()  # the student looks at step 1
    assert param(looking, "step") == "1"
    rooms.steer(room.code, secret, "discover", 3, time.time())  # the teacher's Next
    following.run()
    looking.run()
    assert param(following, "step") == "3"  # moved with the class
    assert param(looking, "step") == "1"  # not pulled away from what they look at
    assert "you are looking around" in shown(looking)
    looking.button(key="_class_back").click().run()
    assert param(looking, "step") == "3"


def test_a_closed_room_says_so_and_leaves_the_class(rooms, session):
    room, secret = rooms.open_room("discover", 2, time.time())
    student = session(room.code)
    rooms.close(room.code, secret, time.time())
    student.run()
    assert f"No open room has the code {room.code}" in " ".join(w.value for w in student.warning)
    assert "room" not in student.query_params


@pytest.fixture
def home(monkeypatch, tiny_pretraining_dir, rooms):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(tiny_pretraining_dir))
    return lambda: AppTest.from_file(str(ROOT / "pages/home.py"), default_timeout=APPTEST_TIMEOUT).run()


def join(at: AppTest, code: str) -> AppTest:
    at.text_input(key="class_code").input(code)
    return at.button(key="FormSubmitter:class_join-Join the class").click().run()


def test_a_typed_code_joins_and_wrong_codes_are_limited(home, rooms):
    room, _ = rooms.open_room("discover", 1, time.time())
    at = home()
    join(at, "0O1IL2")  # not a code: letters a code never has
    assert "A room code has 6 letters and digits" in " ".join(w.value for w in at.warning)
    for _ in range(LIMITS.join_guesses_per_minute - 1):
        join(at, "ZZZZZZ" if room.code != "ZZZZZZ" else "YYYYYY")
    join(at, f"{room.code[:3].lower()}-{room.code[3:].lower()}")  # right, but past the limit: wait a minute
    assert f"at most {LIMITS.join_guesses_per_minute} a minute" in " ".join(w.value for w in at.warning)
    assert "room" not in at.query_params
    fresh = join(home(), f"{room.code[:3].lower()}-{room.code[3:].lower()}")  # case and a dash ignored
    assert not fresh.exception and param(fresh, "room") == room.code


def test_a_tab_opens_at_most_its_rooms_an_hour(home, rooms):
    at = home()
    at.session_state[OPENED_ROOMS] = [time.time()] * LIMITS.rooms_per_tab_hour
    at.button(key="_class_start_home").click().run()
    assert f"at most {LIMITS.rooms_per_tab_hour} live classes an hour" in " ".join(w.value for w in at.warning)
    assert MEMBER not in at.session_state and "room" not in at.query_params


def warned(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


def test_a_fresh_session_is_held_to_its_addresss_limit_on_codes_that_open_no_room(home, rooms, monkeypatch):
    client = client_key("203.0.113.7")  # every session of one network (AppTest's have no address)
    monkeypatch.setattr(components.ui.classroom, "this_client", lambda: client)
    room, _ = rooms.open_room("discover", 1, time.time())
    for _ in range(LIMITS.wrong_codes_per_client):  # other tabs and sessions of the network, on any replica
        with pytest.raises(RoomClosed):
            rooms.find_room("ZZZZZZ" if room.code != "ZZZZZZ" else "YYYYYY", client, time.time())
    fresh = join(home(), room.code)  # a new session: its own tab's count starts at 0, the address's does not
    limit = f"at most {LIMITS.wrong_codes_per_client} in {LIMITS.wrong_codes_minutes:g} minutes"
    assert literal(limit) in warned(fresh) and "room" not in fresh.query_params
    monkeypatch.setattr(components.ui.classroom, "this_client", lambda: client_key("198.51.100.9"))
    assert param(join(fresh, room.code), "room") == room.code  # another network's student joins


def test_an_ended_rooms_link_reloaded_by_a_class_keeps_no_one_of_its_network_out(session, rooms, monkeypatch):
    """A class reloading its ended room's link (30 tabs of one school network) spends link tries only: the school's
    next class joins by link and by typed code; past ``wrong_links_per_client`` a link is refused, naming the limit."""
    client = client_key("203.0.113.7")
    monkeypatch.setattr(components.ui.lessons, "this_client", lambda: client)
    ended, secret = rooms.open_room("discover", 2, time.time())
    rooms.close(ended.code, secret, time.time())
    for _ in range(LIMITS.wrong_codes_per_client):
        tab = session(ended.code)
        assert f"No open room has the code {ended.code}" in warned(tab) and "room" not in tab.query_params
    room, _ = rooms.open_room("discover", 2, time.time())
    assert param(session(room.code), "room") == room.code  # the next class of the school joins by link ...
    assert rooms.find_room(room.code, client, time.time()).code == room.code  # ... and by typed code
    for _ in range(LIMITS.wrong_links_per_client - LIMITS.wrong_codes_per_client):
        with pytest.raises(RoomClosed):
            rooms.find_room(ended.code, client, time.time(), by_link=True)
    refused = session(room.code)
    limit = f"at most {LIMITS.wrong_links_per_client} in {LIMITS.wrong_codes_minutes:g} minutes"
    assert literal(limit) in warned(refused) and "room" not in refused.query_params


def test_a_fresh_session_is_held_to_its_addresss_rooms_an_hour(home, rooms, monkeypatch):
    client = client_key("203.0.113.7")
    monkeypatch.setattr(components.ui.classroom, "this_client", lambda: client)
    for _ in range(LIMITS.rooms_per_client_hour):
        rooms.open_room("discover", 1, time.time(), client)
    at = home()  # a new session: it has opened no room itself
    at.button(key="_class_start_home").click().run()
    assert literal(f"At most {LIMITS.rooms_per_client_hour} live classes an hour") in warned(at)
    assert MEMBER not in at.session_state and "room" not in at.query_params


def test_the_teacher_ends_the_class_and_everything_in_it_is_deleted(rooms, session):
    room, secret = rooms.open_room("discover", 2, time.time())
    student = send(session(room.code), "cat")
    teacher = session(room.code, secret)
    assert teacher.button(key="_class_end") and not [b for b in student.button if b.key == "_class_end"]
    teacher.button(key="_class_end").click().run()
    assert not teacher.exception and "room" not in teacher.query_params
    with pytest.raises(RoomClosed):
        rooms.tally(room.code, ASK, time.time())
    student.run()
    assert f"No open room has the code {room.code}" in " ".join(w.value for w in student.warning)


# A Word senses round: the senses lesson's step 4 ("The map at the top") gathers one sentence per student.

SENSES = LESSONS["senses"]
ROUND_INDEX = next(i for i, step in enumerate(SENSES.steps) if step.class_sentences)
ROUND = f"_lesson_senses_{ROUND_INDEX}"
APPLE = PRESETS["apple"]


@pytest.fixture
def senses_session(monkeypatch, tiny_pretraining_dir, tiny_bundle):
    """A tab on the Word senses page at the round's step (``class_tab``)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(tiny_pretraining_dir))
    link = step_link(SENSES, ROUND_INDEX, tiny_bundle.capabilities.num_layers)
    return lambda code, secret=None, seat=None: class_tab("senses", link, code, secret, seat)


def send_sentence(at: AppTest, sentence: str) -> AppTest:
    at.text_input(key=f"{ROUND}_sentence").input(sentence)
    return at.button(key=f"FormSubmitter:{ROUND}_sentence_form-Send my sentence").click().run()


def class_points(at: AppTest) -> pd.DataFrame:
    """The class map's table of coordinates (drawn above the page's own map)."""
    return next(d for d in tables(at) if {"x", "y", "sense"} <= set(d.columns))


def test_a_round_maps_the_class_sentences_on_the_pages_own_pca(rooms, senses_session, tiny_bundle):
    room, secret = rooms.open_room("senses", ROUND_INDEX + 1, time.time())
    teacher = senses_session(room.code, secret)
    students = [senses_session(room.code) for _ in range(2)]
    sentences = ("I ate a green apple.", "My apple laptop crashed again.")
    for student, sentence in zip(students, sentences):
        send_sentence(student, sentence)
        assert not student.exception and "Your sentence is in" in shown(student)
    assert [e.sentence for e in rooms.sentences(room.code, ROUND, time.time())] == list(sentences)
    points = class_points(teacher.run())
    assert not teacher.exception
    assert list(points.sentence[-2:]) == list(sentences) and list(points.sense[-2:]) == ["the class"] * 2
    assert list(points.sense[:-2]) == [s.sense for s in APPLE.sentences]
    # The reference: the model's vectors of the word in every sentence, the preset's own PCA axes (the page's map),
    # each class sentence placed on them.
    words = embed_word(tiny_bundle, [*(s.sentence for s in APPLE.sentences), *sentences], "apple")
    vectors = at_layer(words.contextual, str(tiny_bundle.capabilities.num_layers))
    fitted = len(APPLE.sentences)
    expected = PCA(n_components=2, svd_solver="full").fit(vectors[:fitted]).transform(vectors)
    for axis, column in enumerate("xy"):
        ours = points[column].to_numpy(float)
        np.testing.assert_allclose(np.sign(ours @ expected[:, axis]) * ours, expected[:, axis], atol=1e-4)
    mine = class_points(students[0].run())
    assert list(mine.sense[-2:]) == ["your sentence", "the class"]  # each student's own is their star
    np.testing.assert_allclose(mine[["x", "y"]].to_numpy(float), points[["x", "y"]].to_numpy(float))


def test_a_second_sentence_replaces_the_first_and_one_without_the_word_is_refused(rooms, senses_session):
    room, _ = rooms.open_room("senses", ROUND_INDEX + 1, time.time())
    student = senses_session(room.code)
    send_sentence(student, "An apple a day.")
    time.sleep(LIMITS.answer_seconds)
    send_sentence(student, "Apple shares rose.")
    assert [e.sentence for e in rooms.sentences(room.code, ROUND, time.time())] == ["Apple shares rose."]
    time.sleep(LIMITS.answer_seconds)
    box = student.text_input(key=f"{ROUND}_sentence")  # the store refuses longer ones too (test_rooms_store.py)
    assert box.max_chars == LIMITS.max_sentence_chars and f"at most {LIMITS.max_sentence_chars} characters" in box.help
    send_sentence(student, "Pineapples are sweet.")  # "apple" only inside another word
    assert literal("has no “apple” (as a whole word)") in " ".join(w.value for w in student.warning)
    assert "Your sentence is in" not in shown(student)
    assert [e.sentence for e in rooms.sentences(room.code, ROUND, time.time())] == ["Apple shares rose."]
    assert list(class_points(student).sentence[-1:]) == ["Apple shares rose."]


def test_a_reload_keeps_the_students_sentence_in_the_box_and_their_star_even_hidden(rooms, senses_session):
    room, secret = rooms.open_room("senses", ROUND_INDEX + 1, time.time())
    student, other = senses_session(room.code), senses_session(room.code)
    seat = param(student, "seat")
    send_sentence(other, "The apple fell far from the tree.")
    send_sentence(student, "Apple shares rose.")
    again = senses_session(room.code, seat=seat)  # a reload (or another replica): a new session, the same seat
    assert not again.exception and again.text_input(key=f"{ROUND}_sentence").value == "Apple shares rose."
    assert "Your sentence is in" in shown(again)
    points = class_points(again)
    assert list(zip(points.sentence[-2:], points.sense[-2:])) == [
        ("The apple fell far from the tree.", "the class"),
        ("Apple shares rose.", "your sentence"),  # the star, back
    ]
    (mine,) = (e for e in rooms.sentences(room.code, ROUND, time.time()) if e.sentence == "Apple shares rose.")
    rooms.hide(room.code, secret, mine.id, True, time.time())
    hidden = senses_session(room.code, seat=seat)  # hidden: off the map, still in its author's box
    assert hidden.text_input(key=f"{ROUND}_sentence").value == "Apple shares rose."
    assert "the teacher has hidden it" in shown(hidden)
    assert "Apple shares rose." not in list(class_points(hidden).sentence)
    assert rooms.room(room.code, time.time()).students == 2


def test_the_teacher_hides_a_sentence_from_every_map_and_a_student_cannot(rooms, senses_session):
    room, secret = rooms.open_room("senses", ROUND_INDEX + 1, time.time())
    first, second = senses_session(room.code), senses_session(room.code)
    send_sentence(first, "Apple <b>rocks</b> & rolls.")
    send_sentence(second, "The apple fell far from the tree.")
    assert not [b for b in first.button if b.key.startswith("_class_hide_")]  # no toggle without the key
    teacher = senses_session(room.code, secret)
    listed = [t.value for t in teacher.text]
    assert "1. Apple <b>rocks</b> & rolls." in listed and "2. The apple fell far from the tree." in listed  # literal
    (hidden, kept) = rooms.sentences(room.code, ROUND, time.time())
    teacher.button(key=f"_class_hide_{hidden.id}").click().run()
    assert not teacher.exception and [e.id for e in rooms.sentences(room.code, ROUND, time.time())] == [kept.id]
    assert "1. (hidden from the map)" in [t.value for t in teacher.text]
    assert "Apple <b>rocks</b> & rolls." not in list(class_points(teacher).sentence)  # off the projector
    assert list(class_points(second.run()).sentence[-1:]) == [kept.sentence]  # and off every student's map
    assert "the teacher has hidden it" in shown(first.run())
    forger = senses_session(room.code, secret="not-the-key")  # a forged host: a session that claims a key
    forger.button(key=f"_class_hide_{kept.id}").click().run()
    assert "Only the teacher who opened this room" in " ".join(w.value for w in forger.warning)
    assert [e.id for e in rooms.sentences(room.code, ROUND, time.time())] == [kept.id]
