"""The main tasks with the keyboard only (WCAG 2.1.1, 2.1.2, 2.4.7), in Chromium at 1280×720.

From a fresh load of a shared Attention link, Tab reaches the skip link first, then the sidebar's
pages and model, the sentence, the layer and head, the tabs and the chart's download buttons, and
comes back round (no trap); every stop is focus-visible. Then the keyboard alone changes the layer
(arrows), the open tab (arrows), the sentence (Enter / Ctrl+Enter) and downloads the matrix (Enter).
The Tab counts are printed (``-s``) and quoted in docs/benchmarks.md (Keyboard tab stops).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from bertlens.curriculum import LESSONS
from tests.browser.conftest import RUN_TIMEOUT_MS, SETTLED, wait_for_run

SENTENCE = "The animal did not cross the street because it was too tired."
MAX_TABS = 80

FOCUSED = """() => {
  const e = document.activeElement;
  const keyed = e.closest('[class*="st-key-"]');
  const key = keyed ? [...keyed.classList].find(c => c.startsWith('st-key-')).slice(7) : '';
  const testid = e.closest('[data-testid]')?.getAttribute('data-testid') || '';
  return {key, testid, role: e.getAttribute('role') || '', tag: e.tagName,
          name: (e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 40),
          visible: e === document.body || e.matches(':focus-visible')};
}"""


def tab_walk(page: Page) -> list[dict]:
    """Every stop of Tab from the top of the page until focus comes back to the first stop."""
    stops: list[dict] = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        if stops and stop == stops[0]:
            return stops
        stops.append(stop)
    raise AssertionError(f"focus did not come back round within {MAX_TABS} Tab presses: {stops[-5:]}")


def presses_to(stops: list[dict], **wanted: str) -> int:
    """How many Tab presses reach the first stop with these attributes (1-based)."""
    for i, stop in enumerate(stops, start=1):
        if all(re.fullmatch(value, stop[name]) for name, value in wanted.items()):
            return i
    raise AssertionError(f"no Tab stop with {wanted}: {[(s['key'], s['testid'], s['name']) for s in stops]}")


def test_the_main_tasks_with_the_keyboard_only(browser, server_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(f"{server_url}/attention?text={SENTENCE.replace(' ', '+')}&attn_layer=0&head=0")
        wait_for_run(page)
        for control in ("model", "text", "attn_layer", "head", "attn_tab", "heatmap"):  # lazily loaded widgets
            expect(page.locator(f".st-key-{control}").first).to_be_visible()
        expect(page.locator('[class*="st-key-csv-attention-"] button')).to_be_visible()
        # A key's container is visible while still a skeleton: the walk starts once every widget and chart is
        # drawn, the heatmap's modebar (its PNG button, a Tab stop) included.
        page.wait_for_function(SETTLED, timeout=RUN_TIMEOUT_MS)
        expect(page.locator('.st-key-heatmap .modebar-btn[data-title^="Download plot"]')).to_be_attached()
        page.evaluate("document.activeElement?.blur()")  # Tab starts from the top of the document

        stops = tab_walk(page)
        counts = {
            "skip link": presses_to(stops, testid="stSkipToContent"),
            "first sidebar page": presses_to(stops, testid="stSidebarNavLink"),
            "model": presses_to(stops, key="model", role="combobox"),
            "sentence": presses_to(stops, key="text", tag="TEXTAREA|INPUT"),
            "encoder layer": presses_to(stops, key="attn_layer"),
            "head": presses_to(stops, key="head"),
            "tabs": presses_to(stops, role="tab"),
            "chart PNG": presses_to(stops, name="Download plot.*"),
            "matrix CSV": presses_to(stops, key="csv-attention-.*"),
        }
        print("Tab presses from a fresh load of the Attention page:", counts, "one round:", len(stops))
        assert counts["skip link"] == 1
        assert counts["sentence"] < counts["encoder layer"] < counts["head"] < counts["tabs"] < counts["matrix CSV"]
        invisible = [s for s in stops if not s["visible"]]
        assert not invisible, f"focus not visible at: {invisible}"

        # The skip link jumps over the sidebar: Tab, Enter, then a few Tabs to the sentence.
        page.locator('[data-testid="stSkipToContent"]').focus()  # the first Tab stop (checked above)
        page.keyboard.press("Enter")
        after_skip = tab_walk(page)
        skipped = presses_to(after_skip, key="text", tag="TEXTAREA|INPUT")
        print("With the skip link: Tab, Enter, then", skipped, "Tab presses to the sentence")
        assert skipped < counts["sentence"] - 5

        # The layer, with the arrow keys.
        page.locator(".st-key-attn_layer input[type=range]").focus()
        page.keyboard.press("ArrowRight")
        expect(page).to_have_url(re.compile(r"attn_layer=1"))
        wait_for_run(page)

        # Another tab, with the arrow keys (and Enter/Space to choose it).
        page.locator(".st-key-attn_tab [role=tab][aria-selected=true]").focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        expect(page).to_have_url(re.compile(r"attn_tab=Head"))
        wait_for_run(page)

        # A new sentence, applied from the keyboard.
        box = page.locator(".st-key-text input").first
        box.focus()
        page.keyboard.press("Control+A")
        page.keyboard.type("Keyboards work too.")
        page.keyboard.press("Control+Enter" if box.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")
        expect(page).to_have_url(re.compile(r"text=Keyboards"))
        wait_for_run(page)

        # Back to the heatmap tab, and its CSV with Enter.
        page.locator(".st-key-attn_tab [role=tab]").first.focus()
        page.keyboard.press("Enter")
        wait_for_run(page)
        page.locator('[class*="st-key-csv-attention-"] button').focus()
        with page.expect_download() as download:
            page.keyboard.press("Enter")
        assert download.value.suggested_filename.startswith("attention-layer1")
    finally:
        context.close()


def test_focus_survives_a_rerun_started_from_the_keyboard(open_url):
    """A keyboard audit found focus on <body> after a CSV download (the button is disabled while it fetches) and
    after a button that closes its own expander (Fill-mask's Mask this word): a screen reader starts again from
    the top. Focus now goes back to the same control, or to the control nearest it when it is gone."""
    page = open_url("fill_mask", text="The cat sat down.")
    page.locator(".st-key-words_to_mask [role=combobox]").click()
    page.get_by_role("option", name="The", exact=True).click()  # the first word: nothing is picked beforehand
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Mask this word").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".st-key-text input")).to_have_value("[MASK] cat sat down.")
    helper = page.locator(".st-key-mask_helper summary")  # the button is gone with its word: its part's first control
    expect(helper).to_be_focused()
    expect(helper).to_be_in_viewport()

    download = page.locator('[class*="st-key-csv-table-fill-mask-1"] button')
    download.focus()
    with page.expect_download():
        page.keyboard.press("Enter")
    expect(download).to_be_focused()


@pytest.fixture
def zoomed_attention(browser, server_url) -> Iterator[Page]:
    """The Attention page in presentation mode at 640×360: 1280×720 at 200 % zoom."""
    context = browser.new_context(viewport={"width": 640, "height": 360})
    try:
        page = context.new_page()
        page.goto(f"{server_url}/attention?present=true&text={SENTENCE}")
        wait_for_run(page)
        yield page
    finally:
        context.close()


def test_at_200_percent_zoom_the_hidden_sidebar_takes_no_tab_stop_and_focus_stays_below_the_header(zoomed_attention):
    """At 640×360 (1280×720 at 200 %) Streamlit collapses the sidebar by moving it aside: its 13 controls still took
    Tab stops off-screen (2.4.3); a control focused at the top of the page went under the 60 px header (2.4.11)."""
    page = zoomed_attention
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_have_attribute("data-collapsed", "true")
    expect(sidebar).to_have_css("visibility", "hidden")  # once it has slid out (0.3 s)
    stops = tab_walk(page)
    assert stops and not [stop for stop in stops if stop["testid"].startswith("stSidebar")], stops
    header = page.locator('[data-testid="stHeader"]').bounding_box()
    assert header
    page.locator(".st-key-attn_tab [role=tab]").first.focus()  # below the controls: Shift+Tab walks up to them
    hidden = []
    for _ in range(25):
        page.keyboard.press("Shift+Tab")
        box = page.evaluate(
            "() => { const e = document.activeElement; const r = e.getBoundingClientRect();"
            " return e.parentElement.closest('[data-testid=stMain]') ? [e.tagName, e.innerText?.slice(0, 20), r.top] : null; }"
        )
        if box and box[2] < header["y"] + header["height"] - 1:
            hidden.append(box)
    assert not hidden, hidden  # each focused control of the page in view below the header


RING_AND_LABEL = """t => {
  const strip = t.closest('[role=tablist]').getBoundingClientRect(), tab = t.getBoundingClientRect();
  const range = document.createRange(); range.selectNodeContents(t.querySelector('p')); const text = range.getBoundingClientRect();
  return {name: t.innerText, focused: t.matches(':focus-visible'), ring: parseFloat(getComputedStyle(t).outlineWidth),
          inStrip: tab.left >= strip.left - 0.5 && tab.right <= strip.right + 0.5,
          room: Math.min(text.left - tab.left, tab.right - text.right)};
}"""


def test_at_200_percent_zoom_a_focused_tab_ring_clears_its_label(zoomed_attention):
    """At 640×360 the tab strip scrolls: the last tab's focus ring (drawn inside it, the strip clips what is outside)
    ran over the first and last letters of "Mask and see" (a keyboard audit)."""
    page = zoomed_attention
    tabs = page.locator(".st-key-attn_tab [role=tab]")
    tabs.first.focus()
    page.keyboard.press("End")  # the tab list's keyboard route to its last tab, which opens it: a run
    expect(page).to_have_url(re.compile(r"attn_tab=Mask"))
    wait_for_run(page)
    last = tabs.last
    expect(last).to_be_focused()
    page.wait_for_timeout(300)  # the strip's scroll to the focused tab
    seen = last.evaluate(RING_AND_LABEL)
    assert seen["name"] == "Mask and see" and seen["focused"] and seen["inStrip"], seen
    assert seen["room"] >= seen["ring"] + 1, seen  # the ring, and a pixel between it and the letters


def test_focus_left_on_a_scrolling_tab_strip_goes_to_its_open_tab(zoomed_attention):
    """At 640×360 the strip scrolls, and a scrolling element can take focus: after End opened the last tab, a slow
    run's redraw once left focus on the strip itself (one CI run), where no tab shows it."""
    page = zoomed_attention
    tabs = page.locator(".st-key-attn_tab [role=tab]")
    tabs.first.focus()
    page.keyboard.press("End")
    expect(page).to_have_url(re.compile(r"attn_tab=Mask"))
    wait_for_run(page)
    strip = page.locator(".st-key-attn_tab [role=tablist]")
    assert strip.evaluate("s => { s.focus(); return document.activeElement === s; }")  # what the redraw left
    expect(tabs.last).to_be_focused()
    assert tabs.last.evaluate("t => t.matches(':focus-visible')")


def test_the_class_link_opens_copies_and_closes_with_the_keyboard(open_url):
    """A teacher without a mouse could open the class link but not copy it: the copy button showed only under a
    mouse. The link's view is a dialog: Enter on the sidebar's button opens it with focus inside, Tab reaches the copy
    button (shown, and focus-visible), and Escape closes it."""
    page = open_url("attention")
    opener = page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Show the class link")
    opener.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    expect(dialog.locator('[data-testid="stCode"] code')).to_be_visible()
    assert dialog.evaluate("d => d.contains(document.activeElement)")  # Streamlit's dialog takes focus
    copy = dialog.locator('[data-testid^="stBaseButton-elementToolbar"]')
    for _ in range(10):
        if copy.evaluate("b => document.activeElement === b"):
            break
        page.keyboard.press("Tab")
        assert dialog.evaluate("d => d.contains(document.activeElement)")  # Tab stays inside (a modal)
    assert copy.evaluate("b => document.activeElement === b && b.matches(':focus-visible')")
    shown = "b => { for (let e = b; e; e = e.parentElement) { const s = getComputedStyle(e); if (s.opacity === '0' || s.visibility === 'hidden') return false; } return true; }"
    assert copy.evaluate(shown)  # not only under a mouse
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_the_chart_toolbar_icons_have_3_to_1_contrast(open_url):
    """1.4.11: plotly's toolbar icons are rgba(68, 68, 68, 0.3) on white, 1.7:1."""
    page = open_url("attention", text=SENTENCE)
    icon = page.locator(".bl-chart .modebar-btn path").first
    expect(icon).to_be_attached()
    assert icon.evaluate("p => getComputedStyle(p).fill") == "rgb(107, 107, 107)"  # #6b6b6b: 5.3:1 on white


def test_focus_goes_to_the_control_nearest_the_one_a_key_press_took_away(open_url):
    """A lesson's Next on the last step is disabled, and Find the head opens the Heatmap tab without its button:
    focus fell to the page's title, scrolled out of sight (a helper's keyboard audit)."""
    last = len(LESSONS["discover"].steps)
    page = open_url("attention", lesson="discover", step=str(last - 1))
    page.locator(".st-key-_lesson_next button").first.press("Enter")
    expect(page.locator(".st-key-_lesson_next button").first).to_be_disabled()
    page.wait_for_function("() => document.activeElement?.closest('.st-key-_lesson_back')")  # ← Back, just before
    expect(page.locator(".st-key-_lesson_back button").first).to_be_in_viewport()

    page = open_url("attention", text=SENTENCE, attn_tab="Head statistics")
    page.locator('[class*="st-key-find_"] button').first.press("Enter")
    page.wait_for_function("() => document.activeElement?.getAttribute('aria-selected') === 'true'")
    assert page.evaluate("() => document.activeElement.innerText.trim()") == "Heatmap"  # the tab it opened
    expect(page.get_by_role("tab", name="Heatmap")).to_be_in_viewport()
