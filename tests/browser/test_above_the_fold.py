"""On a 1280×720 projector every page's main view starts on the first screen: with a model that has its
heads (as bert-base-uncased online), and offline, where the fallback banner takes a line and fill-mask and
next-sentence explain the missing head instead. Screenshots are kept in ``BERTLENS_SCREENSHOTS`` (a folder)
when it is set, to look at.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page

from bertlens.pages import TOOL_PAGES
from tests.browser.conftest import RUN_TIMEOUT_MS, wait_for_layout, wait_for_run
from tests.live_server import streamlit_server

FOLD = 720
PAGES = TOOL_PAGES  # every page that shows the model (the registry, bertlens.pages)
LINKS = {"fill_mask": "?text=The+capital+of+France+is+%5BMASK%5D."}  # its default sentence has no [MASK]


@pytest.fixture(scope="module")
def projector(browser):
    context = browser.new_context(viewport={"width": 1280, "height": FOLD})
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    yield page
    context.close()


def top(page: Page, selector: str) -> float:
    box = page.locator(f'[data-testid="stMain"] {selector}').first.bounding_box()
    assert box is not None, selector
    return box["y"]


def keep(page: Page, name: str) -> None:
    if folder := os.environ.get("BERTLENS_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}-1280x720.png"))


@pytest.mark.parametrize("path", PAGES)
def test_the_pages_view_starts_on_the_first_screen(projector, server_url, path):
    projector.goto(f"{server_url}/{path}{LINKS.get(path, '')}")
    wait_for_run(projector)
    wait_for_layout(projector)
    keep(projector, path)
    tab_strip = top(projector, '[data-testid="stTabs"] [role="tablist"]')
    assert tab_strip + 100 <= FOLD, f"{path}: the view's tabs start at {tab_strip:.0f} px"


@pytest.mark.parametrize("path", PAGES)
def test_in_presentation_mode_the_views_tabs_are_on_the_first_screen(projector, server_url, path):
    """Presentation mode's text is 1.3 × larger: the view's tabs start lower (Attention's at 801 px, below the fold,
    before the page's intro, examples and caveat kept their reading size), but on the first screen."""
    link = LINKS.get(path, "")
    projector.goto(f"{server_url}/{path}{link}{'&' if link else '?'}present=true")
    wait_for_run(projector)
    wait_for_layout(projector)
    keep(projector, f"{path}-presenting")
    tab_strip = top(projector, '[data-testid="stTabs"] [role="tablist"]')
    assert tab_strip + 60 <= FOLD, f"{path}: the view's tabs start at {tab_strip:.0f} px"


def test_home_shows_the_lessons_on_the_first_screen(projector, server_url):
    projector.goto(server_url)
    wait_for_run(projector)
    wait_for_layout(projector)
    button = projector.get_by_role("button", name="Start the lesson").first
    start = None  # where it rests: the layout once measured 190 px lower (twice, in full runs, fonts and images in)
    for _ in range(40):
        previous, start = start, button.bounding_box()
        if start is not None and start == previous:
            break
        projector.wait_for_timeout(250)
    keep(projector, "home")
    assert start is not None and start["y"] + start["height"] <= FOLD


def test_a_lesson_steps_controls_are_on_the_first_screen(projector, server_url):
    projector.goto(f"{server_url}/fill_mask?lesson=discover&step=2&text=The+%5BMASK%5D+chased+the+mouse.")
    wait_for_run(projector)
    wait_for_layout(projector)
    keep(projector, "lesson-step")
    for name in ("Next →", "Check my answer"):
        button = projector.get_by_role("button", name=name).bounding_box()
        assert button is not None and button["y"] + button["height"] <= FOLD, name


@pytest.fixture(scope="module")
def offline_url(tmp_path_factory):
    """A model no cache holds, offline: the bundled encoder with the fallback banner on every page."""
    with streamlit_server("no-such-org/no-such-bert", tmp_path_factory.mktemp("offline") / "server.log") as url:
        yield url


@pytest.mark.parametrize("path", PAGES)
def test_offline_the_view_or_the_missing_head_starts_on_the_first_screen(projector, offline_url, path):
    projector.goto(f"{offline_url}/{path}{LINKS.get(path, '')}")
    wait_for_run(projector)
    wait_for_layout(projector)
    keep(projector, f"offline-{path}")
    assert projector.get_by_text("Offline", exact=True).is_visible()
    if path in ("fill_mask", "next_sentence"):
        explanation = top(projector, '[data-testid="stAlert"]:has-text("No predictions with")')
        assert explanation + 60 <= FOLD, f"{path}: the explanation starts at {explanation:.0f} px"
    else:
        tab_strip = top(projector, '[data-testid="stTabs"] [role="tablist"]')
        assert tab_strip + 100 <= FOLD, f"{path}: the view's tabs start at {tab_strip:.0f} px"


def test_home_thumbnails_load_from_the_static_folder(projector, server_url):
    projector.goto(server_url)
    wait_for_run(projector)
    images = projector.locator('[data-testid="stMain"] img[alt=""]')
    images.last.scroll_into_view_if_needed()
    projector.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMain] img')].every(i => i.complete && i.naturalWidth)"
    )
    assert images.count() == 6
    assert {images.nth(i).evaluate("i => i.naturalWidth") for i in range(6)} == {480}
    keep(projector, "home-pages")
