"""A class hitting one shared link at once: 16 real sessions x 20 interactions against a real server.

Each session speaks Streamlit's own browser protocol over the websocket (what a browser tab does,
without rendering), so all sessions run in the server at the same time, each in its own script
thread. Checked: every run finishes without an exception, every session sees its own sentence
(never another session's), and the model is loaded exactly once by the server process.

Why not AppTest in threads: AppTest swaps process-wide runtime singletons around each run, so
concurrent AppTests in one process are not safe. Why not 16 Chromium tabs: on 2 cores rendering
would dominate; the server's concurrency is what is tested here (tests/browser covers rendering).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bertlens.pages import TOOL_PAGES
from tests.live_server import model_loads, streamlit_server

pytest.importorskip("websockets")
from scripts.streamlit_client import Session  # noqa: E402

SESSIONS = 16
INTERACTIONS = 20
PAGES = TOOL_PAGES  # every page that shows the model (the registry, bertlens.pages)
# Sentences several sessions type at the same time (same cache entries, computed concurrently) ...
COMMON = tuple(f"The {animal} sat on the [MASK] near the river bank." for animal in ("cat", "dog", "bird", "fox"))
# The page whose typed text is its own sentence A, not the shared sentence (not echoed by the server).
OWN_TEXT_PAGES = {"next_sentence"}
RUN_SECONDS = 120  # generous: 16 sessions share 2 cores
QUERY = "text=Students+open+the+link+together."


def sentence(session: int, step: int) -> str:
    """... and sentences only one session types."""
    return (
        COMMON[(session + step) % len(COMMON)]
        if step % 2
        else f"Student {session} tries sentence {step} with a [MASK]."
    )


async def student(url: str, number: int) -> list[float]:
    """Open a page, then type INTERACTIONS sentences; returns each typed run's seconds."""
    page = PAGES[number % len(PAGES)]
    async with Session.connect(url, page, QUERY) as session:
        first = await session.run(timeout=RUN_SECONDS)
        assert not first.exceptions, (page, first.exceptions)
        inputs = [*first.drawn("text_area"), *first.drawn("text_input")]
        shared = [i.id for i in inputs if i.id.endswith("-text")]
        text_widget = (shared or [i.id for i in first.drawn("text_input")])[0]
        seconds = []
        for step in range(INTERACTIONS):
            text = sentence(number, step)
            started = time.perf_counter()
            run = await session.run({text_widget: text}, timeout=RUN_SECONDS)
            seconds.append(time.perf_counter() - started)
            assert not run.exceptions, (page, text, run.exceptions)
            if page not in OWN_TEXT_PAGES:  # the shared sentence comes back as this session typed it
                assert text in [box.value for box in run.drawn("text_input")], (page, text)
    return seconds


async def classroom(url: str) -> list[list[float]]:
    return await asyncio.gather(*(student(url, number) for number in range(SESSIONS)))


def test_sixteen_sessions_twenty_interactions_one_model_load(tiny_pretraining_dir, tmp_path):
    log = tmp_path / "server.log"
    with streamlit_server(tiny_pretraining_dir, log) as url:
        started = time.perf_counter()
        # In a thread of its own: Playwright's sync API (the browser tests) may hold this thread's event loop.
        with ThreadPoolExecutor(1) as thread:
            seconds = thread.submit(asyncio.run, classroom(url)).result()
        wall = time.perf_counter() - started
    assert [len(runs) for runs in seconds] == [INTERACTIONS] * SESSIONS
    every = sorted(s for runs in seconds for s in runs)  # reported (pytest -s), never asserted
    print(
        f"\n{SESSIONS} sessions x {INTERACTIONS} interactions in {wall:.1f} s; per interaction: "
        f"median {every[len(every) // 2]:.2f} s, p95 {every[int(len(every) * 0.95)]:.2f} s, max {every[-1]:.2f} s"
    )
    loads = model_loads(log)
    assert len(loads) == 1, loads
    assert str(tiny_pretraining_dir) in loads[0]
    assert "Traceback" not in log.read_text()
