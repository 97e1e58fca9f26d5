"""The room store's invariants (``components.services.rooms``), each on both backends: SQLite and PostgreSQL.

Time is passed in (``now``), never slept; "replicas" are two store objects on one database, or two processes.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

import components.services.rooms
from bertlens.rooms import (
    CODE_ALPHABET,
    CODE_LENGTH,
    LIMITS,
    NotHost,
    Room,
    RoomClosed,
    RoomError,
    RoomLimits,
    Tally,
    client_key,
    secret_digest,
    tally,
)
from components.services.rooms import (
    CLIENT_TABLE,
    CODE_TRIES,
    MIGRATIONS,
    POSTGRES,
    SCHEMA_TABLE,
    SQLITE,
    TABLES,
    Migration,
    PostgresRooms,
    SchemaTooNew,
    SqliteRooms,
    open_store,
)
from tests.conftest import ROOT

NOW = 1_000_000.0  # the clock every test starts from
LATER = NOW + 10  # past any student's answer_seconds since NOW
QUESTION = "discover-3"
ROUND = "senses-bank"
BACKENDS = ("sqlite", "postgres")
Store = SqliteRooms | PostgresRooms


def student(number: int) -> str:
    return f"{number:016x}"


@dataclass
class Backend:
    """One database, as the stores see it (``url``) and as the test reads it behind their back."""

    name: str
    url: str
    new_url: Callable[[], str]  # another, empty database
    stores: list[Store] = field(default_factory=list)

    def store(self, limits: RoomLimits = LIMITS, url: str | None = None) -> Store:
        made = open_store(url or self.url, limits)
        assert isinstance(made, SqliteRooms | PostgresRooms)
        self.stores.append(made)
        return made

    def rows(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        if self.name == "sqlite":
            with closing(sqlite3.connect(self.url.removeprefix("sqlite:///"))) as connection:
                return connection.execute(query.replace("%s", "?"), params).fetchall()
        with psycopg.connect(self.url) as connection:
            return connection.execute(query, params).fetchall()

    def count(self, table: str, code: str) -> int:
        return int(self.rows(f"SELECT count(*) FROM {table} WHERE code = %s", code)[0][0])

    def everything(self) -> str:
        """Every byte the database keeps: SQLite's file and its write-ahead log, PostgreSQL's tables as text."""
        if self.name == "sqlite":
            path = Path(self.url.removeprefix("sqlite:///"))
            return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists()).decode("latin-1")
        tables = (*TABLES, CLIENT_TABLE)
        return "\n".join(str(row) for table in tables for row in self.rows(f"SELECT t::text FROM {table} t"))


@pytest.fixture(scope="module")
def postgres_databases(postgres) -> Iterator[Callable[[], str]]:
    names = (f"rooms_{i}" for i in range(1_000))
    yield lambda: postgres.create_database(next(names))


@pytest.fixture(scope="module")
def postgres_dsn(postgres_databases) -> str:
    return postgres_databases()


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Iterator[Backend]:
    if request.param == "sqlite":
        files = (tmp_path / f"rooms-{i}.sqlite3" for i in range(1_000))
        made = Backend("sqlite", f"sqlite:///{tmp_path / 'rooms.sqlite3'}", lambda: f"sqlite:///{next(files)}")
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        made = Backend("postgres", dsn, request.getfixturevalue("postgres_databases"))
        made.store()  # the tables, then emptied: each test starts from no room
        with psycopg.connect(dsn, autocommit=True) as connection:
            tables = sql.SQL(", ").join(map(sql.Identifier, (*TABLES, CLIENT_TABLE)))
            connection.execute(sql.SQL("TRUNCATE {} CASCADE").format(tables))
    yield made
    for store in made.stores:
        store.disconnect()


@pytest.fixture
def store(backend) -> Store:
    return backend.store()


def opened(store: Store, students: int = 0, now: float = NOW) -> tuple[Room, str]:
    """A room and its secret, with ``students`` joined."""
    room, secret = store.open_room("discover", 3, now)
    for number in range(students):
        store.join(room.code, student(number), now)
    return store.room(room.code, now), secret


def every_call(store: Store, code: str, secret: str | None) -> dict[str, Callable[[float], object]]:
    """Every RoomStore method on ``code``, as the teacher (``secret``) or student 0 calls it, at a time."""
    return {
        "room": lambda now: store.room(code, now),
        "is_host": lambda now: store.is_host(code, secret, now),
        "steer": lambda now: store.steer(code, secret, "senses", 1, now),
        "reveal": lambda now: store.reveal(code, secret, QUESTION, now),
        "hide": lambda now: store.hide(code, secret, 1, True, now),
        "close": lambda now: store.close(code, secret, now),
        "join": lambda now: store.join(code, student(0), now),
        "answer": lambda now: store.answer(code, student(0), QUESTION, "dog", now),
        "answer_of": lambda now: store.answer_of(code, student(0), QUESTION, now),
        "tally": lambda now: store.tally(code, QUESTION, now),
        "add_sentence": lambda now: store.add_sentence(code, student(0), ROUND, "A river bank.", now),
        "sentences": lambda now: store.sentences(code, ROUND, now),
        "sentence_of": lambda now: store.sentence_of(code, student(0), ROUND, now),
    }


# Opening, reading and steering.


def test_a_room_opens_with_a_readable_code_and_a_secret_that_makes_its_teacher(store):
    room, secret = store.open_room("discover", 2, NOW)
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(CODE_ALPHABET)
    assert room == Room(room.code, "discover", 2, frozenset(), NOW, 0)
    assert store.room(room.code, NOW + 1) == room
    assert store.is_host(room.code, secret, NOW + 1)
    assert not store.is_host(room.code, None, NOW + 1)
    assert not store.is_host(room.code, secret[:-1], NOW + 1)


def test_what_the_teacher_steers_and_reveals_every_replica_reads(backend):
    teacher, other_replica = backend.store(), backend.store()
    room, secret = opened(teacher, students=2)
    assert teacher.steer(room.code, secret, "senses", 4, NOW) == replace(room, lesson="senses", step=4)
    teacher.reveal(room.code, secret, "senses-1", NOW)
    revealed = teacher.reveal(room.code, secret, "senses-1", NOW)  # again: once
    assert revealed == replace(room, lesson="senses", step=4, revealed=frozenset({"senses-1"}))
    assert other_replica.room(room.code, NOW) == revealed
    assert other_replica.is_host(room.code, secret, NOW)


def test_a_code_is_read_as_typed_or_linked(store):
    room, _ = opened(store)
    for typed in (room.code.lower(), f"{room.code[:3]}-{room.code[3:]}", f" {room.code[:3]} {room.code[3:]} "):
        assert store.join(typed, student(1), NOW) == replace(room, students=1)
        assert store.room(typed, NOW) == replace(room, students=1)


@pytest.mark.parametrize("code", ["ABCDEF", "", "0O1IL2", "ABCDEFG", "'); DROP TABLE rooms; --", "abc\x00de"])
def test_a_code_that_opens_no_room_is_closed_for_every_call(store, backend, code):
    room, _ = opened(store)
    for call in every_call(store, code, "secret").values():
        with pytest.raises(RoomClosed, match="No open room has the code"):
            call(NOW)
    assert backend.rows("SELECT code FROM rooms") == [(room.code,)]


def test_joining_again_changes_nothing(store):
    room, _ = opened(store)
    for _ in range(3):
        assert store.join(room.code, student(7), NOW).students == 1


def test_open_room_draws_another_code_when_one_is_taken(store, monkeypatch):
    taken, _ = opened(store)
    free = "23456A" if taken.code != "23456A" else "23456B"
    codes = iter([taken.code, taken.code, free])
    monkeypatch.setattr(components.services.rooms, "new_code", lambda: next(codes))
    room, secret = store.open_room("senses", 1, NOW)
    assert room.code == free and store.is_host(free, secret, NOW)
    monkeypatch.setattr(components.services.rooms, "new_code", lambda: taken.code)
    with pytest.raises(RoomError, match="No free room code"):
        store.open_room("senses", 1, NOW)
    assert CODE_TRIES > 1


# Nothing lost, nothing doubled.


def test_concurrent_students_on_two_replicas_lose_nothing_and_double_nothing(backend):
    """60 students at once, half on each replica; every third answers twice, then everyone sends a sentence."""
    replicas = (backend.store(), backend.store())
    room, _ = opened(replicas[0])
    start = threading.Barrier(60)

    def student_tab(number: int) -> str:
        store, me = replicas[number % 2], student(number)
        start.wait()
        store.join(room.code, me, NOW)
        store.join(room.code, me, NOW)
        store.answer(room.code, me, QUESTION, f"word{number % 4}", NOW + 1)
        if number % 3 == 0:
            store.answer(room.code, me, QUESTION, "again", NOW + 3)
        store.add_sentence(room.code, me, ROUND, f"Sentence {number}.", NOW + 5)
        return "again" if number % 3 == 0 else f"word{number % 4}"

    with ThreadPoolExecutor(60) as pool:
        last_answers = list(pool.map(student_tab, range(60)))

    assert replicas[1].room(room.code, LATER).students == 60
    assert replicas[1].tally(room.code, QUESTION, LATER) == tally(last_answers) and tally(last_answers).answered == 60
    assert all(replicas[0].answer_of(room.code, student(n), QUESTION, LATER) == a for n, a in enumerate(last_answers))
    assert backend.count("answers", room.code) == 60 and backend.count("students", room.code) == 60
    sentences = replicas[0].sentences(room.code, ROUND, LATER)
    assert sorted(e.sentence for e in sentences) == sorted(f"Sentence {n}." for n in range(60))


def test_caps_hold_when_everyone_tries_at_once_on_two_replicas(backend):
    limits = replace(LIMITS, max_open_rooms=3, max_students=10, room_answers_per_minute=5)
    replicas = (backend.store(limits), backend.store(limits))

    def at_once(attempt: Callable[[Store, int], object], tries: int) -> int:
        """How many of ``tries`` simultaneous attempts (each replica taking every other one) succeed."""
        start = threading.Barrier(tries)

        def one(number: int) -> bool:
            start.wait()
            try:
                attempt(replicas[number % 2], number)
            except RoomError:
                return False
            return True

        with ThreadPoolExecutor(tries) as pool:
            return sum(pool.map(one, range(tries)))

    room, _ = opened(replicas[0])
    assert at_once(lambda store, _: store.open_room("discover", 1, NOW), tries=10) == 2
    assert at_once(lambda store, number: store.join(room.code, student(number), NOW), tries=30) == 10
    joined = [str(s) for (s,) in backend.rows("SELECT student FROM students WHERE code = %s", room.code)]
    assert at_once(lambda store, number: store.answer(room.code, joined[number], QUESTION, "cat", NOW), tries=10) == 5
    assert replicas[0].room(room.code, NOW).students == 10 and replicas[1].tally(room.code, QUESTION, NOW).answered == 5


REPLICA = """
import sys
from components.services.rooms import open_store
url, code, first, now = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
store = open_store(url)
for number in range(first, first + 20):
    store.join(code, f"{number:016x}", now)
    store.answer(code, f"{number:016x}", "q", f"word{number % 3}", now + 1)
