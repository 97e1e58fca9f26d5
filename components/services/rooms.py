"""The live classes' room store (``bertlens.rooms.RoomStore``): a SQLite file for one server, PostgreSQL for replicas.

Both backends run the same SQL (``_SqlRooms``); each gives it a transaction of its own. Every method is one
transaction with parameterised queries. Writes lock before they read what they check: SQLite with ``BEGIN
IMMEDIATE`` (one writer on the file at a time, whichever process), PostgreSQL with ``SELECT … FOR UPDATE`` on the
room's row (one writer per room, whichever replica) and an advisory lock where the count of open rooms matters. So
no cap is passed by two students, tabs or replicas at once, and an upsert keeps one answer per student and question.

The schema is versioned: ``MIGRATIONS``, in order, each applied once, at a store's opening, in one transaction that
holds the store's schema lock (SQLite's write lock; a PostgreSQL advisory lock), and recorded in ``schema_version``.
So a newer BERT Lens brings an older database up to date however many replicas open it at once, and a database
newer than the code is refused rather than misread. A database made before the table existed has the first
migration's tables: that migration (``CREATE … IF NOT EXISTS``) finds them and records version 1.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import psycopg
from psycopg import Connection
from psycopg_pool import ConnectionPool, PoolTimeout

from bertlens.rooms import (
    CODE_LENGTH,
    LIMITS,
    Entry,
    NotHost,
    Room,
    RoomClosed,
    RoomError,
    RoomLimits,
    RoomStore,
    StoreUnavailable,
    Tally,
    clean_text,
    new_code,
    new_secret,
    normalise_code,
    ranked,
    secret_digest,
    secret_matches,
    storable,
    valid_student_id,
)

Param = str | int | float | bool | None
Row = tuple[Any, ...]

SQLITE_PREFIX = "sqlite:///"  # then the path: sqlite:////abs/rooms.sqlite3 (SQLAlchemy's form, bertlens.settings')
POSTGRES_PREFIXES = ("postgresql://", "postgres://")
WINDOW_SECONDS = 60.0  # a room's answers are counted per fixed minute (``RoomLimits.room_answers_per_minute``)
CODE_TRIES = 8  # new codes drawn when one is taken (with 200 rooms of 890 million codes, the second never is)
KEY_CHARS = 100  # a lesson, question or round key: the app's own names, not typed text
MAX_STEP = 2**31 - 1  # an INTEGER column on both backends
SQLITE_BUSY_SECONDS = 10.0  # busy_timeout: how long a write waits for another (each holds the file ~1 ms)
POSTGRES_CONNECTIONS = 4  # per replica: a call holds one for a few round trips
POSTGRES_WAIT_SECONDS = 10.0  # for a connection, at start and per call
# pg_advisory_xact_lock keys, this app's (any two numbers no other client of the database uses).
SCHEMA_LOCK = 0x62_6C_72_73_00
ROOMS_LOCK = 0x62_6C_72_73_01
CLIENT_LOCKS = 0x62_6C_72_73  # pg_advisory_xact_lock(int, int) keys, (this, a client's): apart from the bigint keys
CLIENT_KEY_CHARS = 64  # a client_key: SHA-256, hex


def _schema(real: str, serial: str) -> tuple[str, ...]:
    """The tables, in either backend's words for a float and an auto-numbered key. Children cascade from rooms; the
    primary keys lead with the code, so a room's rows (its tally, its deletion) are one index range."""
    return (
        f"""CREATE TABLE IF NOT EXISTS rooms (
            code TEXT PRIMARY KEY,
            host_digest TEXT NOT NULL,
            lesson TEXT NOT NULL,
            step INTEGER NOT NULL,
            opened_at {real} NOT NULL,
            window_start {real} NOT NULL,
            window_answers INTEGER NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS rooms_by_opened_at ON rooms (opened_at)",  # the open rooms' count, purge
        """CREATE TABLE IF NOT EXISTS revealed (
            code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            question TEXT NOT NULL,
            PRIMARY KEY (code, question)
        )""",
        f"""CREATE TABLE IF NOT EXISTS students (
            code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            student TEXT NOT NULL,
            joined_at {real} NOT NULL,
            last_answer_at {real},
            PRIMARY KEY (code, student)
        )""",
        f"""CREATE TABLE IF NOT EXISTS answers (
            code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            question TEXT NOT NULL,
            student TEXT NOT NULL,
            answer TEXT NOT NULL,
            at {real} NOT NULL,
            PRIMARY KEY (code, question, student)
        )""",
        f"""CREATE TABLE IF NOT EXISTS sentences (
            id {serial},
            code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            round_key TEXT NOT NULL,
            student TEXT NOT NULL,
            sentence TEXT NOT NULL,
            hidden BOOLEAN NOT NULL DEFAULT FALSE,
            at {real} NOT NULL,
            UNIQUE (code, round_key, student)
        )""",
    )


def _client_events(real: str) -> tuple[str, ...]:
    """What client addresses did, counted for the per-address limits: one row per code that opened no room and per
    room opened, under the address's ``client_key`` (a digest), each deleted once past ``RoomLimits.client_seconds``.
    Rows are added only within a limit, so an address has at most ``wrong_codes_per_client + wrong_links_per_client
    + rooms_per_client_hour``."""
    return (
        f"""CREATE TABLE IF NOT EXISTS client_events (
            client TEXT NOT NULL,
            kind TEXT NOT NULL,
            at {real} NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS client_events_by_client ON client_events (client, kind, at)",
        "CREATE INDEX IF NOT EXISTS client_events_by_at ON client_events (at)",  # purge
    )


TABLES = ("rooms", "revealed", "students", "answers", "sentences")  # a room's (each row has its code)
CLIENT_TABLE = "client_events"
WRONG_CODE, WRONG_LINK, OPENED_ROOM = "wrong code", "wrong link", "room"  # client_events.kind


@dataclass(frozen=True)
class Dialect:
    """A backend's words for a float and for an auto-numbered key."""

    real: str
    serial: str


SQLITE = Dialect("REAL", "INTEGER PRIMARY KEY AUTOINCREMENT")  # AUTOINCREMENT: ids never reused
POSTGRES = Dialect("DOUBLE PRECISION", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")


@dataclass(frozen=True)
class Migration:
    """One change of the schema, applied once and recorded as ``version``. A new one goes at the end of
    ``MIGRATIONS`` with the next number, never edits an earlier one (databases have applied those), and leaves the
    previous release able to run on its result (replicas are upgraded one at a time)."""

    version: int
    what: str
    statements: Callable[[Dialect], tuple[str, ...]]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "rooms, revealed questions, students, answers and sentences", lambda d: _schema(d.real, d.serial)),
    Migration(
        2, "what client addresses did: codes that opened no room, rooms opened", lambda d: _client_events(d.real)
    ),
)
SCHEMA_TABLE = "schema_version"


