"""What a visit costs the server and the browser, measured against a real ``streamlit run`` server.

Used by ``scripts/benchmark.py`` (sections "Cached visits" and "Browser settle").

- **Server time per cached visit**: every result already cached, a browser-protocol client
  (``scripts.streamlit_client``) reruns a page in the same session, or opens it in a new session.
  Reported as the median wall time of the run (loopback, nothing else queued) and the server
  process's CPU time per visit (``/proc/PID/stat``: user + system). Measured twice in one run: with
  the shipped serving configuration, and as before it (file watcher ``auto``, the long-lived objects
  not frozen: ``BERTLENS_GC_FREEZE=0``, Nagle's algorithm left on: ``BERTLENS_TCP_NODELAY=0``).
- **Browser settle**: headless Chromium opens each page in a new tab (1280×720, HTTP cache warm,
  server caches warm) and waits until Streamlit is idle and the page has not changed for
  ``QUIET_MS``; settle = the time of the page's last DOM change after navigation. A bare one-line
  Streamlit app is measured in the same run, so pages are compared as ratios to it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bertlens.pages import PAGES as REGISTRY
from bertlens.serving import GC_FREEZE_ENV, NODELAY_ENV
from components.ui.plotly_chart import STATIC
from scripts.server import cpu_seconds, running_server
from scripts.streamlit_client import Session, run_to_end

if TYPE_CHECKING:  # Playwright is optional here: without it the browser rows are skipped
    from playwright.sync_api import BrowserContext, Page

PAGES = tuple(page.url_path for page in REGISTRY)  # "" is the home page
VISITS = 30
TARGET_VISIT_MS = 60
TARGET_SETTLE_RATIO = 1.5
QUIET_MS = 600
BARE_APP = "import streamlit as st\n\nst.title('Bare')\nst.write('A one-line Streamlit page.')\n"
# One-line pages behind st.navigation: the bare baselines for moving between pages in the sidebar, and the
# floor of a page that draws a plotly chart (the smallest one): through st.plotly_chart, and through BERT Lens's
# own chart element (components/ui/plotly_chart.py; its code and plotly.js are copied beside the app, for static serving).
# Its server runs in the repository root (scripts/server.py), where it imports that element like app.py's pages do.
BARE_NAVIGATION_APP = """import streamlit as st
import plotly.graph_objects as go

from components.ui.plotly_chart import plotly_chart

def one():
    st.title("One")
    st.write("A one-line Streamlit page.")

def two():
    st.title("Two")
    st.write("Another one-line Streamlit page.")

def chart():
    st.title("Chart")
    st.write("A one-line Streamlit page and a three-point plotly chart.")
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))

def element():
    st.title("Element")
    st.write("A one-line Streamlit page and a three-point plotly chart, drawn by BERT Lens's chart element.")
    plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])), key="chart", alt="Three points", config={})

st.navigation([st.Page(one, title="One", default=True), st.Page(two, title="Two"), st.Page(chart, title="Chart"),
               st.Page(element, title="Element")]).run()
"""
BARE, BARE_SECOND = "bare Streamlit page", "bare Streamlit page, its second page opened by its own link (/two)"
BARE_CHART = "bare Streamlit page with one three-point plotly chart, opened by its own link (/chart)"
BARE_ELEMENT = "the same chart drawn by BERT Lens's chart element, opened by its own link (/element)"
# The pages whose first view draws plotly charts: also compared with the bare page that draws one.
CHART_PAGES = tuple(page.stem for page in REGISTRY if page.chart)
# The sidebar link of each page (pages/home.py is the default page, at "": its link is the app's title).
NAV_TITLES = {page.url_path: page.title for page in REGISTRY}
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
            && window.__lastChange > 0 && performance.now() - window.__lastChange > {quiet_ms},
          window.__lastChange];
}""".replace("{quiet_ms}", str(QUIET_MS))


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
    env = {GC_FREEZE_ENV: "0", NODELAY_ENV: "0"} if before else {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(model, Path(tmp) / "server.log", watcher="auto" if before else "none", **env) as server,
    ):
        return {page: run_to_end(_page_visits(server.url, server.pid, page, query)) for page in PAGES}


def bare_visits(model: str) -> dict[str, float]:
    """The same measurements on a bare one-line Streamlit app: Streamlit's own floor."""
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        with running_server(model, Path(tmp) / "bare.log", script=str(bare)) as server:
            return run_to_end(_page_visits(server.url, server.pid, "", ""))