"""


def test_two_processes_on_one_store_lose_nothing(backend):
    store = backend.store()
    room, _ = opened(store)
    replicas = [
        subprocess.Popen([sys.executable, "-c", REPLICA, backend.url, room.code, str(first), str(NOW)], cwd=ROOT)
        for first in (0, 20)
    ]
    assert [replica.wait(timeout=60) for replica in replicas] == [0, 0]
    assert store.tally(room.code, "q", LATER) == tally(f"word{n % 3}" for n in range(40))


def test_a_second_answer_replaces_the_first(store, backend):
    room, _ = opened(store, students=1)
    store.answer(room.code, student(0), QUESTION, "cat", NOW + 1)
    store.answer(room.code, student(0), QUESTION, "dog", NOW + 3)
    assert store.answer_of(room.code, student(0), QUESTION, LATER) == "dog"
    assert store.tally(room.code, QUESTION, LATER) == Tally(1, (("dog", 1),))
    assert backend.count("answers", room.code) == 1
    assert store.answer_of(room.code, student(0), "another question", LATER) is None


def test_the_tally_counts_most_first_then_in_code_point_order(store):
    room, _ = opened(store, students=6)
    answers = ["b", "a", "b", "a", "c", "B"]
    for number, answer in enumerate(answers):
        store.answer(room.code, student(number), QUESTION, answer, NOW + 1)
    assert store.tally(room.code, QUESTION, LATER) == Tally(6, (("a", 2), ("b", 2), ("B", 1), ("c", 1)))
    assert store.tally(room.code, "nobody answered this", LATER) == Tally(0, ())


# The host's secret.


HOST_ACTIONS: dict[str, Callable[[Store, str, str | None], object]] = {
    "steer": lambda store, code, secret: store.steer(code, secret, "senses", 5, NOW),
    "reveal": lambda store, code, secret: store.reveal(code, secret, "senses-2", NOW),
    "hide": lambda store, code, secret: store.hide(code, secret, store.sentences(code, ROUND, NOW)[0].id, True, NOW),
    "close": lambda store, code, secret: store.close(code, secret, NOW),
}


@pytest.mark.parametrize("action", HOST_ACTIONS)
@pytest.mark.parametrize("whose", ["none", "empty", "wrong", "another room's", "its digest"])
def test_host_actions_need_the_rooms_own_secret_and_change_nothing_without_it(store, action, whose):
    room, secret = opened(store, students=1)
    _, other_secret = opened(store)
    store.add_sentence(room.code, student(0), ROUND, "The bank of the river.", NOW)
    given = {"none": None, "empty": "", "wrong": "x" * len(secret), "another room's": other_secret}
    before = store.room(room.code, NOW), store.sentences(room.code, ROUND, NOW, with_hidden=True)
    with pytest.raises(NotHost, match="Only the teacher"):
        HOST_ACTIONS[action](store, room.code, given.get(whose, secret_digest(secret)))
    assert (store.room(room.code, NOW), store.sentences(room.code, ROUND, NOW, with_hidden=True)) == before
    HOST_ACTIONS[action](store, room.code, secret)  # and the right one does it


def test_the_secret_is_compared_by_secret_matches(store, monkeypatch):
    room, secret = opened(store)
    compared = []
    real = components.services.rooms.secret_matches
    monkeypatch.setattr(
        components.services.rooms, "secret_matches", lambda given, digest: compared.append(given) or real(given, digest)
    )
    with pytest.raises(NotHost):
        store.steer(room.code, "guess", "senses", 1, NOW)
    assert store.is_host(room.code, secret, NOW)
    assert compared == ["guess", secret]


def test_the_secret_is_never_stored(backend):
    store = backend.store()
    room, secret = opened(store, students=1)
    store.reveal(room.code, secret, QUESTION, NOW)
    store.answer(room.code, student(0), QUESTION, "dog", NOW + 1)
    kept = backend.everything()
    assert secret_digest(secret) in kept and room.code in kept  # the dump holds the room…
    assert secret not in kept  # …and not its secret


# Caps: each refusal names its limit.


def test_the_101st_student_is_refused(store):
    room, _ = opened(store, students=100)
    with pytest.raises(RoomError, match=r"This room is full: it takes at most 100 students\."):
        store.join(room.code, student(100), NOW)
    assert store.join(room.code, student(99), NOW).students == 100  # a member rejoining is no newcomer


def test_an_answer_or_sentence_longer_than_its_cap_is_refused(store, backend):
    room, _ = opened(store, students=1)
    with pytest.raises(RoomError, match=f"at most {LIMITS.max_answer_chars} characters"):
        store.answer(room.code, student(0), QUESTION, "a" * (LIMITS.max_answer_chars + 1), NOW)
    with pytest.raises(RoomError, match=f"at most {LIMITS.max_sentence_chars} characters"):
        store.add_sentence(room.code, student(0), ROUND, "b" * (LIMITS.max_sentence_chars + 1), NOW)
    assert backend.count("answers", room.code) == backend.count("sentences", room.code) == 0
    store.answer(room.code, student(0), QUESTION, "a" * LIMITS.max_answer_chars, NOW)
    store.add_sentence(room.code, student(0), ROUND, "b" * LIMITS.max_sentence_chars, NOW + 1)


def test_a_student_sends_at_most_one_answer_or_sentence_every_answer_seconds(store):
    room, _ = opened(store, students=1)
    store.answer(room.code, student(0), QUESTION, "cat", NOW)
    for too_soon in (
        lambda: store.answer(room.code, student(0), QUESTION, "dog", NOW + 0.5),
        lambda: store.add_sentence(room.code, student(0), ROUND, "A bank.", NOW + 0.5),
    ):
        with pytest.raises(RoomError, match=r"at most one answer every 1 s"):
            too_soon()
    assert store.answer_of(room.code, student(0), QUESTION, NOW) == "cat"
    store.answer(room.code, student(0), QUESTION, "dog", NOW + LIMITS.answer_seconds)
    assert store.answer_of(room.code, student(0), QUESTION, NOW + 2) == "dog"


def test_a_room_takes_at_most_its_answers_per_minute(backend):
    store = backend.store(replace(LIMITS, room_answers_per_minute=3))
    room, _ = opened(store, students=5)
    for number in range(3):
        store.answer(room.code, student(number), QUESTION, "cat", NOW + 1 + number)
    with pytest.raises(RoomError, match=r"at most 3 answers a minute"):
        store.answer(room.code, student(3), QUESTION, "cat", NOW + 59)  # the minute began as the room opened
    assert store.tally(room.code, QUESTION, NOW + 59).answered == 3
    store.answer(room.code, student(3), QUESTION, "cat", NOW + 60)  # a new minute: its first
    store.add_sentence(room.code, student(4), ROUND, "A bank.", NOW + 61)  # sentences count as answers
    store.add_sentence(room.code, student(0), ROUND, "A bank.", NOW + 62)
    with pytest.raises(RoomError, match=r"at most 3 answers a minute"):
        store.add_sentence(room.code, student(1), ROUND, "A bank.", NOW + 63)


def test_a_store_holds_at_most_max_open_rooms(backend):
    store = backend.store(replace(LIMITS, max_open_rooms=2))
    first, secret = opened(store)
    opened(store)
    with pytest.raises(RoomError, match=r"at most 2 open rooms"):
        store.open_room("discover", 1, NOW)
    store.close(first.code, secret, NOW)
    opened(store)
    later = NOW + LIMITS.room_seconds  # the rooms above are past their time, purged or not
    opened(store, now=later)
    opened(store, now=later)
    with pytest.raises(RoomError, match=r"at most 2 open rooms"):
        store.open_room("discover", 1, later)


# Per client address: what a fresh session cannot start afresh (the tab's own counts are the page's).

ADDRESS = "203.0.113.7"
CLIENT, OTHER_CLIENT = client_key(ADDRESS), client_key("198.51.100.9")


def no_room(room: Room) -> str:
    """A code of no open room."""
    return "ZZZZZZ" if room.code != "ZZZZZZ" else "YYYYYY"


def test_codes_that_open_no_room_are_limited_per_address_on_every_replica(backend):
    limits = replace(LIMITS, wrong_codes_per_client=3, wrong_codes_minutes=10)
    first, second = backend.store(limits), backend.store(limits)  # two replicas
    room, _ = opened(first)
    assert first.find_room(f"{room.code[:3].lower()}-{room.code[3:]}", CLIENT, NOW) == room  # a right code: not counted
    with pytest.raises(RoomError, match=r"A room code has 6 letters and digits"):
        second.find_room("0O1IL2", CLIENT, NOW)  # not a code: counted too
    for at, store in ((NOW + 1, first), (NOW + 2, second)):
        with pytest.raises(RoomClosed):
            store.find_room(no_room(room), CLIENT, at)
    for store in (first, second):  # past the limit, on either replica: a right code too, and nothing more counted
        with pytest.raises(RoomError, match=r"at most 3 in 10 minutes\. Wait a few minutes"):
            store.find_room(room.code, CLIENT, NOW + 5)
    assert backend.rows("SELECT count(*) FROM client_events")[0][0] == 3
    assert second.find_room(room.code, OTHER_CLIENT, NOW + 5) == room  # another address
    assert second.find_room(room.code, None, NOW + 5) == room  # no address known: only the tab's own limit
    assert first.find_room(room.code, CLIENT, NOW + 600) == room  # the first left the 10 minutes


def test_links_that_open_no_room_have_their_own_limit_per_address(backend):
    """A class reloading its ended room's link spends link tries, not the typed codes of its school's next class."""
    limits = replace(LIMITS, wrong_codes_per_client=1, wrong_links_per_client=2, wrong_codes_minutes=10)
    first, second = backend.store(limits), backend.store(limits)  # two replicas
    room, _ = opened(first)
    assert first.find_room(room.code, CLIENT, NOW, by_link=True) == room  # a right link: not counted
    for store in (first, second):
        with pytest.raises(RoomClosed):
            store.find_room(no_room(room), CLIENT, NOW + 1, by_link=True)
    with pytest.raises(RoomError, match=r"Too many class links that open no room .* at most 2 in 10 minutes"):
        second.find_room(room.code, CLIENT, NOW + 2, by_link=True)  # past the link limit: a right link waits too
    assert first.find_room(room.code, CLIENT, NOW + 2) == room  # typing the code still works
    with pytest.raises(RoomClosed):
        first.find_room(no_room(room), CLIENT, NOW + 3)  # the one typed try
    with pytest.raises(RoomError, match=r"Too many codes that open no room .* at most 1 in 10 minutes"):
        first.find_room(room.code, CLIENT, NOW + 4)
    assert backend.rows("SELECT kind, count(*) FROM client_events GROUP BY kind ORDER BY kind") == [
        ("wrong code", 1),
        ("wrong link", 2),
    ]
    assert first.find_room(room.code, CLIENT, NOW + 601, by_link=True) == room  # the window passed


def test_an_address_is_held_to_its_limit_when_its_tries_come_at_once_on_two_replicas(backend):
    stores = [backend.store(replace(LIMITS, wrong_codes_per_client=3)) for _ in range(2)]
    start = threading.Barrier(8)

    def attempt(number: int) -> str:
        start.wait()
        try:
            stores[number % 2].find_room("ZZZZZZ", CLIENT, NOW)
        except RoomClosed:
            return "counted"
        except RoomError:
            return "refused"
        return "found"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(attempt, range(8)))
    assert sorted(outcomes) == ["counted"] * 3 + ["refused"] * 5


def test_an_address_opens_at_most_its_rooms_an_hour_on_every_replica(backend):
    first, second = (backend.store(replace(LIMITS, rooms_per_client_hour=2)) for _ in range(2))
    first.open_room("discover", 1, NOW, CLIENT)
    second.open_room("discover", 1, NOW + 1, CLIENT)
    for store in (first, second):
        with pytest.raises(RoomError, match=r"At most 2 live classes an hour can be opened from one network address"):
            store.open_room("discover", 1, NOW + 2, CLIENT)
    assert backend.rows("SELECT count(*) FROM rooms")[0][0] == 2
    second.open_room("discover", 1, NOW + 2, OTHER_CLIENT)
    second.open_room("discover", 1, NOW + 2)  # no address known: only the tab's own limit
    first.open_room("discover", 1, NOW + 3600, CLIENT)  # the first left the hour


def test_the_store_keeps_a_digest_of_an_address_not_the_address_and_for_an_hour_at_most(backend):
    store = backend.store()
    room, _ = opened(store)
    store.open_room("discover", 1, NOW, CLIENT)
    with pytest.raises(RoomClosed):
        store.find_room(no_room(room), CLIENT, NOW)
    kept = backend.everything()
    assert ADDRESS not in kept and str(CLIENT) in kept
    with pytest.raises(RoomError, match=r"address's digest"):  # an address itself is refused before any query
        store.find_room(room.code, ADDRESS, NOW)
    store.purge(NOW + LIMITS.client_seconds - 1)
    assert backend.rows("SELECT count(*) FROM client_events")[0][0] == 2
    store.purge(NOW + LIMITS.client_seconds)
    assert backend.rows("SELECT count(*) FROM client_events")[0][0] == 0


# Expiry and deletion.


def test_a_room_past_its_time_is_closed_for_every_call_then_purged_with_everything_in_it(store, backend):
    room, secret = opened(store, students=1)
    store.reveal(room.code, secret, QUESTION, NOW)
    store.answer(room.code, student(0), QUESTION, "dog", NOW + 1)
    store.add_sentence(room.code, student(0), ROUND, "A bank.", NOW + 2)
    younger, _ = opened(store, now=NOW + 1)
    end = NOW + LIMITS.room_seconds
    assert store.room(room.code, end - 1).students == 1
    for name, call in every_call(store, room.code, secret).items():
        with pytest.raises(RoomClosed, match=r"over 24 hours old"):
            call(end)
        assert backend.count("answers", room.code) == 1, name  # closed to calls, not yet deleted
    assert store.purge(end) == 1
    assert all(backend.count(table, room.code) == 0 for table in TABLES)
    assert store.room(younger.code, end) == younger
    assert store.purge(end) == 0


def test_closing_a_room_deletes_everything_in_it(store, backend):
    room, secret = opened(store, students=1)
    other, _ = opened(store, students=1)
    for code in (room.code, other.code):
        store.answer(code, student(0), QUESTION, "dog", NOW + 1)
        store.add_sentence(code, student(0), ROUND, "A bank.", NOW + 2)
    store.reveal(room.code, secret, QUESTION, NOW)
    store.close(room.code, secret, NOW)
    with pytest.raises(RoomClosed):
        store.room(room.code, NOW)
    assert all(backend.count(table, room.code) == 0 for table in TABLES)
    assert (
        store.tally(other.code, QUESTION, LATER).answered == 1 and len(store.sentences(other.code, ROUND, LATER)) == 1
    )


# What students type.


@pytest.mark.parametrize(
    "text",
    [
        "'); DROP TABLE answers; --",
        'Robert"); DELETE FROM rooms; --',
        "it's a 'quoted' \"word\"",
        "? %s %(x)s {} \\",
        "😀 naïve 日本語 👩‍💻",
    ],
)
def test_typed_text_is_stored_and_returned_as_typed(store, text):
    room, secret = opened(store, students=1)
    question = f"q {text}"[:100]
    store.reveal(room.code, secret, question, NOW)
    store.answer(room.code, student(0), question, text, NOW)
    store.add_sentence(room.code, student(0), question, text, NOW + 1)
    assert store.answer_of(room.code, student(0), question, LATER) == text
    assert store.tally(room.code, question, LATER) == Tally(1, ((text, 1),))
    assert [entry.sentence for entry in store.sentences(room.code, question, LATER)] == [text]
    assert store.sentence_of(room.code, student(0), question, LATER) == text
    assert store.room(room.code, LATER).revealed == {question}


@pytest.mark.parametrize("text", ["a\x00b", "bell\x07", "\ud800"])
def test_control_characters_are_refused(store, backend, text):
    room, _ = opened(store, students=1)
    with pytest.raises(RoomError, match="cannot hold control characters"):
        store.answer(room.code, student(0), QUESTION, text, NOW)
    with pytest.raises(RoomError, match="cannot hold control characters"):
        store.add_sentence(room.code, student(0), ROUND, text, NOW)
    assert backend.count("answers", room.code) == backend.count("sentences", room.code) == 0


def test_only_a_joined_student_with_a_valid_id_answers(store, backend):
    room, _ = opened(store)
    elsewhere, _ = opened(store, students=1)  # student 0 joined another room
    with pytest.raises(RoomError, match="Join the room first"):
        store.answer(room.code, student(0), QUESTION, "dog", NOW)
    with pytest.raises(RoomError, match="Join the room first"):
        store.add_sentence(room.code, student(0), ROUND, "A bank.", NOW)
    for bad in ("ABCDEF0123456789", "abc", "'); DROP TABLE students; --", "0123456789abcdef0"):
        with pytest.raises(RoomError, match="student id is not valid"):
            store.join(room.code, bad, NOW)
    assert backend.count("answers", room.code) == backend.count("students", room.code) == 0
    assert store.room(elsewhere.code, NOW).students == 1


def test_sentences_come_in_order_and_the_teacher_hides_them(store):
    room, secret = opened(store, students=3)
    for number in range(3):
        store.add_sentence(room.code, student(number), ROUND, f"Sentence {number}.", NOW + number)
    store.add_sentence(room.code, student(0), "another round", "Elsewhere.", NOW + 5)
    first, second, third = store.sentences(room.code, ROUND, LATER)
    assert [e.sentence for e in (first, second, third)] == ["Sentence 0.", "Sentence 1.", "Sentence 2."]
    store.hide(room.code, secret, second.id, True, LATER)
    store.add_sentence(room.code, student(1), ROUND, "Sentence 1, again.", LATER)  # replaced: still hidden
    store.add_sentence(room.code, student(0), ROUND, "Sentence 0, again.", LATER)  # replaced: keeps its place
    assert [e.sentence for e in store.sentences(room.code, ROUND, LATER)] == ["Sentence 0, again.", "Sentence 2."]
    assert [(e.sentence, e.hidden) for e in store.sentences(room.code, ROUND, LATER, with_hidden=True)] == [
        ("Sentence 0, again.", False),
        ("Sentence 1, again.", True),
        ("Sentence 2.", False),
    ]
    store.hide(room.code, secret, second.id, False, LATER)
    assert len(store.sentences(room.code, ROUND, LATER)) == 3


def test_a_student_reads_back_their_own_last_sentence_hidden_or_not(backend):
    """What a reload (a new session, or another replica) finds in the student's box: their last sentence of the
    round; a sentence the teacher hid too (it is off the map, not out of its author's box)."""
    store, other_replica = backend.store(), backend.store()
    room, secret = opened(store, students=2)
    assert store.sentence_of(room.code, student(0), ROUND, NOW) is None  # none sent yet
    store.add_sentence(room.code, student(0), ROUND, "An apple a day.", NOW)
    store.add_sentence(room.code, student(0), ROUND, "Apple shares rose.", NOW + 2)
    store.add_sentence(room.code, student(1), "another round", "Elsewhere.", NOW + 2)
    assert other_replica.sentence_of(room.code, student(0), ROUND, LATER) == "Apple shares rose."
    assert store.sentence_of(room.code, student(1), ROUND, LATER) is None  # another student's round
    assert store.sentence_of(room.code, student(0), "another round", LATER) is None  # another round
    assert store.sentence_of(room.code, student(1), "another round", LATER) == "Elsewhere."
    (entry,) = store.sentences(room.code, ROUND, LATER)
    store.hide(room.code, secret, entry.id, True, LATER)
    assert store.sentences(room.code, ROUND, LATER) == ()
    assert store.sentence_of(room.code, student(0), ROUND, LATER) == "Apple shares rose."  # hidden: still theirs
    with pytest.raises(RoomError, match="student id is not valid"):
        store.sentence_of(room.code, "'); DROP TABLE sentences; --", ROUND, LATER)


def test_a_round_holds_at_most_one_sentence_per_joined_student(store, backend):
    """What bounds a Word senses map: each student's sentences replace each other, so a round never holds more
    sentences than the room has students (``max_students``)."""
    room, _ = opened(store, students=3)
    for turn in range(3):
        for number in range(3):
            store.add_sentence(room.code, student(number), ROUND, f"Turn {turn} of {number}.", NOW + 2 * turn)
    assert [e.sentence for e in store.sentences(room.code, ROUND, LATER)] == [f"Turn 2 of {n}." for n in range(3)]
    assert backend.count("sentences", room.code) == store.room(room.code, LATER).students == 3


def test_a_teacher_hides_only_their_own_rooms_sentences(store):
    room, secret = opened(store)
    other, _ = opened(store, students=1)
    store.add_sentence(other.code, student(0), ROUND, "Not yours.", NOW)
    (entry,) = store.sentences(other.code, ROUND, NOW)
    for missing in (entry.id, entry.id + 1000):
        with pytest.raises(RoomError, match="not in this room"):
            store.hide(room.code, secret, missing, True, NOW)
    assert store.sentences(other.code, ROUND, NOW) == (entry,)


# Opening a store.


def test_replicas_starting_at_once_create_the_tables_once(backend):
    url = backend.new_url()
    start = threading.Barrier(4)

    def replica(_: int) -> Store:
        start.wait()
        return backend.store(url=url)

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(replica, range(4)))
    room, _ = opened(stores[0])
    assert stores[3].room(room.code, NOW) == room
    assert backend.store(url=url).room(room.code, NOW) == room  # once more: the tables are kept