class SchemaTooNew(RuntimeError):
    """The database was brought to a schema version this code does not know (a newer BERT Lens opened it)."""


def migrate(tx: _Transaction, dialect: Dialect, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply, in order, the migrations the database lacks, recording each; the version it is at. The caller holds
    the schema lock for the transaction."""
    if [m.version for m in migrations] != list(range(1, len(migrations) + 1)):
        raise ValueError("migrations are numbered 1, 2, 3, … in order")
    tx.run(
        f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version INTEGER PRIMARY KEY, what TEXT NOT NULL, "
        f"applied_at {dialect.real} NOT NULL)"
    )
    current = tx.count(f"SELECT coalesce(max(version), 0) FROM {SCHEMA_TABLE}")
    if current > len(migrations):
        raise SchemaTooNew(
            f"The live classes' database is at schema version {current}; this BERT Lens knows versions up to "
            f"{len(migrations)}. Run the newer BERT Lens that upgraded it, or another database."
        )
    for migration in migrations[current:]:
        for statement in migration.statements(dialect):
            tx.run(statement)
        tx.run(
            f"INSERT INTO {SCHEMA_TABLE} (version, what, applied_at) VALUES (?, ?, ?)",
            migration.version,
            migration.what,
            time.time(),
        )
    return len(migrations)


class _Transaction:
    """One open transaction; SQL with ``?`` placeholders, parameters passed apart."""

    for_update = ""  # what a write's SELECT of its room adds to lock the row ("" where the whole store is locked)

    def rows(self, sql: str, *params: Param) -> list[Row]:
        raise NotImplementedError

    def run(self, sql: str, *params: Param) -> int:
        """How many rows the statement changed."""
        raise NotImplementedError

    def lock_rooms(self) -> None:
        """Wait for, then hold until commit, the store's lock on opening and purging rooms (the open rooms' count)."""

    def lock_schema(self) -> None:
        """Wait for, then hold until commit, the store's lock on its schema (``migrate``)."""

    def lock_client(self, client: str) -> None:
        """Wait for, then hold until commit, the store's lock on what ``client`` did (its per-address counts)."""

    def row(self, sql: str, *params: Param) -> Row | None:
        found = self.rows(sql, *params)
        return found[0] if found else None

    def count(self, sql: str, *params: Param) -> int:
        found = self.row(sql, *params)
        assert found is not None, sql  # an aggregate without GROUP BY always returns a row
        return int(found[0])


