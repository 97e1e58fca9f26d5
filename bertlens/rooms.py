"""A live class's room: its code, its host secret, its limits and what the store keeps of it (no I/O here).

A teacher opens a room; students join it by its code (``…/?room=CODE``) as anonymous random ids kept in their tab.
The room holds the step the teacher shows, the questions revealed, one answer per student and question (a second
replaces the first) and, for a Word senses round, one sentence per student. Whatever changes what others see
(steer, reveal, hide, close) needs the room's host secret: random, 256 bits, kept by the store only as a digest and
compared in constant time. Every cap is a ``RoomLimits`` field, and ``RoomError``'s message names the one hit.

The stores (``components.services.rooms``: SQLite for one server, PostgreSQL across replicas) implement
``RoomStore``: each call is one transaction with parameterised queries, and the limits hold across replicas since
the store, not a process, counts.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

# Easy to read aloud and to type: no 0/O, 1/I/L (codes are shown and read in capitals).
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6  # 31⁶ ≈ 890 million codes: a guess finds an open room about once in millions of tries
STUDENT_ID_CHARS = 16  # hex: 64 random bits, a tab's anonymous id


@dataclass(frozen=True)
class RoomLimits:
    """What one room, one student and one server may hold or do; every cap a message can name."""

    max_students: int = 100  # per room
    max_open_rooms: int = 200  # per store (every replica's)
    # An answer as stored: a typed word or one of a question's choices (the longest, a Padding lab sentence, has 106).
    max_answer_chars: int = 120
    max_sentence_chars: int = 200  # a Word senses sentence
    room_hours: float = 24.0  # a room and everything in it are deleted this long after it opened
    answer_seconds: float = 1.0  # a student's answers: at most one this often (a person cannot answer faster)
    room_answers_per_minute: int = 600  # every answer of one room together (100 students, 6 a minute each)
    join_guesses_per_minute: int = 10  # codes that open no room, per tab (a code is not guessed by trying)
    rooms_per_tab_hour: int = 3  # rooms one tab opens (200 rooms are every replica's: one tab cannot take them all)
    # Per client address, whatever its tabs and sessions (a fresh session starts the per-tab counts afresh); as
    # generous as a whole class behind one school NAT needs: 30 students each mistyping a code once, 20 teachers.
    wrong_codes_per_client: int = 30  # codes typed that open no room, per address ...
    wrong_codes_minutes: float = 10.0  # ... within this many minutes (and for the links below)
    # Class links whose room is not open: a class reloading its ended room's link spends 30 at once, and must not keep
    # the next class of its school out of that school's new room; a script trying codes by link still meets a limit.
    wrong_links_per_client: int = 200
    rooms_per_client_hour: int = 20  # rooms opened per address within an hour

    @property
    def client_seconds(self) -> float:
        """How long the store keeps what a client address did: the longer of its two windows."""
        return max(self.wrong_codes_minutes * 60, 3600.0)

    @property
    def room_seconds(self) -> float:
        return self.room_hours * 3600


LIMITS = RoomLimits()


class RoomError(Exception):
    """A refused room action; its message is for the person who tried it and names the limit or the reason."""


class NotHost(RoomError):
    """Steering, revealing, hiding or closing without the room's host secret."""

    def __init__(self) -> None:
        super().__init__("Only the teacher who opened this room can do that (this browser has not its host key).")


class StoreUnavailable(RoomError):
    """The store failed (a database that is down, or busy past its wait): nothing was changed."""

    def __init__(self) -> None:
        super().__init__("The live class's store cannot be reached just now: nothing was saved. Try again in a moment.")


class RoomClosed(RoomError):
    """A code that opens no room: never opened, closed by its teacher or past its time."""

    def __init__(self, code: str, hours: float = LIMITS.room_hours) -> None:
        super().__init__(f"No open room has the code {code}: it may have been closed or be over {hours:g} hours old.")


@dataclass(frozen=True)
class Room:
    """What every member of a room reads: the lesson step the teacher shows and the questions revealed."""

    code: str
    lesson: str
    step: int  # 1-based, as in the URL
    revealed: frozenset[str] = field(default_factory=frozenset)  # question keys
    opened_at: float = 0.0  # seconds since the epoch
    students: int = 0


@dataclass(frozen=True)
class Tally:
    """A question's answers in a room: how many answered, and each distinct answer's count, most first."""

    answered: int
    counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Entry:
    """A student's sentence in a Word senses round; ``hidden`` by the teacher from the projector."""

    id: int
    sentence: str
    hidden: bool


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(raw: str | None) -> str | None:
    """A code as typed or linked ("ab3-k7q", " AB3K7Q ") in its canonical form; None when it cannot be one."""
    if raw is None:
        return None
    code = "".join(ch for ch in raw.upper() if ch not in " -")
    return code if len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code) else None


def new_secret() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def secret_digest(secret: str) -> str:
    """What the store keeps of a host secret: never the secret itself."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str | None, digest: str) -> bool:
    """Constant time in the secret's content."""
    return secret is not None and hmac.compare_digest(secret_digest(secret), digest)


def client_address(ip_address: str | None, forwarded_for: list[str], trust_forwarded_for: bool) -> str | None:
    """The address a request came from: behind a proxy that sets ``X-Forwarded-For`` itself (``trust_forwarded_for``),
    the last address that header lists (the one the proxy saw; a client can write any before it); otherwise the
    connection's. None when unknown (a local connection, or a header that lists no address)."""
    if not trust_forwarded_for:
        return ip_address
    listed = [part.strip() for value in forwarded_for for part in value.split(",") if part.strip()]
    return listed[-1] if listed else None