def test_open_store_reads_the_url(tmp_path, backend):
    absolute = tmp_path / "a" / "rooms.sqlite3"
    assert isinstance(open_store(f"sqlite:///{absolute}"), SqliteRooms) and absolute.exists()
    assert isinstance(open_store(str(tmp_path / "plain.sqlite3")), SqliteRooms)
    if backend.name == "postgres":
        assert isinstance(backend.store(url=backend.url.replace("postgresql://", "postgres://", 1)), PostgresRooms)


@pytest.mark.parametrize("url", ["", "sqlite:///", "mysql://db/rooms", "https://example.org/rooms", ":memory:"])
def test_open_store_refuses_what_it_cannot_open(url):
    with pytest.raises(ValueError, match=r"sqlite:///|in-memory"):
        open_store(url)


# The schema's versions.

NEXT = Migration(
    len(MIGRATIONS) + 1, "a test's next version", lambda d: ("ALTER TABLE answers ADD COLUMN seen INTEGER",)
)


def versioned_store(backend: Backend, url: str, migrations: tuple[Migration, ...]) -> Store:
    made = (
        SqliteRooms(url.removeprefix("sqlite:///"), LIMITS, migrations)
        if backend.name == "sqlite"
        else PostgresRooms(url, LIMITS, migrations)
    )
    backend.stores.append(made)
    return made