@dataclass(frozen=True)
class _RoomRow:
    code: str
    host_digest: str
    lesson: str
    step: int
    opened_at: float
    window_start: float
    window_answers: int


ROOM_COLUMNS = "code, host_digest, lesson, step, opened_at, window_start, window_answers"


def _key(raw: str, what: str) -> str:
    if not (isinstance(raw, str) and 0 < len(raw) <= KEY_CHARS and storable(raw)):
        raise RoomError(f"A {what} is named by 1 to {KEY_CHARS} characters, none of them a control character.")
    return raw


def _step(step: int) -> int:
    if not (isinstance(step, int) and 1 <= step <= MAX_STEP):
        raise RoomError("A lesson's step is a whole number from 1.")
    return step


def _client(raw: str | None) -> str | None:
    if raw is not None and not (len(raw) == CLIENT_KEY_CHARS and all(ch in "0123456789abcdef" for ch in raw)):
        raise RoomError("A client is counted by its address's digest (bertlens.rooms.client_key), not by the address.")
    return raw


def _student(raw: str) -> str:
    if not valid_student_id(raw):
        raise RoomError("This tab's student id is not valid: reload the page to get a new one.")
    return raw


class _SqlRooms:
    """Every ``RoomStore`` method, written once; a backend gives ``_transaction``."""

    limits: RoomLimits

    def _transaction(self, write: bool) -> AbstractContextManager[_Transaction]:
        raise NotImplementedError

    # Reading a room and checking its host.

    def _code(self, raw: str) -> str:
        """The canonical code, or ``RoomClosed`` before any query when it cannot be one."""
        code = normalise_code(raw)
        if code is None:
            shown = "".join(filter(str.isalnum, str(raw).upper()))[:12]  # no markup of the raw text in the message
            raise RoomClosed(shown or "given", self.limits.room_hours)
        return code

    def _open(self, tx: _Transaction, code: str, now: float, lock: bool = False) -> _RoomRow:
        """The room's row (locked for the transaction's writes when ``lock``); ``RoomClosed`` when past its time."""
        found = self._open_or_none(tx, code, now, lock)
        if found is None:
            raise RoomClosed(code, self.limits.room_hours)
        return found

    def _open_or_none(self, tx: _Transaction, code: str, now: float, lock: bool = False) -> _RoomRow | None:
        found = tx.row(
            f"SELECT {ROOM_COLUMNS} FROM rooms WHERE code = ? AND opened_at > ?{tx.for_update if lock else ''}",
            code,
            self._cutoff(now),
        )
        return None if found is None else _RoomRow(*found)

    def _client_did(self, tx: _Transaction, client: str, kind: str, seconds: float, now: float) -> int:
        """How often ``client`` did ``kind`` in the last ``seconds`` (its older rows of that kind deleted), its counts
        locked until the transaction ends."""
        tx.lock_client(client)
        tx.run("DELETE FROM client_events WHERE client = ? AND kind = ? AND at <= ?", client, kind, now - seconds)
        return tx.count("SELECT count(*) FROM client_events WHERE client = ? AND kind = ?", client, kind)

    def _count_client(self, tx: _Transaction, client: str, kind: str, now: float) -> None:
        tx.run("INSERT INTO client_events (client, kind, at) VALUES (?, ?, ?)", client, kind, now)

    def _hosted(self, tx: _Transaction, code: str, secret: str | None, now: float) -> _RoomRow:
        row = self._open(tx, code, now, lock=True)
        if not secret_matches(secret, row.host_digest):
            raise NotHost()
        return row

    def _cutoff(self, now: float) -> float:
        """Rooms opened at or before this are past their time."""
        return now - self.limits.room_seconds

    def _room(self, tx: _Transaction, row: _RoomRow) -> Room:
        revealed = frozenset(
            str(question) for (question,) in tx.rows("SELECT question FROM revealed WHERE code = ?", row.code)
        )
        students = tx.count("SELECT count(*) FROM students WHERE code = ?", row.code)
        return Room(row.code, row.lesson, row.step, revealed, row.opened_at, students)

    def _admit_answer(self, tx: _Transaction, code: str, student: str, now: float) -> None:
        """Lock the room, check that ``student`` has joined and that neither they nor the room answer faster than
        ``limits`` allow, and count this answer (or sentence) in both rates."""
        row = self._open(tx, code, now, lock=True)
        found = tx.row("SELECT last_answer_at FROM students WHERE code = ? AND student = ?", code, student)
        if found is None:
            raise RoomError("Join the room first: this tab is not one of its students.")
        seconds = self.limits.answer_seconds
        if found[0] is not None and now - float(found[0]) < seconds:
            raise RoomError(f"You can send at most one answer every {seconds:g} s: wait a moment and send it again.")
        window_start, window_answers = (
            (row.window_start, row.window_answers) if now - row.window_start < WINDOW_SECONDS else (now, 0)
        )
        per_minute = self.limits.room_answers_per_minute
        if window_answers >= per_minute:
            raise RoomError(
                f"This room takes at most {per_minute} answers a minute and has had them: send yours again in a few "
                "seconds."
            )
        tx.run(
            "UPDATE rooms SET window_start = ?, window_answers = ? WHERE code = ?",
            window_start,
            window_answers + 1,
            code,
        )
        tx.run("UPDATE students SET last_answer_at = ? WHERE code = ? AND student = ?", now, code, student)

    # The RoomStore methods.

    def open_room(self, lesson: str, step: int, now: float, client: str | None = None) -> tuple[Room, str]:
        lesson, step, client = _key(lesson, "lesson"), _step(step), _client(client)
        secret = new_secret()
        with self._transaction(write=True) as tx:
            tx.lock_rooms()
            per_client = self.limits.rooms_per_client_hour
            if client is not None and self._client_did(tx, client, OPENED_ROOM, 3600, now) >= per_client:
                raise RoomError(
                    f"At most {per_client} live classes an hour can be opened from one network address, and this "
                    "one has opened them all: use a room already open, or try again later."
                )
            limit = self.limits.max_open_rooms
            if tx.count("SELECT count(*) FROM rooms WHERE opened_at > ?", self._cutoff(now)) >= limit:
                raise RoomError(
                    f"This server holds at most {limit} open rooms and has them all: close a room you no longer use, "
                    "or try again later."
                )
            for _ in range(CODE_TRIES):
                code = new_code()
                inserted = tx.run(
                    f"INSERT INTO rooms ({ROOM_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT (code) DO NOTHING",
                    code,
                    secret_digest(secret),
                    lesson,
                    step,
                    now,
                    now,
                )
                if inserted:
                    if client is not None:
                        self._count_client(tx, client, OPENED_ROOM, now)
                    return Room(code, lesson, step, frozenset(), now, 0), secret
        raise RoomError("No free room code came up: open the room again.")

    def room(self, code: str, now: float) -> Room:
        code = self._code(code)
        with self._transaction(write=False) as tx:
            return self._room(tx, self._open(tx, code, now))

    def find_room(self, typed: str, client: str | None, now: float, by_link: bool = False) -> Room:
        code, client = normalise_code(typed), _client(client)
        kind, limit = (WRONG_LINK, self.limits.wrong_links_per_client) if by_link else (
            WRONG_CODE, self.limits.wrong_codes_per_client)  # fmt: skip
        minutes = self.limits.wrong_codes_minutes
        with self._transaction(write=client is not None) as tx:
            if client is not None and self._client_did(tx, client, kind, minutes * 60, now) >= limit:
                what, check = ("class links", "ask for the link") if by_link else ("codes", "check the code")
                raise RoomError(
                    f"Too many {what} that open no room from your network address: at most {limit} in {minutes:g} "
                    f"minutes. Wait a few minutes, and {check} on the projector."
                )
            found = self._open_or_none(tx, code, now) if code else None
            if found is not None:
                return self._room(tx, found)
            if client is not None:
                self._count_client(tx, client, kind, now)  # kept: the refusal below comes after the commit
        if code is None:
            raise RoomError(f"A room code has {CODE_LENGTH} letters and digits, as the projector shows it.")
        raise RoomClosed(code, self.limits.room_hours)

    def is_host(self, code: str, secret: str | None, now: float) -> bool:
        code = self._code(code)
        with self._transaction(write=False) as tx:
            return secret_matches(secret, self._open(tx, code, now).host_digest)

    def steer(self, code: str, secret: str | None, lesson: str, step: int, now: float) -> Room:
        code, lesson, step = self._code(code), _key(lesson, "lesson"), _step(step)
        with self._transaction(write=True) as tx:
            row = self._hosted(tx, code, secret, now)
            tx.run("UPDATE rooms SET lesson = ?, step = ? WHERE code = ?", lesson, step, code)
            return self._room(tx, replace(row, lesson=lesson, step=step))

    def reveal(self, code: str, secret: str | None, question: str, now: float) -> Room:
        code, question = self._code(code), _key(question, "question")
        with self._transaction(write=True) as tx:
            row = self._hosted(tx, code, secret, now)
            tx.run("INSERT INTO revealed (code, question) VALUES (?, ?) ON CONFLICT DO NOTHING", code, question)
            return self._room(tx, row)

    def close(self, code: str, secret: str | None, now: float) -> None:
        code = self._code(code)
        with self._transaction(write=True) as tx:
            self._hosted(tx, code, secret, now)
            tx.run("DELETE FROM rooms WHERE code = ?", code)

    def join(self, code: str, student: str, now: float) -> Room:
        code, student = self._code(code), _student(student)
        with self._transaction(write=True) as tx:
            row = self._open(tx, code, now, lock=True)
            if tx.row("SELECT 1 FROM students WHERE code = ? AND student = ?", code, student) is None:
                limit = self.limits.max_students
                if tx.count("SELECT count(*) FROM students WHERE code = ?", code) >= limit:
                    raise RoomError(f"This room is full: it takes at most {limit} students.")
                tx.run("INSERT INTO students (code, student, joined_at) VALUES (?, ?, ?)", code, student, now)
            return self._room(tx, row)

    def answer(self, code: str, student: str, question: str, answer: str, now: float) -> None:
        code, student, question = self._code(code), _student(student), _key(question, "question")
        text = clean_text(answer, self.limits.max_answer_chars, "an answer")
        with self._transaction(write=True) as tx:
            self._admit_answer(tx, code, student, now)
            tx.run(
                "INSERT INTO answers (code, question, student, answer, at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (code, question, student) DO UPDATE SET answer = excluded.answer, at = excluded.at",
                code,
                question,
                student,
                text,
                now,
            )

    def answer_of(self, code: str, student: str, question: str, now: float) -> str | None:
        code, student, question = self._code(code), _student(student), _key(question, "question")
        with self._transaction(write=False) as tx:
            self._open(tx, code, now)
            found = tx.row(
                "SELECT answer FROM answers WHERE code = ? AND question = ? AND student = ?", code, question, student
            )
            return None if found is None else str(found[0])

    def tally(self, code: str, question: str, now: float) -> Tally:
        code, question = self._code(code), _key(question, "question")
        with self._transaction(write=False) as tx:
            self._open(tx, code, now)
            rows = tx.rows(
                "SELECT answer, count(*) FROM answers WHERE code = ? AND question = ? GROUP BY answer", code, question
            )
        return ranked({str(answer): int(count) for answer, count in rows})

    def add_sentence(self, code: str, student: str, round_key: str, sentence: str, now: float) -> None:
        """A replaced sentence keeps its place and, if the teacher hid it, stays hidden (resending is no way back
        onto the projector)."""
        code, student, round_key = self._code(code), _student(student), _key(round_key, "round")
        text = clean_text(sentence, self.limits.max_sentence_chars, "a sentence")
        with self._transaction(write=True) as tx:
            self._admit_answer(tx, code, student, now)
            tx.run(
                "INSERT INTO sentences (code, round_key, student, sentence, at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (code, round_key, student) DO UPDATE SET sentence = excluded.sentence, at = excluded.at",
                code,
                round_key,
                student,
                text,
                now,
            )

    def sentence_of(self, code: str, student: str, round_key: str, now: float) -> str | None:
        code, student, round_key = self._code(code), _student(student), _key(round_key, "round")
        with self._transaction(write=False) as tx:
            self._open(tx, code, now)
            found = tx.row(
                "SELECT sentence FROM sentences WHERE code = ? AND round_key = ? AND student = ?",
                code,
                round_key,
                student,
            )
            return None if found is None else str(found[0])

    def sentences(self, code: str, round_key: str, now: float, with_hidden: bool = False) -> tuple[Entry, ...]:
        code, round_key = self._code(code), _key(round_key, "round")
        with self._transaction(write=False) as tx:
            self._open(tx, code, now)
            rows = tx.rows(
                "SELECT id, sentence, hidden FROM sentences WHERE code = ? AND round_key = ? AND (? OR NOT hidden) "
                "ORDER BY id",
                code,
                round_key,
                with_hidden,
            )
        return tuple(Entry(int(entry), str(sentence), bool(hidden)) for entry, sentence, hidden in rows)

    def hide(self, code: str, secret: str | None, entry: int, hidden: bool, now: float) -> None:
        code = self._code(code)
        with self._transaction(write=True) as tx:
            self._hosted(tx, code, secret, now)
            if not tx.run("UPDATE sentences SET hidden = ? WHERE id = ? AND code = ?", bool(hidden), int(entry), code):
                raise RoomError("That sentence is not in this room.")

    def purge(self, now: float) -> int:
        with self._transaction(write=True) as tx:
            tx.lock_rooms()
            tx.run("DELETE FROM client_events WHERE at <= ?", now - self.limits.client_seconds)
            return tx.run("DELETE FROM rooms WHERE opened_at <= ?", self._cutoff(now))


