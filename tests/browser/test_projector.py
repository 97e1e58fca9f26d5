"""The projector: at 1280×720 in presentation mode every page's picture and every control that changes it share the
first screen, and so do each lesson step's question, the control it names and the picture it is about, whatever
Back and Next did before (``assert_step_on_first_screen``, in every lesson's walk: test_lessons_in_browser.py); on a phone (390×844) nothing overflows sideways and the picture comes before any long
text. Screenshots of every view are kept in ``BERTLENS_SCREENSHOTS`` (a folder) when it is set: the README's
projector picture (docs/images/projector.png) is ``readme-projector-1280x720.png`` from there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from bertlens.pages import TOOL_PAGES
from tests.browser.conftest import open_tab, wait_for_layout, wait_for_run

WIDTH, FOLD = 1280, 720
PICTURE_BY = 480  # the picture starts in the screen's upper two thirds: most of it is on the first screen
LINKS = {"fill_mask": "text=The+capital+of+France+is+%5BMASK%5D."}  # its default sentence has no [MASK]
# What a view's picture is: a chart, a table, an image or a metric, in the stage's picture column.
PICTURE = (
    '.st-key-picture :is([data-testid="stBidiComponentRegular"], .bl-table, [data-testid="stImage"], '
    '[data-testid="stMetric"], [data-testid="stDataFrame"])'
)
# Every control a view has beside its picture: the side column's widgets.
CONTROLS = '.st-key-side [data-testid="stElementContainer"]:has(input, textarea, button, [role="slider"])'
LONG_TEXT_WORDS = 40
# Steps whose picture starts lower, and why (the control they name is still checked on the first screen).
LOWER_PICTURES = {
    ("overview", 4): "the padding lab's own lines, settings and a cut notice fill the picture column above its table",
}


@pytest.fixture(scope="module")
def projector(browser):
    context = browser.new_context(viewport={"width": WIDTH, "height": FOLD})
    page = open_tab(context)
    yield page
    context.close()


def keep(page: Page, name: str) -> None:
    if folder := os.environ.get("BERTLENS_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        size = page.viewport_size or {"width": 0, "height": 0}
        page.screenshot(path=str(Path(folder) / f"{name}-{size['width']}x{size['height']}.png"))


def settle(page: Page) -> None:
    wait_for_run(page)
    wait_for_layout(page)


def bottom_of_visible(page: Page, selector: str) -> list[tuple[str, float]]:
    """(text, bottom edge in px) of every visible element matching ``selector``."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].filter((e) => e.checkVisibility())
          .map((e) => [e.innerText.slice(0, 40), e.getBoundingClientRect().bottom])""",
        selector,
    )


def picture_top(page: Page) -> float:
    picture = page.locator(PICTURE).first
    expect(picture).to_be_visible()
    box = picture.bounding_box()
    assert box is not None
    return box["y"]


def assert_on_first_screen(page: Page, where: str) -> None:
    """Every control beside the picture ends on the first screen, and the picture starts in its upper two thirds."""
    controls = bottom_of_visible(page, CONTROLS)
    assert controls, f"{where}: no control in the side column"
    below = [(text, round(bottom)) for text, bottom in controls if bottom > FOLD]
    assert not below, f"{where}: controls end below the first screen: {below}"
    top = picture_top(page)
    assert top <= PICTURE_BY, f"{where}: the picture starts at {top:.0f} px"


@pytest.mark.parametrize("path", TOOL_PAGES)
def test_every_pages_picture_and_its_controls_share_the_first_screen(projector, server_url, path):
    link = LINKS.get(path)
    projector.goto(f"{server_url}/{path}?present=true" + (f"&{link}" if link else ""))
    settle(projector)
    keep(projector, f"{path}-presenting")
    sidebar = projector.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_have_attribute("data-collapsed", "true")  # folded away: the projector is for the page
    lead = projector.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"] p').first
    lines = lead.evaluate(
        "e => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))"
    )
    assert lines == 1, f"{path}: the lead takes {lines} lines"
    assert_on_first_screen(projector, path)


def open_step_control(page: Page, control: str):
    target = page.locator(f".st-key-{control}").first
    return target.locator('[role="tablist"]') if control.endswith("_tab") else target


def within_the_screen(page: Page, locator, what: str) -> None:
    """``locator`` wholly on the first screen, under Streamlit's header bar."""
    expect(locator).to_be_visible()
    box, header = locator.bounding_box(), page.locator('[data-testid="stHeader"]').bounding_box()
    top = header["y"] + header["height"] if header else 0
    assert box is not None and box["y"] >= top and box["y"] + box["height"] <= FOLD, f"{what}: {box}, header to {top}"


def assert_step_on_first_screen(page: Page, key: str, number: int, control: str | None) -> None:
    """Once its question is answered or skipped: the control step ``number`` of lesson ``key`` names, and the
    picture, on the first screen with the step (tests/browser/test_lessons_in_browser.py walks every lesson so)."""
    where = f"{key} step {number}"
    for name in ("← Back", "Next →"):
        within_the_screen(page, page.get_by_role("button", name=name), f"{where}: {name}")
    keep(page, f"lesson-{key}-{number}")
    if control:
        within_the_screen(page, open_step_control(page, control), f"{where}: {control}")
    if page.locator(PICTURE).count() and (key, number) not in LOWER_PICTURES:
        top = picture_top(page)
        assert top <= PICTURE_BY, f"{where}: the picture starts at {top:.0f} px"


@pytest.fixture(scope="module")
def phone(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = open_tab(context)
    yield page
    context.close()


@pytest.mark.parametrize("path", TOOL_PAGES)
def test_on_a_phone_nothing_overflows_and_the_picture_comes_before_long_text(phone, server_url, path):
    link = LINKS.get(path)
    phone.goto(f"{server_url}/{path}" + (f"?{link}" if link else ""))
    settle(phone)
    keep(phone, path)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390, f"{path}: the page scrolls sideways"
    top = picture_top(phone)
    paragraphs = phone.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMain"] :is(p, li)')].filter((e) => e.checkVisibility())
          .map((e) => [e.innerText.split(/\\s+/).length, e.getBoundingClientRect().top, e.innerText.slice(0, 60)])"""
    )
    before = [text for words, y, text in paragraphs if words > LONG_TEXT_WORDS and y < top]
    assert not before, f"{path}: long text before the picture: {before}"


def test_on_real_weights_the_projector_shows_a_heads_attention_whole(projector, bundled_url):
    """The README's picture (docs/images/projector.png is this screenshot): 6 layers × 12 heads, a real head."""
    projector.goto(
        f"{bundled_url}/attention?present=true&text=The+cat+sat+on+the+mat+because+it+was+tired.&attn_layer=1&head=10"
    )
    settle(projector)
    keep(projector, "readme-projector")
    assert_on_first_screen(projector, "attention on the bundled encoder")
    chart = projector.locator(PICTURE).first.bounding_box()
    assert chart is not None and chart["y"] + chart["height"] <= FOLD, f"the heatmap is cut at the fold: {chart}"


def test_home_shows_the_lessons_on_the_first_screen(projector, server_url):
    projector.goto(f"{server_url}/?present=true")
    settle(projector)
    keep(projector, "home-presenting")
    button = projector.get_by_role("button", name="Start the lesson").last
    within_the_screen(projector, button, "the last lesson's Start button")


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