def first_schema_database(backend: Backend) -> str:
    """A new database as the code before versioning left it: the first migration's tables, no version table, and a
    room with a student's answer in them."""
    url = backend.new_url()
    dialect, params = (SQLITE, "?") if backend.name == "sqlite" else (POSTGRES, "%s")
    rows = (
        ("INSERT INTO rooms VALUES (?, ?, ?, ?, ?, ?, ?)", ("K7Q3XB", secret_digest("s"), "discover", 2, NOW, NOW, 1)),
        ("INSERT INTO students VALUES (?, ?, ?, ?)", ("K7Q3XB", student(1), NOW, NOW)),
        ("INSERT INTO answers VALUES (?, ?, ?, ?, ?)", ("K7Q3XB", QUESTION, student(1), "dog", NOW)),
    )
    statements = [(text, ()) for text in MIGRATIONS[0].statements(dialect)] + [
        (text.replace("?", params), values) for text, values in rows
    ]
    if backend.name == "sqlite":
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as connection, connection:
            for text, values in statements:
                connection.execute(text, values)
    else:
        with psycopg.connect(url) as connection:
            for text, values in statements:
                connection.execute(text, values)
    return url


def versions(backend: Backend, url: str) -> list[int]:
    return [
        int(v)
        for (v,) in Backend(backend.name, url, backend.new_url).rows(f"SELECT version FROM {SCHEMA_TABLE} ORDER BY 1")
    ]