# SQLite: one server, any number of threads and processes on one file.


class _SqliteTransaction(_Transaction):
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def rows(self, sql: str, *params: Param) -> list[Row]:
        return self._connection.execute(sql, params).fetchall()

    def run(self, sql: str, *params: Param) -> int:
        return self._connection.execute(sql, params).rowcount


class SqliteRooms(_SqlRooms):
    """Rooms in a SQLite file (WAL: readers never wait for the writer). A connection per call, so any thread or
    process may call; a write holds the file's one write lock (``BEGIN IMMEDIATE``) for its whole transaction and
    others wait up to ``SQLITE_BUSY_SECONDS``. The file must be on a local disk (WAL shares memory between the
    processes), so this store serves one machine: replicas need ``PostgresRooms``."""

    def __init__(
        self, path: str | Path, limits: RoomLimits = LIMITS, migrations: Sequence[Migration] = MIGRATIONS
    ) -> None:
        if str(path) in ("", ":memory:"):
            raise ValueError("SqliteRooms needs a file: an in-memory database would be a new, empty one per call.")
        self.path = Path(path)
        self.limits = limits
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._use_wal()
        with self._transaction(write=True) as tx:  # BEGIN IMMEDIATE: the file's one writer, the schema's lock
            migrate(tx, SQLITE, migrations)

    def _use_wal(self) -> None:
        """The file in WAL mode (kept in the file). Switching needs the file to itself and, unlike a transaction,
        does not wait for it: stores starting at once try again until ``SQLITE_BUSY_SECONDS`` have passed."""
        deadline = time.monotonic() + SQLITE_BUSY_SECONDS
        while True:
            try:
                with closing(self._connect()) as connection:
                    connection.execute("PRAGMA journal_mode = WAL")
                    return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
            time.sleep(0.01)

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions, the BEGIN below is the only one.
        connection = sqlite3.connect(self.path, timeout=SQLITE_BUSY_SECONDS, isolation_level=None)
        connection.execute("PRAGMA foreign_keys = ON")  # per connection: the cascades
        connection.execute("PRAGMA synchronous = NORMAL")  # WAL's safe setting: a power cut loses the last commits only
        return connection

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[_Transaction]:
        try:
            with closing(self._connect()) as connection:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield _SqliteTransaction(connection)
                except BaseException:
                    if connection.in_transaction:  # SQLite ends it itself after some errors
                        connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
        except sqlite3.Error as error:  # busy past the wait, a disk that failed: said, not a traceback
            raise StoreUnavailable from error

    def disconnect(self) -> None:
        """Nothing held between calls."""


