"""The class, simulated: S browser sessions on one link, each typing distinct inputs on page after page.

Each session is a browser tab speaking Streamlit's protocol (``scripts/streamlit_client.py``). It
opens a page and, for each of its inputs (distinct texts of 20–512 tokens), moves to the next page
(tokenizer, anatomy, fill_mask, next_sentence, attention, senses in turn) and types the input there.
One more session stays in the Tokenizer page's Padding lab throughout (max_length 8, truncation on),
typing new lines while the others work: padding a batch sets state on the shared tokenizer.

Every run is recorded (``Recorder``: an ``Observation`` each) for the checks (``scripts/class_checks.py``).
Used by ``scripts/class_load.py`` (one server) and ``scripts/scale_benchmark.py`` (replicas behind HAProxy).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bertlens.budgets import default_budgets
from bertlens.pages import TOOL_PAGES
from scripts.streamlit_client import Run, Session, run_to_end

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

PAGES = TOOL_PAGES  # every page that shows the model, in the registry's order
LENGTHS = (20, 48, 128, 300, 512)  # tokens per input, [CLS]/[SEP] included (before the cap)
WORDS = ("the students read a short story about a quiet village near the river and then wrote "
         "notes on how every word changes its meaning with context in class today").split()  # fmt: skip
SENSE_WORD = "field"  # the word-senses page's default preset follows "field": every input has it
PAD_LENGTH = 8
LAB_LINES = default_budgets(hosted=True).lab_lines  # as many lines as the Padding lab reads, hosted or not
PAD_QUERY = f"tokenizer_tab=Padding+lab&pad=max_length&pad_len={PAD_LENGTH}&trunc=true"
# The tab that shows what is checked, where it is not the page's first tab.
PAGE_QUERY = {"anatomy": "anatomy_tab=Embeddings", "senses": "senses_tab=Similarity"}
PADDING_LAB = "tokenizer (Padding lab)"


# --- the inputs ----------------------------------------------------------------------------------


def input_text(tokenizer: PreTrainedTokenizerBase, session: int, step: int, tokens: int, rng: random.Random) -> str:
    """A distinct text of ``tokens`` tokens (specials included) with the model's own mask token ("[MASK]", "<mask>")
    and "field" among the first 12."""
    prefix = f"Lesson {session} part {step}: the {tokenizer.mask_token} ran across the {SENSE_WORD} and"
    used = len(tokenizer(prefix)["input_ids"]) + 1  # the final "."
    words = one_token_words(tokenizer)
    filler = [rng.choice(words) for _ in range(max(0, tokens - used))]
    text = " ".join([prefix, *filler]) + "."
    assert len(tokenizer(text)["input_ids"]) == max(tokens, used), (tokens, text)
    return text


def one_token_words(tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """The WORDS that are one token each after a space (all of them in BERT's WordPiece vocabulary; a few in the small
    offline tokenizers of ``bertlens.synthetic``)."""
    words = [w for w in WORDS if len(tokenizer(f" {w}", add_special_tokens=False)["input_ids"]) == 1]
    assert words, "no filler word is a single token for this tokenizer"
    return words


def padding_lines(number: int) -> str:
    """The Padding lab's batch, different each time: a short line and LAB_LINES - 1 long ones (cut to
    PAD_LENGTH). Long lines keep the shared tokenizer busy, set to truncate at 8, for longer."""
    long = " ".join(WORDS * 3)
    return "\n".join([f"Short {number}.", *(f"Round {number} line {i}: {long}" for i in range(1, LAB_LINES))])


@dataclass(frozen=True)
class Step:
    page: str
    text: str


def plans(tokenizer: PreTrainedTokenizerBase, sessions: int, inputs: int, seed: int) -> list[list[Step]]:
    """Each session's steps: the next page and a new text of one of LENGTHS tokens."""
    rng = random.Random(seed)
    return [
        [Step(PAGES[(number + step) % len(PAGES)],
              input_text(tokenizer, number, step, LENGTHS[(number * 7 + step) % len(LENGTHS)], rng))
         for step in range(inputs)]
        for number in range(sessions)
    ]  # fmt: skip


# --- the burst -----------------------------------------------------------------------------------


@dataclass
class Observation:
    """One script run one session asked for: what it was, how long it took, what the server drew."""

    session: int
    page: str  # a PAGES entry or PADDING_LAB
    kind: str  # "open" (first load), "switch" (page change, same inputs) or "typed" (a new input)
    seconds: float
    typed: str | None = None  # the text this run typed
    error: str | None = None  # exception element, failed run or timeout
    run: Run | None = field(default=None, repr=False)


