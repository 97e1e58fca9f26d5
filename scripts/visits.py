"""What a visit costs the server and the browser, measured against a real ``streamlit run`` server.

Used by ``scripts/benchmark.py`` (sections "Cached visits" and "Browser settle").

- **Server time per cached visit**: every result already cached, a browser-protocol client
  (``scripts.streamlit_client``) reruns a page in the same session, or opens it in a new session.
  Reported as the median wall time of the run (loopback, nothing else queued) and the server
  process's CPU time per visit (``/proc/PID/stat``: user + system). Measured twice in one run: with
  the shipped serving configuration, and as before it (file watcher ``auto``, the long-lived objects
  not frozen: ``BERTLENS_GC_FREEZE=0``).
- **Browser settle**: headless Chromium opens each page in a new tab (1280×720, HTTP cache warm,
  server caches warm) and waits until Streamlit is idle and the page has not changed for
  ``QUIET_MS``; settle = the time of the page's last DOM change after navigation. A bare one-line
  Streamlit app is measured in the same run, so pages are compared as ratios to it.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

from scripts.server import running_server
from scripts.streamlit_client import Session

PAGES = ("", "tokenizer", "anatomy", "fill_mask", "next_sentence", "attention", "senses")
VISITS = 30
TARGET_VISIT_MS = 60
TARGET_SETTLE_RATIO = 1.5
QUIET_MS = 600
BARE_APP = "import streamlit as st\n\nst.title('Bare')\nst.write('A one-line Streamlit page.')\n"
CHROMIUM = os.environ.get("BERTLENS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
LAST_CHANGE = """
window.__lastChange = 0;
new MutationObserver(() => { window.__lastChange = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
SETTLED = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return [app && app.getAttribute('data-test-script-state') === 'notRunning'
            && app.getAttribute('data-test-connection-state') === 'CONNECTED'
            && !document.querySelector('[data-testid="stStatusWidget"]')
            && window.__lastChange > 0 && performance.now() - window.__lastChange > %d,
          window.__lastChange];
}""" % QUIET_MS


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _timed(visit: Callable[[], Awaitable[object]], count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await visit()
        times.append(time.perf_counter() - started)
    return times


async def _page_visits(url: str, pid: int, page: str, query: str) -> dict[str, float]:
    """Median wall and mean CPU seconds of a cached rerun (same session) and a cached first run (new session)."""

    async def new_session() -> None:
        async with Session.connect(url, page, query) as session:
            await session.run()

    await new_session()  # fills the caches
    cpu = cpu_seconds(pid)
    new = await _timed(new_session, VISITS)
    new_cpu = (cpu_seconds(pid) - cpu) / VISITS
    async with Session.connect(url, page, query) as session:
        await session.run()
        cpu = cpu_seconds(pid)
        same = await _timed(session.run, VISITS)
        same_cpu = (cpu_seconds(pid) - cpu) / VISITS
    return {"same": statistics.median(same), "same_cpu": same_cpu, "new": statistics.median(new), "new_cpu": new_cpu}


def cached_visits(model: str, query: str, before: bool) -> dict[str, dict[str, float]]:
    """Each page's cached-visit cost on a server with the shipped options, or as before them."""
    env = {"BERTLENS_GC_FREEZE": "0"} if before else {}
    with tempfile.TemporaryDirectory() as tmp, running_server(
        model, Path(tmp) / "server.log", watcher="auto" if before else "none", **env
    ) as server:
        return {page: asyncio.run(_page_visits(server.url, server.pid, page, query)) for page in PAGES}


def bare_visits(model: str) -> dict[str, float]:
    """The same measurements on a bare one-line Streamlit app: Streamlit's own floor."""
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        with running_server(model, Path(tmp) / "bare.log", script=str(bare)) as server:
            return asyncio.run(_page_visits(server.url, server.pid, "", ""))


def visit_rows(model: str, query: str) -> list[tuple[str, ...]]:
    before, after = cached_visits(model, query, before=True), cached_visits(model, query, before=False)
    bare = bare_visits(model)
    rows = [
        (f"bare one-line Streamlit page: {label}", "", f"{bare[kind] * 1000:,.0f} ms (CPU {bare[kind + '_cpu'] * 1000:,.0f} ms)", "")
        for kind, label in (("same", "rerun, same session"), ("new", "first run, new session"))
    ]
    for page in PAGES:
        b, a = before[page], after[page]
        for kind, label in (("same", "rerun, same session"), ("new", "first run, new session")):
            ok = a[kind] * 1000 <= TARGET_VISIT_MS
            rows.append((
                f"{page or 'home'}: {label}",
                f"{b[kind] * 1000:,.0f} ms (CPU {b[kind + '_cpu'] * 1000:,.0f} ms)",
                f"{a[kind] * 1000:,.0f} ms (CPU {a[kind + '_cpu'] * 1000:,.0f} ms) {'✅' if ok else '❌'}",
                f"{b[kind] / a[kind]:.1f} ×",
            ))  # fmt: skip
    return rows


# --- the browser ------------------------------------------------------------------------------


def _settle_ms(context, url: str) -> float:
    tab = context.new_page()
    try:
        tab.goto(url)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            settled, last_change = tab.evaluate(SETTLED)
            if settled:
                return last_change
            time.sleep(0.05)
        raise TimeoutError(f"{url} did not settle in 60 s")
    finally:
        tab.close()


def browser_settle(model: str, query: str, repeats: int = 5) -> dict[str, float] | None:
    """Median settle time (ms) of every page and of a bare Streamlit page; None without Chromium/Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(CHROMIUM).exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        with running_server(model, Path(tmp) / "bare.log", script=str(bare)) as bare_server, running_server(
            model, Path(tmp) / "app.log"
        ) as app, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.add_init_script(LAST_CHANGE)
            targets = {"bare Streamlit page": f"{bare_server.url}/"}
            targets |= {page or "home": f"{app.url}/{page}?{query}" for page in PAGES}
            for url in targets.values():  # warm: the server's caches and the browser's HTTP cache
                _settle_ms(context, url)
            times: dict[str, list[float]] = {name: [] for name in targets}
            for _ in range(repeats):  # interleaved, so a disturbance hits every page alike
                for name, url in targets.items():
                    times[name].append(_settle_ms(context, url))
            browser.close()
    return {name: statistics.median(values) for name, values in times.items()}


def settle_rows(model: str, query: str) -> list[tuple[str, ...]] | None:
    settle = browser_settle(model, query)
    if settle is None:
        return None
    bare = settle["bare Streamlit page"]
    return [
        (name, f"{value:,.0f} ms", f"{value / bare:.2f} × {'✅' if value <= TARGET_SETTLE_RATIO * bare else '❌'}")
        for name, value in settle.items()
    ]