def visit_rows(model: str, query: str) -> list[tuple[str, ...]]:
    before, after = cached_visits(model, query, before=True), cached_visits(model, query, before=False)
    bare = bare_visits(model)
    rows: list[tuple[str, ...]] = [
        (
            f"bare one-line Streamlit page: {label}",
            "",
            f"{bare[kind] * 1000:,.0f} ms (CPU {bare[kind + '_cpu'] * 1000:,.0f} ms)",
            "",
        )
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


def wait_settled(tab: Page, started: float = 0.0) -> float:
    """Milliseconds from ``started`` (the tab's clock) to its last DOM change, once the page is idle and quiet."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        settled, last_change = tab.evaluate(SETTLED)
        if settled and last_change > started:
            elapsed: float = last_change - started
            return elapsed
        time.sleep(0.05)
    raise TimeoutError(f"{tab.url} did not settle in 60 s")


def _settle_ms(context: BrowserContext, url: str) -> float:
    """A new tab opening ``url``: every script (plotly, the data grid) is compiled afresh."""
    tab = context.new_page()
    try:
        tab.goto(url)
        return wait_settled(tab)
    finally:
        tab.close()


def _navigation_settle_ms(tab: Page, title: str) -> float:
    """A click on a sidebar link in an open tab: what a student does after opening the link once."""
    tab.bring_to_front()  # a background tab's timers are throttled to once a second
    started = tab.evaluate("performance.now()")
    tab.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True).click()
    return wait_settled(tab, started)


def browser_settle(model: str, query: str, repeats: int = 5) -> dict[str, tuple[float, float | None]] | None:
    """Median settle times (ms) of every page and of bare Streamlit pages: opened in a new tab, and reached
    by a sidebar click in an open tab. None without Chromium/Playwright."""
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415 — optional: without it these rows are skipped
    except ImportError:
        return None
    if not Path(CHROMIUM).exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_NAVIGATION_APP)
        shutil.copytree(STATIC, Path(tmp) / "static")  # the chart element's code and plotly.js
        with (
            running_server(model, Path(tmp) / "bare.log", script=str(bare)) as bare_server,
            running_server(model, Path(tmp) / "app.log") as app,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.add_init_script(LAST_CHANGE)
            opened = {
                BARE: f"{bare_server.url}/",
                BARE_SECOND: f"{bare_server.url}/two",
                BARE_CHART: f"{bare_server.url}/chart",
                BARE_ELEMENT: f"{bare_server.url}/element",
            }
            opened |= {page or "home": f"{app.url}/{page}?{query}" for page in PAGES}
            for url in opened.values():  # warm: the server's caches and the browser's HTTP cache
                _settle_ms(context, url)
            new_tab: dict[str, list[float]] = {name: [] for name in opened}
            clicked: dict[str, list[float]] = {name: [] for name in opened}
            bare_tab, app_tab = context.new_page(), context.new_page()
            bare_tab.goto(f"{bare_server.url}/")
            app_tab.goto(f"{app.url}/?{query}")
            wait_settled(bare_tab), wait_settled(app_tab)
            for _ in range(repeats):  # interleaved, so a disturbance hits every page alike
                for name, url in opened.items():
                    new_tab[name].append(_settle_ms(context, url))
                clicked[BARE] += [_navigation_settle_ms(bare_tab, title) for title in ("Two", "One")]
                for name, title in ((BARE_CHART, "Chart"), (BARE_ELEMENT, "Element")):
                    clicked[name].append(_navigation_settle_ms(bare_tab, title))
                    _navigation_settle_ms(bare_tab, "One")  # back, untimed: the next click leaves a page with no chart
                for page in PAGES:
                    clicked[page or "home"].append(_navigation_settle_ms(app_tab, NAV_TITLES[page]))
            browser.close()
    return {
        name: (statistics.median(new_tab[name]), statistics.median(clicked[name]) if clicked[name] else None)
        for name in opened
    }


def settle_rows(model: str, query: str) -> list[tuple[str, ...]] | None:
    """A row per page. A page opened by its own link (not the app's root) is also compared with a bare page opened
    the same way: Streamlit's frontend first looks for the server under the link's path (``/two/_stcore/health``,
    a 404), and tries the root 100 ms later. A page whose first view draws plotly charts is also compared with the
    bare page that draws one with BERT Lens's chart element (its plotly.js is compiled in each new tab)."""
    settle = browser_settle(model, query)
    if settle is None:
        return None
    bare_new, bare_click = settle[BARE]
    second_new, chart_new, chart_click = settle[BARE_SECOND][0], *settle[BARE_ELEMENT]

    def cell(value: float | None, bare: float | None, *likes: tuple[str, float | None]) -> str:
        if value is None or bare is None:  # the bare second page's link: a new tab only
            return ""
        also = "".join(f"; {value / like:.2f} × {name}" for name, like in likes if like)
        return f"{value:,.0f} ms ({value / bare:.2f} × {'✅' if value <= TARGET_SETTLE_RATIO * bare else '❌'}{also})"

    rows: list[tuple[str, ...]] = []
    for name, (new, click) in settle.items():
        like_new, like_click = [], []
        if name not in (BARE, BARE_SECOND, BARE_CHART, BARE_ELEMENT, "home"):  # an app page opened by its own link
            like_new.append(("a bare second page", second_new))
        if name in CHART_PAGES:
            like_new.append(("the bare element page", chart_new))
            like_click.append(("the bare element page", chart_click))
        rows.append((name, cell(new, bare_new, *like_new), cell(click, bare_click, *like_click)))
    return rows