class Recorder:
    def __init__(self, timeout: float):
        self.timeout = timeout
        self.observations: list[Observation] = []
        self.connections: dict[int, list[Session]] = {}  # every tab a session opened, in order

    def connected(self, number: int, session: Session) -> Session:
        self.connections.setdefault(number, []).append(session)
        return session

    async def run(
        self, session: int, page: str, kind: str, request: Awaitable[Run], typed: str | None = None
    ) -> Run | None:
        """Await one run and record it; None (recorded as an error) when it failed or timed out."""
        started = time.perf_counter()
        try:
            run = await request
        except TimeoutError:
            self.observations.append(
                Observation(
                    session,
                    page,
                    kind,
                    time.perf_counter() - started,
                    typed,
                    f"timeout: no message for {self.timeout:.0f} s",
                )
            )
            return None
        except Exception as error:  # a failed run or a closed connection: the session ends here
            self.observations.append(
                Observation(
                    session, page, kind, time.perf_counter() - started, typed, f"{type(error).__name__}: {error}"[:300]
                )
            )
            return None
        seconds = time.perf_counter() - started
        problem = "; ".join(f"exception {e.type}: {e.message[:200]}" for e in run.exceptions) or None
        self.observations.append(Observation(session, page, kind, seconds, typed, problem, run))
        return run


async def take_step(recorder: Recorder, number: int, session: Session, run: Run, step: Step) -> Run | None:
    """Move to the step's page (unless there) and type its text; None when a run failed or had no text box."""
    if step.page != session.page:
        opened = session.open(step.page, PAGE_QUERY.get(step.page, ""), timeout=recorder.timeout)
        switched = await recorder.run(number, step.page, "switch", opened)
        if switched is None:
            return None
        run = switched
    box = run.widget("a" if step.page == "next_sentence" else "text")
    if box is None:
        recorder.observations.append(Observation(number, step.page, "typed", 0.0, step.text, "no text box"))
        return None
    typed = session.run({box.id: step.text}, timeout=recorder.timeout)
    return await recorder.run(number, step.page, "typed", typed, typed=step.text)


async def student(url: str, number: int, steps: list[Step], recorder: Recorder) -> None:
    """Open the first page, then for each step move to its page and type its text."""
    async with Session.connect(url, steps[0].page, PAGE_QUERY.get(steps[0].page, "")) as session:
        recorder.connected(number, session)
        run = await recorder.run(number, session.page, "open", session.run(timeout=recorder.timeout))
        for step in steps:
            if run is None:
                return
            run = await take_step(recorder, number, session, run, step)


async def padding_student(
    url: str, number: int, recorder: Recorder, others_done: asyncio.Event, limit: int, pause: float
) -> None:
    """The Padding lab (max_length 8, truncation on) with new lines until the other sessions are done,
    ``pause`` seconds between batches (0: each batch as soon as the last one is shown)."""
    async with Session.connect(url, "tokenizer", PAD_QUERY) as session:
        recorder.connected(number, session)
        run = await recorder.run(number, PADDING_LAB, "open", session.run(timeout=recorder.timeout))
        for round_number in range(limit):
            if run is None or others_done.is_set():
                return
            run = await type_padding_batch(recorder, number, session, run, round_number, pause)


async def type_padding_batch(
    recorder: Recorder, number: int, session: Session, run: Run, round_number: int, pause: float
) -> Run | None:
    """Type the Padding lab's batch of ``round_number`` (after ``pause`` seconds, except the first)."""
    if pause and round_number:
        await asyncio.sleep(pause)
    lines = padding_lines(round_number)
    typed = session.run({run.widget("lines").id: lines}, timeout=recorder.timeout)
    return await recorder.run(number, PADDING_LAB, "typed", typed, typed=lines)


async def classroom(
    url: str,
    steps: list[list[Step]],
    recorder: Recorder,
    padding_limit: int,
    padding_pause: float = 0.0,
    one: Callable[[str, int, list[Step], Recorder], Awaitable[None]] = student,
    lab: Callable[[str, int, Recorder, asyncio.Event, int, float], Awaitable[None]] = padding_student,
) -> float:
    """Every session at once (each ``one`` student, and the ``lab`` student); returns the wall time until
    the last (non-padding) session finished. ``padding_limit`` 0: no session in the Padding lab."""
    others_done = asyncio.Event()
    started = time.perf_counter()

    async def everyone() -> float:
        await asyncio.gather(*(one(url, n, s, recorder) for n, s in enumerate(steps)))
        others_done.set()
        return time.perf_counter() - started

    in_lab = [lab(url, len(steps), recorder, others_done, padding_limit, padding_pause)] if padding_limit else []
    wall, *_ = await asyncio.gather(everyone(), *in_lab)
    assert isinstance(wall, float)  # everyone()'s; the lab's student returns nothing
    return wall


def burst(
    url: str,
    steps: list[list[Step]],
    recorder: Recorder,
    seconds: float,
    padding_limit: int,
    padding_pause: float = 0.0,
) -> tuple[float, bool]:
    """Run the class (in a thread of its own: the caller may hold an event loop); (wall, finished in time)."""

    async def bounded() -> tuple[float, bool]:
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(classroom(url, steps, recorder, padding_limit, padding_pause), seconds), True
        except TimeoutError:
            return time.perf_counter() - started, False

    return run_to_end(bounded())