def client_key(address: str | None) -> str | None:
    """What the store keeps of a client address to count what it does: a SHA-256 digest, of the whole IPv4
    address or of an IPv6 address's /64 network (one household or school network's, which its devices draw new
    addresses from). None when ``address`` is not an IP address: then nothing is counted per client."""
    try:
        parsed = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address):
        mapped = parsed.ipv4_mapped
        network = str(mapped) if mapped else str(ipaddress.IPv6Network((parsed, 64), strict=False))
    else:
        network = str(parsed)
    return hashlib.sha256(f"bertlens-client:{network}".encode()).hexdigest()


def new_student_id() -> str:
    return secrets.token_hex(STUDENT_ID_CHARS // 2)


def valid_student_id(raw: str | None) -> bool:
    return raw is not None and len(raw) == STUDENT_ID_CHARS and all(ch in "0123456789abcdef" for ch in raw)


def storable(text: str) -> bool:
    """Whether both stores keep ``text`` as it is: no control character (NUL among them, which PostgreSQL cannot
    store) and no half of a surrogate pair (which has no UTF-8)."""
    return not any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text)


def clean_text(raw: str, limit: int, what: str) -> str:
    """A typed answer or sentence as stored: normalised (NFC), one line, stripped, at most ``limit`` characters;
    a ``RoomError`` naming the limit when longer, or when empty or not ``storable``."""
    text = " ".join(unicodedata.normalize("NFC", raw).split())
    if not text:
        raise RoomError(f"Type {what} first.")
    if not storable(text):
        raise RoomError(f"{what.capitalize()} cannot hold control characters.")
    if len(text) > limit:
        raise RoomError(f"{what.capitalize()} can be at most {limit} characters long (this one has {len(text)}).")
    return text


def answer_form(raw: str, choices: tuple[str, ...], limit: int) -> str:
    """An answer as counted: one of the question's ``choices`` exactly, or a typed word, lower-cased (BERT's
    uncased vocabulary: "Dog" and "dog" are one answer)."""
    if choices:
        if raw not in choices:
            raise RoomError("That answer is not one of this question's choices.")
        return raw
    return clean_text(raw, limit, "a word").lower()


def tally(answers: Iterable[str]) -> Tally:
    """Answers counted (for tests and the reference; the stores count in one query)."""
    counts: dict[str, int] = {}
    for answer in answers:
        counts[answer] = counts.get(answer, 0) + 1
    return ranked(counts)


def ranked(counts: Mapping[str, int]) -> Tally:
    """Each answer's count, most first, ties in code-point order (the same on every backend, whatever its collation)."""
    return Tally(sum(counts.values()), tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))))


class RoomStore(Protocol):
    """Where rooms live. Every method is one transaction; ``now`` is seconds since the epoch (a parameter, so tests
    move time). Methods taking ``secret`` raise ``NotHost`` without the right one and change nothing; every method
    on a code raises ``RoomClosed`` when no open room has it (closed or older than ``limits.room_hours``)."""

    limits: RoomLimits

    def open_room(self, lesson: str, step: int, now: float, client: str | None = None) -> tuple[Room, str]:
        """A new room at ``lesson``'s ``step`` and its host secret (returned once, never stored); counted against
        ``client`` (a ``client_key``; None: not counted), refused past ``limits.rooms_per_client_hour``."""
        ...

    def room(self, code: str, now: float) -> Room: ...

    def find_room(self, typed: str, client: str | None, now: float, by_link: bool = False) -> Room:
        """The open room a code typed to join names (case, spaces and dashes ignored), or a class link's
        (``by_link``). A code that opens no room counts against ``client`` (a ``client_key``; None: not counted);
        past ``limits.wrong_codes_per_client`` typed (``limits.wrong_links_per_client`` by link) within
        ``limits.wrong_codes_minutes``, every code from it that way is refused, a right one too."""
        ...

    def is_host(self, code: str, secret: str | None, now: float) -> bool: ...

    def steer(self, code: str, secret: str | None, lesson: str, step: int, now: float) -> Room:
        """The room's lesson and step, as the teacher's Back/Next moved them."""
        ...

    def reveal(self, code: str, secret: str | None, question: str, now: float) -> Room: ...

    def close(self, code: str, secret: str | None, now: float) -> None:
        """The room and everything in it, deleted."""
        ...

    def join(self, code: str, student: str, now: float) -> Room:
        """``student`` counted in the room (again: nothing changes); ``RoomError`` when it is full."""
        ...

    def answer(self, code: str, student: str, question: str, answer: str, now: float) -> None:
        """Stored (replacing the student's earlier answer to ``question``) before this returns; ``RoomError`` when
        the student or the room answers faster than ``limits`` allow, or the student has not joined."""
        ...

    def answer_of(self, code: str, student: str, question: str, now: float) -> str | None: ...

    def tally(self, code: str, question: str, now: float) -> Tally:
        """One aggregate query."""
        ...

    def add_sentence(self, code: str, student: str, round_key: str, sentence: str, now: float) -> None:
        """A student's sentence for a Word senses round (replacing their earlier one), rate-limited as answers."""
        ...

    def sentence_of(self, code: str, student: str, round_key: str, now: float) -> str | None:
        """The student's sentence for the round (their last), hidden or not: a student whose sentence the teacher
        hid still finds it in their box (the map says it is hidden); None when they have sent none."""
        ...

    def sentences(self, code: str, round_key: str, now: float, with_hidden: bool = False) -> tuple[Entry, ...]:
        """In the order given."""
        ...

    def hide(self, code: str, secret: str | None, entry: int, hidden: bool, now: float) -> None: ...

    def purge(self, now: float) -> int:
        """Rooms older than ``limits.room_hours`` deleted with everything in them, and what client addresses did
        longer ago than ``limits.client_seconds``; how many rooms."""
        ...
