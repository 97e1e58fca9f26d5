"""Memory stays bounded over a class's worth of clicks: 500 varied reruns against a real server.

Freezing the model's objects out of the garbage collector's reach (``bertlens.serving``) must not
turn into a leak, and every cache is bounded (``max_entries``). Ten sessions, one after another,
each open pages with sentences that keep changing (more distinct sentences than any cache holds),
so entries are added and evicted all the time. The server's resident memory after all 500 reruns
must stay within ``GROWTH_BOUND`` of what it was after the first 50.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

from bertlens.pages import TOOL_PAGES
from scripts.server import model_loads, running_server
from scripts.streamlit_client import Session

# Every session visits every page (Attention and Word senses once shared the URL key `layer`; each has
# its own now, see components/state/params.py), so the pages' caches grow together as in a class.
PAGES = TOOL_PAGES  # every page that shows the model (the registry, bertlens.pages)
SESSIONS, RERUNS = 10, 50
DISTINCT_SENTENCES = 120  # more than any cache keeps: entries are evicted throughout
GROWTH_BOUND = 1.15  # RSS after 500 reruns <= 1.15 x RSS after the first 50


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def clicks(url: str, pid: int) -> list[int]:
    """RSS after every 50 reruns."""
    samples = []
    for session_number in range(SESSIONS):
        pages = PAGES
        async with Session.connect(url, pages[0]) as session:
            for step in range(RERUNS):
                n = session_number * RERUNS + step
                sentence = f"Student {n % DISTINCT_SENTENCES} reads about the [MASK] near bank number {n % 7}."
                page = pages[n % len(pages)]
                run = await session.open(page, urlencode({"text": sentence, "a": sentence}))
                assert not run.exceptions, (page, run.exceptions)
        samples.append(rss_bytes(pid))
    return samples


def test_rss_after_500_varied_reruns_stays_within_bound_of_first_50(tiny_pretraining_dir, tmp_path):
    log = tmp_path / "server.log"
    # Playwright (browser tests) may hold this thread's event loop: the clicks run in a thread of their own.
    with running_server(tiny_pretraining_dir, log) as server, ThreadPoolExecutor(1) as thread:
        samples = thread.submit(asyncio.run, clicks(server.url, server.pid)).result()
    after_50, after_500 = samples[0], samples[-1]
    mib = [round(s / 2**20) for s in samples]
    print(f"\nserver RSS (MiB) after each 50 reruns: {mib}; growth {after_500 / after_50:.3f}x")
    assert after_500 <= GROWTH_BOUND * after_50, mib
    assert len(model_loads(log)) == 1