def test_a_database_of_the_first_schema_is_brought_up_to_date_keeping_its_rooms(backend):
    url = first_schema_database(backend)
    store = versioned_store(backend, url, (*MIGRATIONS, NEXT))
    assert versions(backend, url) == [*range(1, len(MIGRATIONS) + 1), NEXT.version]
    assert store.room("K7Q3XB", LATER) == Room("K7Q3XB", "discover", 2, frozenset(), NOW, 1)
    assert store.answer_of("K7Q3XB", student(1), QUESTION, LATER) == "dog"
    store.answer("K7Q3XB", student(1), QUESTION, "cat", LATER)  # the upgraded tables take writes
    assert store.tally("K7Q3XB", QUESTION, LATER) == tally(["cat"])
    reader = Backend(backend.name, url, backend.new_url)
    assert reader.rows("SELECT seen FROM answers") == [(None,)]  # the next version's column is there
    versioned_store(backend, url, (*MIGRATIONS, NEXT))  # opened again: nothing left to apply
    assert versions(backend, url) == [*range(1, len(MIGRATIONS) + 1), NEXT.version]


def test_today_s_code_adopts_a_database_made_before_versioning(backend):
    url = first_schema_database(backend)
    store = backend.store(url=url)
    assert versions(backend, url) == list(range(1, len(MIGRATIONS) + 1))
    assert store.answer_of("K7Q3XB", student(1), QUESTION, LATER) == "dog"


def test_replicas_opening_an_old_database_at_once_apply_each_migration_once(backend):
    url = first_schema_database(backend)
    start = threading.Barrier(4)

    def replica(_: int) -> Store:
        start.wait()
        return versioned_store(backend, url, (*MIGRATIONS, NEXT))  # ADD COLUMN twice would fail

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(replica, range(4)))
    assert versions(backend, url) == [*range(1, len(MIGRATIONS) + 1), NEXT.version]
    assert all(s.answer_of("K7Q3XB", student(1), QUESTION, LATER) == "dog" for s in stores)


def test_a_database_newer_than_the_code_is_refused(backend):
    url = backend.new_url()
    versioned_store(backend, url, (*MIGRATIONS, NEXT))
    with pytest.raises(SchemaTooNew, match=f"schema version {NEXT.version}.*up to {len(MIGRATIONS)}"):
        backend.store(url=url)


def test_migrations_are_numbered_in_order(tmp_path):
    with pytest.raises(ValueError, match="numbered"):
        SqliteRooms(tmp_path / "r.sqlite3", LIMITS, (NEXT,))
