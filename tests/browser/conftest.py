"""Real-browser fixtures: one headless Streamlit server and Debian's Chromium driven by Playwright.

The server runs ``app.py`` on a free local port with a tiny random pre-training model (both heads,
so fill-mask and next-sentence show numbers) and ``HF_HUB_OFFLINE=1``. Without Chromium or
Playwright the tests are skipped, unless ``BERTLENS_REQUIRE_BROWSER=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bertlens.models import BUNDLED_MODEL
from scripts.visits import CHROMIUM_ARGS
from tests.live_server import streamlit_server

CHROMIUM = os.environ.get("BERTLENS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("BERTLENS_REQUIRE_BROWSER") == "1"
VIEWPORT = {"width": 1400, "height": 1000}  # the tests' tabs, but those of a screen's size
RUN_TIMEOUT_MS = 60_000  # one Streamlit run, first model load included
# Streamlit draws grey skeletons while a widget's code loads (lazily, after the run ends); a chart element
# (components/ui/plotly_chart.py, Streamlit's custom-component box) is drawn once its code and plotly.js are in.
SETTLED = """() => !document.querySelector('[data-testid="stSkeleton"], [data-testid="stSkeletonElement"]')
  && [...document.querySelectorAll('[data-testid="stBidiComponentRegular"]')].every(c => c.querySelector('.main-svg'))"""
# Every chart element of the main area drawn to the end (its data kept as drawn), or showing that it could not be.
CHARTS_DONE = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stBidiComponentRegular"]')]
  .every(element => element.querySelector('.bl-chart')?.bertlens?.drawn || element.querySelector('.bl-chart-error'))"""
# Fonts and images in: until then text wraps in a fallback font and the layout is not final (home's lesson
# button was once measured 190 px lower, once, in a full run).
LAID_OUT = "() => document.fonts.status === 'loaded' && [...document.images].every(image => image.complete)"
# app.py's own page scripts (history, reconnect, focus, tabs' scroll) come in st.html, whose code Streamlit loads
# lazily: up to a second after the first run on a chart page. Until then Streamlit's own history rules apply.
PAGE_SCRIPTS_IN = "() => window.bertlensHistory && window.bertlensReloadOnReconnect && window.bertlensFocus && window.bertlensTabsScroll"

try:
    from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

    expect.set_options(timeout=RUN_TIMEOUT_MS)  # lazily loaded charts and grids can take seconds on 2 cores
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None


def _missing_browser() -> str | None:
    if sync_playwright is None:
        return "Playwright for Python is not installed (pip install -r requirements-dev.txt)"
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    return None


def pytest_collection_modifyitems(config, items):
    problem = _missing_browser()
    for item in items:
        if "tests/browser/" not in item.nodeid.replace("\\", "/"):
            continue
        item.add_marker(pytest.mark.browser)
        if problem and not REQUIRED:
            item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {problem}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's outcome, so a failing browser test can attach the server's log."""
    outcome = yield
    setattr(item, f"outcome_{call.when}", outcome.get_result())


@pytest.fixture(scope="session")
def server_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("streamlit") / "server.log"


@pytest.fixture(scope="session")
def server_url(tiny_pretraining_dir, server_log) -> Iterator[str]:
    problem = _missing_browser()
    if problem:
        pytest.fail(f"BERTLENS_REQUIRE_BROWSER=1 but {problem}")
    with streamlit_server(tiny_pretraining_dir, server_log) as url:
        yield url


@pytest.fixture(scope="session")
def bundled_url(server_url, tmp_path_factory) -> Iterator[str]:
    """A second server, on the bundled encoder (real weights, no MLM/NSP heads), shared by the test files that need
    one (each started its own: ~20 s apiece)."""
    with streamlit_server(BUNDLED_MODEL, tmp_path_factory.mktemp("bundled") / "server.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser(server_url):
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def browser_context(browser):
    """One context for the session: its HTTP cache keeps Streamlit's lazily loaded chunks (plotly, grid)."""
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


def open_tab(context: BrowserContext) -> Page:
    """A new tab in ``context``, waiting as long as one Streamlit run may take."""
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    return page


@pytest.fixture(scope="session")
def _reused_tab(browser_context) -> Iterator[list[Page]]:
    """The tab ``page`` hands from test to test (at most one), replaced when a test failed in it."""
    tab: list[Page] = []
    yield tab
    for page in tab:
        page.close()