# PostgreSQL: every replica of the app on one database.


@cache
def _postgres_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the statements hold no other ``?`` and no ``%``)."""
    assert "%" not in sql, sql
    return sql.replace("?", "%s")


class _PostgresTransaction(_Transaction):
    for_update = " FOR UPDATE"

    def __init__(self, connection: Connection[Row]) -> None:
        self._connection = connection

    def rows(self, sql: str, *params: Param) -> list[Row]:
        return self._connection.execute(_postgres_sql(sql), params).fetchall()

    def run(self, sql: str, *params: Param) -> int:
        return self._connection.execute(_postgres_sql(sql), params).rowcount

    def lock_rooms(self) -> None:
        self._connection.execute("SELECT pg_advisory_xact_lock(%s)", (ROOMS_LOCK,))

    def lock_schema(self) -> None:
        # Two replicas starting at once: CREATE … IF NOT EXISTS alone can still collide in the catalogue.
        self._connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))

    def lock_client(self, client: str) -> None:
        # Two replicas counting one address at once: neither passes its limit for the other. 28 bits of the digest.
        self._connection.execute("SELECT pg_advisory_xact_lock(%s, %s)", (CLIENT_LOCKS, int(client[:7], 16)))


class PostgresRooms(_SqlRooms):
    """Rooms in a PostgreSQL database that every replica shares: a few pooled connections per replica (checked
    before use, so a restarted server costs no call), a write locks its room's row, reads are one snapshot."""

    def __init__(self, dsn: str, limits: RoomLimits = LIMITS, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.limits = limits
        self._pool: ConnectionPool[Connection[Row]] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=POSTGRES_CONNECTIONS,
            kwargs={"autocommit": True, "client_encoding": "utf8"},  # transactions are explicit, below
            check=ConnectionPool.check_connection,
            timeout=POSTGRES_WAIT_SECONDS,
            name="bertlens-rooms",
            open=False,
        )
        self._pool.open(wait=True, timeout=POSTGRES_WAIT_SECONDS)  # a wrong DSN fails here, not at a student's call
        try:
            with self._pool.connection() as connection, connection.transaction():
                tx = _PostgresTransaction(connection)
                tx.lock_schema()
                migrate(tx, POSTGRES, migrations)
        except BaseException:
            self._pool.close()
            raise

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[_Transaction]:
        try:
            with self._pool.connection() as connection, connection.transaction():
                if not write:
                    connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield _PostgresTransaction(connection)
        except (psycopg.Error, PoolTimeout) as error:  # the database down or out of connections: said, not a traceback
            raise StoreUnavailable from error

    def disconnect(self) -> None:
        """The pool's connections closed: the store is used no more."""
        self._pool.close()


def open_store(url: str, limits: RoomLimits = LIMITS) -> RoomStore:
    """The store ``url`` names: ``sqlite:///`` and a path (``sqlite:////abs/rooms.sqlite3``) or a plain path →
    ``SqliteRooms``; ``postgresql://…`` or ``postgres://…`` → ``PostgresRooms``."""
    if url.startswith(POSTGRES_PREFIXES):
        return PostgresRooms(url, limits)
    if url.startswith(SQLITE_PREFIX) and url != SQLITE_PREFIX:
        return SqliteRooms(url[len(SQLITE_PREFIX) :], limits)
    if url and "://" not in url:
        return SqliteRooms(url, limits)
    raise ValueError(
        f"No room store for {url[:60]!r}. Accepted: sqlite:/// followed by a path (sqlite:////abs/rooms.sqlite3), "
        "a plain file path, or a postgresql:// (postgres://) URL."
    )