def _fresh_to_the_app(page: Page, server_url: str) -> None:
    """The tab as a new one is to the app: its viewport the context's, no sessionStorage on the app's origin (the
    answers kept for a reload: components.state.answers), and about:blank before the test's first link."""
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{server_url}/_stcore/health")  # the app's origin, without loading the app
    page.evaluate("() => sessionStorage.clear()")
    page.goto("about:blank")


@pytest.fixture
def page(browser_context, _reused_tab, server_url, server_log, request) -> Iterator[Page]:
    """A tab with its own Streamlit session and none of the cookies an earlier test's tabs left (a closed tab hands
    its lesson answers to the next page for half a minute: components.state.answers). One tab serves the tests of
    a process in turn, reset between them (``_fresh_to_the_app``): a new tab costs about twice a page load's CPU
    (measured 2026-12-07: 6.7 s against 2.9 s of system CPU for the Attention page), on ~100 tests. A test marked
    ``new_tab`` (one that listens to the tab's events, adds scripts to it or counts its history, which a browser
    caps at 50 entries) gets a tab of its own. On failure, the
    browser's errors and the server's log are shown."""
    own = request.node.get_closest_marker("new_tab") is not None
    if own or not _reused_tab:
        page = open_tab(browser_context)
        if not own:
            _reused_tab.append(page)
    else:
        page = _reused_tab[0]
        try:
            _fresh_to_the_app(page, server_url)
        except Exception:  # a tab that cannot be reset (crashed, hung): a new one, as the reused one is no more
            page.close()
            page = _reused_tab[0] = open_tab(browser_context)
    browser_context.clear_cookies()  # after the last test's page went: leaving, it hands its answers on in a cookie
    errors: list[str] = []

    def on_error(error: object) -> None:
        errors.append(str(error))

    page.on("pageerror", on_error)
    timeline, listeners = _tab_timeline(page)
    yield page
    for event, listener in [("pageerror", on_error), *listeners]:
        page.remove_listener(event, listener)
    report = getattr(request.node, "outcome_call", None)
    failed = report is None or report.failed
    if own or failed:
        page.close()
        if not own:
            _reused_tab.clear()
    if report is not None and report.failed:
        print("browser errors:", errors or "none")
        print("tab timeline (s since the tab opened):\n" + "\n".join(timeline))
        print("server log (end):\n" + server_log.read_text()[-4000:])


def _tab_timeline(page: Page) -> tuple[list[str], list[tuple[str, Callable[[Any], None]]]]:
    """What the tab did, for a failure report: documents loaded, websockets opened and closed, console warnings;
    and the listeners that note it, to remove when the test is over."""
    started = time.monotonic()
    timeline: list[str] = []

    def note(event: str) -> None:
        timeline.append(f"{time.monotonic() - started:7.2f}  {event}")

    def socket(websocket) -> None:
        note(f"websocket opened {websocket.url}")
        websocket.on("close", lambda _: note("websocket closed"))

    def console(message) -> None:
        if message.type in ("error", "warning"):
            note(f"console {message.type}: {message.text[:300]}")

    listeners: list[tuple[str, Callable[[Any], None]]] = [
        ("framenavigated", lambda frame: note(f"at {frame.url}") if frame == page.main_frame else None),
        ("load", lambda _: note("document loaded")),
        ("websocket", socket),
        ("console", console),
    ]
    for event, listener in listeners:
        page.on(event, listener)
    return timeline, listeners


def wait_for_run(page: Page) -> None:
    """Wait until Streamlit is connected, the script has finished running and app.py's page scripts are in (no
    fixed sleeps)."""
    app = page.locator('[data-testid="stApp"]')
    expect(app).to_have_attribute("data-test-connection-state", "CONNECTED", timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stMain"] h1').first).to_be_visible(timeout=RUN_TIMEOUT_MS)  # the page ran
    expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(PAGE_SCRIPTS_IN, timeout=RUN_TIMEOUT_MS)


def wait_for_layout(page: Page) -> None:
    """Wait until the page's final layout: every widget and chart drawn (SETTLED), fonts and images in (LAID_OUT)."""
    page.wait_for_function(SETTLED, timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(LAID_OUT, timeout=RUN_TIMEOUT_MS)


@pytest.fixture
def open_url(page, server_url) -> Callable[..., Page]:
    """``open_url("attention", layer="3", text="…")``: open a deep link and wait for the run to end."""

    def go(path: str = "", **params: str) -> Page:
        query = f"?{urlencode(params)}" if params else ""
        page.goto(f"{server_url}/{path}{query}")
        wait_for_run(page)
        return page

    return go
