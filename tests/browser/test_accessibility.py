"""axe-core on every page and every view, in Debian's Chromium, on the tiny pre-training model: each page opened by
its link, then its tabs one after another by a click, as a student moves through them (a click costs the browser
under half a page load; that links open each tab is the pages' own tests', tests/pages and test_pages.py).

axe-core (the npm package) is injected into the page after each Streamlit run. Any violation in BERT
Lens's own content fails the view; violations inside Streamlit's own chrome (``CHROME``) are collected
separately and printed at the end of the module (``pytest -s``), so they stay visible without hiding
the app's content. axe comes from ``npm install --prefix ~/.cache/bertlens axe-core@<AXE_VERSION>``
(``.ci/run`` does it); ``BERTLENS_AXE`` points elsewhere. Missing, the tests skip, or fail in CI
(``BERTLENS_REQUIRE_BROWSER=1``), like the other browser tests.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote_plus, urlencode

import pytest
from playwright.sync_api import Page, expect

from bertlens.pages import APP_TITLE, HOME, PAGE_TITLES
from components.views.anatomy.sections import TABS as ANATOMY_TABS
from components.views.attention.sections import TABS as ATTENTION_TABS
from components.views.fill_mask.sections import FILL_MASK_TABS
from components.views.next_sentence.sections import NSP_TABS
from components.views.senses.sections import TABS as SENSES_TABS
from components.views.tokenizer.sections import TABS as TOKENIZER_TABS
from tests.browser.conftest import (
    CHARTS_DONE,
    REQUIRED,
    RUN_TIMEOUT_MS,
    SETTLED,
    open_tab,
    wait_for_layout,
    wait_for_run,
)
from tests.browser.test_downloads import FORMULA_TEXT, downloaded_csvs, spreadsheet_problems
from tests.browser.test_pages import TRUNCATED
from tests.conftest import ROOT

AXE_VERSION = "4.14.1"  # pinned: a new axe release may add rules; bump it on purpose
AXE_JS = Path(os.environ.get("BERTLENS_AXE") or Path.home() / ".cache/bertlens/node_modules/axe-core/axe.min.js")

# Streamlit's own chrome: what Streamlit draws around the app, not BERT Lens's content. Each selector
# says why it is Streamlit's. Their violations are listed, not failed (they are fixed upstream, not here).
CHROME = {
    '[data-testid="stHeader"]': "the top bar: toolbar, deploy/status widgets",
    '[data-testid="stSidebarHeader"]': "the sidebar's collapse button and logo slot",
    '[data-testid="stSidebarNav"]': "the page navigation Streamlit builds from st.navigation",
    '[data-testid="stDecoration"]': "the coloured line at the top",
    # Inside a widget, but Streamlit's markup: a role="presentation" section that Streamlit gives an aria-label
    # (axe: presentation-role-conflict, minor). The Upload button and the file input are labelled.
    '[data-testid="stFileUploaderDropzone"]': "the file uploader's drop zone",
}

# Every page's tabs, by the URL parameter that holds the open one (components.state.widgets.lazy_tabs).
PAGE_TABS = {
    "tokenizer": ("tokenizer_tab", TOKENIZER_TABS),
    "anatomy": ("anatomy_tab", ANATOMY_TABS),
    "fill_mask": ("fill_tab", FILL_MASK_TABS),
    "next_sentence": ("nsp_tab", NSP_TABS),
    "attention": ("attn_tab", ATTENTION_TABS),
    "senses": ("senses_tab", SENSES_TABS),
}
# A deep link's own input where the default shows too little: fill-mask's default sentence has no [MASK].
LINK_PARAMS = {"fill_mask": {"text": "The [MASK] crossed the street because it was [MASK]."}}
# The tab walk's sentence: a spreadsheet formula and markup the pages show literally, and a mask for fill-mask.
WALK_TEXT = FORMULA_TEXT + " [MASK] 2."
# Pages whose CSVs carry the sentence's own tokens (fill-mask's carry the guesses, next-sentence's its own pairs,
# word senses' their preset's sentences): there the formula must arrive, neutralised.
SENTENCE_CSV_PAGES = {"tokenizer", "anatomy", "attention"}
# Views opened by a link of their own: home, fill-mask's default view (its sentence has no [MASK]) and a choice inside
# a tab. Each page's tabs are walked by clicks from its link (``test_axe_finds_no_violation_in_every_tab``: the first
# tab is the page's default view).
VIEWS = [("", {}), ("fill_mask", {}), ("attention", {"tab": "Mask and see", "see_scope": "Every token in turn"})]
# On the bundled encoder (no MLM or NSP head): home and every page's default view, and fill-mask's with a [MASK].
BUNDLED_VIEWS = [("", {})] + [(path, {}) for path in PAGE_TABS] + [("fill_mask", LINK_PARAMS["fill_mask"])]

# Runs axe on the whole document; each violation node is labelled as the app's or Streamlit's chrome.
RUN_AXE = """async chrome => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  const inChrome = target => {
    const element = typeof target[0] === "string" ? document.querySelector(target[0]) : null;
    return !!element && chrome.some(selector => element.closest(selector));
  };
  return result.violations.flatMap(rule => rule.nodes.map(node => ({
    rule: rule.id, impact: node.impact, target: node.target.join(" "), chrome: inChrome(node.target),
    summary: (node.failureSummary || "").split("\\n").slice(0, 2).join(" "), html: node.html.slice(0, 160),
  })));
}"""


def view_id(view: tuple[str, dict[str, str]]) -> str:
    path, params = view
    tabs = [params[key] for key in params if key.endswith(("tab", "scope"))]
    return "/".join([path or "home", *(tabs or (["link"] if params else []))])


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE_JS.exists():
        problem = f"axe-core not found at {AXE_JS} (npm install --prefix ~/.cache/bertlens axe-core@{AXE_VERSION})"
        if REQUIRED:
            pytest.fail(f"BERTLENS_REQUIRE_BROWSER=1 but {problem}")
        pytest.skip(problem)
    return AXE_JS.read_text()


@pytest.fixture(scope="module")
def chrome_violations() -> Iterator[dict[str, list[dict]]]:
    """Streamlit's chrome violations per view, printed once at the end."""
    found: dict[str, list[dict]] = {}
    yield found
    rules = sorted({(node["rule"], node["impact"]) for nodes in found.values() for node in nodes})
    print(
        f"\nStreamlit chrome (not failed): {sum(map(len, found.values()))} nodes in {len(found)} views; rules: {rules}"
    )


@pytest.fixture(scope="module")
def axe_page(browser_context):
    """One tab for every view: each view is a fresh deep link (a new Streamlit session) in the same tab."""
    page = open_tab(browser_context)
    yield page
    page.close()


def violations(page, axe_source: str) -> list[dict]:
    page.wait_for_function(SETTLED, timeout=RUN_TIMEOUT_MS)
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    return page.evaluate(RUN_AXE, list(CHROME))


def check_view(
    page,
    url: str,
    view: tuple[str, dict[str, str]],
    axe_source: str,
    chrome: dict[str, list[dict]],
    model: str = "tiny",
    then: Callable[[Page], None] | None = None,
) -> None:
    """axe on ``view`` opened by its link (and, with ``then``, after what the student does there); then the checks axe
    cannot make (``check_open_view``)."""
    path, params = view
    page.goto(f"{url}/{path}" + (f"?{urlencode(params)}" if params else ""))
    wait_for_run(page)
    if then:
        then(page)
        wait_for_run(page)
    check_open_view(page, view, axe_source, chrome, model)


def check_open_view(
    page: Page, view: tuple[str, dict[str, str]], axe_source: str, chrome: dict[str, list[dict]], model: str = "tiny"
) -> None:
    """axe on the view open in ``page``; then the checks axe cannot make: its charts, its reflow when zoomed, its
    title."""
    path, _ = view
    found = violations(page, axe_source)
    expect_charts_drawn_named_and_readable(page, view)
    expect_reflow(page, view)
    title = PAGE_TITLES[path or HOME]
    assert page.title() == (title if title == APP_TITLE else f"{title} · {APP_TITLE}"), page.title()  # 2.4.2
    chrome[f"{model}:{view_id(view)}"] = [node for node in found if node["chrome"]]
    own = [node for node in found if not node["chrome"]]
    assert not own, f"{len(own)} axe violations in {view_id(view)}:\n" + "\n".join(
        f"  {node['rule']} ({node['impact']}) at {node['target']}: {node['summary']} | {node['html']}" for node in own
    )


# Every text in the charts with its colour, but a bar's own label inside its bar (white there: 4.8:1 on the bar's
# blue, components/ui/predictions.py).
CHART_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot svg text')]
  .filter(t => t.textContent.trim() && t.getBBox().width > 0)
  .filter(t => !(t.closest('.bartext') && getComputedStyle(t).fill === 'rgb(255, 255, 255)'))
  .map(t => [t.textContent, getComputedStyle(t).fill])"""


WHITE = (255, 255, 255)
# Views that draw at least one chart (the rest may draw none): a view that stops drawing its chart fails.
# A page's default view is its first tab: "attention" by a bare link, "attention/Heatmap" in the tab walk.
CHART_VIEWS = {"attention", "attention/Heatmap", "attention/Head statistics", "attention/Head view", "anatomy",
               "anatomy/Architecture", "anatomy/Parameters", "tokenizer/Padding lab", "next_sentence/Evaluation",
               "senses", "senses/Map", "attention/Mask and see/Every token in turn"}  # fmt: skip
# Tick labels in plotly's SI prefixes for small numbers ("200n", "100μ", "5m"): not how a student reads 2e-7.
SI_TICKS = """() => [...document.querySelectorAll('.js-plotly-plot :is(.xaxislayer-above, .yaxislayer-above) text')]
  .map(t => t.textContent).filter(text => /^[−-]?[0-9.]+[pnμm]$/.test(text))"""


def expect_charts_drawn_named_and_readable(page: Page, view: tuple[str, dict[str, str]]) -> None:
    """Checks axe cannot make (a helper's audit found each): every chart drawn to the end, or saying beside it that
    the browser could not draw it (Attention's Step by step said so on every load, under charts that were drawn);
    every chart a figure with a name (1.1.1, 4.1.2: a chart was an unnamed group of SVG text); chart text in the
    page's colour or black on light cells (1.4.3: Streamlit's grey axis text was 3.7:1, white or #444 on mid-blue
    cells 3.1-3.3:1; the cells' own ink is chosen per cell: components/ui/palette.py); numbers on an axis written
    out (Mask and see's influence axis read "200n")."""
    page.wait_for_function(CHARTS_DONE, timeout=RUN_TIMEOUT_MS)
    main = page.locator('[data-testid="stMain"]')
    assert not (errors := main.locator(".bl-chart-error").all_inner_texts()), (view_id(view), errors)
    charts = main.locator(".bl-chart")
    names = charts.evaluate_all("charts => charts.map(chart => chart.getAttribute('aria-label'))")
    assert all(names) and (names or view_id(view) not in CHART_VIEWS), (view_id(view), names)
    if names:
        expect(page.get_by_role("figure", name=names[0])).to_be_visible()
    faint = {text: fill for text, fill in page.evaluate(CHART_TEXTS) if contrast(colour(fill), WHITE) < 4.5}
    assert not faint, f"{view_id(view)}: chart text under 4.5:1 on white: {faint}"
    assert not (prefixed := page.evaluate(SI_TICKS)), f"{view_id(view)}: ticks in SI prefixes: {prefixed}"


@pytest.mark.parametrize("view", VIEWS, ids=view_id)
def test_axe_finds_no_violation_in_the_apps_content(view, axe_page, server_url, axe_source, chrome_violations):
    check_view(axe_page, server_url, view, axe_source, chrome_violations)


@pytest.mark.parametrize("path", PAGE_TABS)
def test_axe_finds_no_violation_in_every_tab(path, axe_page, server_url, axe_source, chrome_violations):
    """Each of the page's tabs, clicked one after another from its link with ``WALK_TEXT`` (the first tab is open
    there): a new tab on a page is checked too, as the labels are the page's own. In each tab, every CSV button on
    screen is clicked and its file read byte for byte as the browser saved it (``spreadsheet_problems``): the
    formula in the sentence reaches a CSV, neutralised."""
    page = axe_page
    key, labels = PAGE_TABS[path]
    params = {"text": WALK_TEXT}
    check_view(page, server_url, (path, {**params, key: labels[0]}), axe_source, chrome_violations)
    files = downloaded_csvs(page)
    expect(page.locator('[data-testid="stMain"]').get_by_role("tab", name=labels[0], exact=True)).to_have_attribute(
        "aria-selected", "true"
    )
    for label in labels[1:]:
        tab = page.locator('[data-testid="stMain"]').get_by_role("tab", name=label, exact=True)
        tab.click()
        expect(tab).to_have_attribute("aria-selected", "true")
        value = re.escape(quote_plus(label)).replace(r"\+", r"(?:\+|%20)")  # a space either way
        expect(page).to_have_url(re.compile(rf"[?&]{key}={value}(&|$)"))  # the tab's run began
        wait_for_run(page)
        check_open_view(page, (path, {**params, key: label}), axe_source, chrome_violations)
        files |= downloaded_csvs(page)
    assert files, f"{path}: no CSV download in any tab"
    problems, neutralised = [], 0
    for name, data in files.items():
        found, cells = spreadsheet_problems(name, data)
        problems, neutralised = problems + found, neutralised + cells
    assert not problems, problems
    assert neutralised or path not in SENTENCE_CSV_PAGES, f"{path}: the sentence's formula reached no CSV"


@pytest.mark.parametrize("view", BUNDLED_VIEWS, ids=view_id)
def test_axe_finds_no_violation_with_the_bundled_encoder(view, axe_page, bundled_url, axe_source, chrome_violations):
    check_view(axe_page, bundled_url, view, axe_source, chrome_violations, model="bundled")


# WCAG 1.4.10 (reflow): 200 % zoom of a 1280×720 screen is a 640×360 CSS viewport (columns still side by side);
# 320 px is WCAG's narrowest, narrower than any phone. Zooming resizes the page a student already has open.
ZOOMS = ({"width": 640, "height": 360}, {"width": 320, "height": 640})
SIDEWAYS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  return Math.max(document.documentElement.scrollWidth - window.innerWidth, main.scrollWidth - main.clientWidth);
}"""
# Every chart relaid out at its box's new width (static/plotly_chart.js keeps the width it last fitted), two frames
# after the resize (Streamlit's own layout follows the window first).
CHARTS_FIT = """() => new Promise(frame => requestAnimationFrame(() => requestAnimationFrame(frame))).then(() =>
  [...document.querySelectorAll('.bl-chart')].every(chart => !chart.clientWidth || chart.bertlens?.fittedWidth === chart.clientWidth))"""
# Chart titles that leave their chart (plotly never wraps one): each sticks out of its chart's picture or runs into
# its plot area, named by its text.
TITLES_OUTSIDE = """() => [...document.querySelectorAll('.bl-chart')].flatMap(chart => {
  const picture = chart.querySelector('.main-svg').getBoundingClientRect();
  const plot = chart.querySelector('.bglayer .bg, .nsewdrag');
  const plotTop = plot ? plot.getBoundingClientRect().top : picture.bottom;
  return [...chart.querySelectorAll('.gtitle')].filter(title => {
    const box = title.getBoundingClientRect();
    return box.left < picture.left - 1 || box.right > picture.right + 1 || box.top < picture.top - 1
      || box.bottom > plotTop + 1;
  }).map(title => title.textContent);
})"""


def expect_reflow(page: Page, view: tuple[str, dict[str, str]]) -> None:
    """1.4.10 reflow, the view zoomed to 200 % and to 320 px: no sideways scrolling; at 320 px no chart title cut off
    at the chart's edge ('"field" — hidden state 2 (after encoder layer 1), PC': it wraps instead, above the plot) and
    no label ending in "…" with no way to read the rest ("max |difference|: …": they wrap instead)."""
    wide = page.viewport_size
    problems = {}
    try:
        for size in ZOOMS:
            page.set_viewport_size(size)
            page.wait_for_function(CHARTS_FIT, timeout=RUN_TIMEOUT_MS)
            if (pixels := page.evaluate(SIDEWAYS)) > 0:
                problems[f"sideways at {size['width']} px (px)"] = pixels
        if titles := page.evaluate(TITLES_OUTSIDE):
            problems["chart titles outside their chart at 320 px"] = titles
        if labels := page.evaluate(TRUNCATED):
            problems["labels cut with an ellipsis at 320 px"] = labels
    finally:
        page.set_viewport_size(wide)
    assert not problems, f"{view_id(view)}: {problems}"


LESSON_VIEWS = [
    ("fill_mask", {"lesson": "discover", "step": "2", "text": "The [MASK] chased the mouse."}),  # a typed answer
    (
        "attention",
        {"lesson": "discover", "step": "4", "text": "The animal couldn't cross the street because it was too tired."},
    ),
    ("", {"lesson": "inside", "step": "4"}),  # a step shown on another page: the "Open the page" button
]


@pytest.mark.parametrize("view", LESSON_VIEWS, ids=view_id)
def test_axe_finds_no_violation_in_a_lesson_step(view, axe_page, server_url, axe_source, chrome_violations):
    check_view(axe_page, server_url, view, axe_source, chrome_violations)


def answer_the_question(page: Page) -> None:
    """The first choice, checked: the verdict, the outline and the page under it appear."""
    main = page.locator('[data-testid="stMain"]')
    main.get_by_role("radiogroup", name="Your answer").get_by_role("radio").first.check(force=True)
    wait_for_run(page)
    main.get_by_role("button", name="Check my answer").click()
    expect(main.get_by_text("In words").first).to_be_visible()


def test_axe_finds_no_violation_in_a_lesson_step_once_answered(axe_page, server_url, axe_source, chrome_violations):
    """The lesson views above wait for the answer; here the page under the question too, with its outline."""
    view = LESSON_VIEWS[1]
    check_view(axe_page, server_url, view, axe_source, chrome_violations, "tiny, answered", then=answer_the_question)


def open_the_class_link(page: Page) -> None:
    """Its button (presenting: beside the title, the sidebar folded away): the class link's dialog, with its QR code,
    link and (on 127.0.0.1) warning."""
    page.locator('[data-testid="stMain"]').get_by_role("button", name="Show the class link").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("img", name="QR code of the class link")).to_be_visible()
    expect(dialog.get_by_text("Students' devices cannot open this link")).to_be_visible()


def test_axe_finds_no_violation_in_the_class_links_view(axe_page, server_url, axe_source, chrome_violations):
    """The dialog over a presenting page: axe checks what is open (the page under a modal dialog is inert)."""
    view = ("attention", {"present": "true"})
    check_view(axe_page, server_url, view, axe_source, chrome_violations, "tiny, class link", then=open_the_class_link)


def test_focus_rings_meet_wcag(axe_page, server_url):
    """2.4.7 (a helper's audit): a focus ring on a switch (it was a 1.2:1 tint), a tab's inside it (the tab strip
    clipped it to a 2 px bar) and a slider's on its thumb (the focused input is hidden: only Streamlit's 2.5:1 halo
    showed)."""
    page = axe_page
    page.goto(f"{server_url}/attention")
    wait_for_run(page)
    wait_for_layout(page)  # every widget in place: a control redrawn after the key presses loses their focus
    switch = page.get_by_role("switch", name="Presentation mode")
    focus_by_keyboard(page, switch)
    expect_ring(switch.locator("xpath=ancestor::label[1]"), color="rgb(26, 26, 26)")
    slider = page.get_by_role("slider", name="Encoder layer")
    focus_by_keyboard(page, slider)
    expect_ring(slider.locator("xpath=../.."), offset="2px")  # the slider's thumb
    tab = page.get_by_role("tab", name="Heatmap")
    focus_by_keyboard(page, tab)
    expect_ring(tab, offset="-2px")


THEME_PRIMARY = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]["primaryColor"]
FOCUS_INK = "#1a1a1a"  # the focus ring's near-black (components/ui/layout.py)


def colour(css: str) -> tuple[int, int, int]:
    """A colour as red, green, blue: "#c0142b", or as computed ("rgb(26, 26, 26)", "rgba(…, 1)")."""
    if css.startswith("#"):
        return int(css[1:3], 16), int(css[3:5], 16), int(css[5:7], 16)
    red, green, blue = (round(float(part)) for part in css[css.index("(") + 1 : -1].split(",")[:3])
    return red, green, blue


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two colours."""

    def luminance(rgb: tuple[int, int, int]) -> float:
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def expect_focus_border(box, where: str) -> None:
    """``box``'s border (it holds focus) in the focus ring's near-black: not red, not the theme's primary colour, and at
    least 3:1 against the box and the white page (WCAG 2.4.13 and 1.4.11)."""
    expect(box).to_have_css("border-top-color", "rgb(26, 26, 26)")  # polled: the border eases into its colour
    red, green, blue = shown = colour(box.evaluate("el => getComputedStyle(el).borderTopColor"))
    assert shown != colour(THEME_PRIMARY) and not (red > 100 and red > 2 * max(green, blue)), (where, shown)
    inside = colour(box.evaluate("el => getComputedStyle(el).backgroundColor"))
    assert contrast(shown, inside) >= 3 and contrast(shown, (255, 255, 255)) >= 3, (where, shown, inside)


def test_a_focused_box_is_not_bordered_in_the_error_red(open_url):
    """Enter in the Sentence box turned its border red: Streamlit borders a focused box in the theme's primary colour
    (#c0142b), which reads as an error. Its border is now the focus ring's near-black; so are a text area's, a number
    box's and a select box's (one of each, and the sidebar's model picker)."""
    page = open_url("attention", attn_tab="Head view")
    sentence = page.locator('[data-testid="stMain"] [data-testid="stTextInputRootElement"]').filter(
        has=page.get_by_role("textbox", name="Sentence", exact=True)
    )
    sentence.locator("input").click()
    sentence.locator("input").press("End")
    sentence.locator("input").type(" Really.")
    sentence.locator("input").press("Enter")  # applies the text: a rerun
    wait_for_run(page)
    expect(sentence.locator("input")).to_be_focused()
    expect_focus_border(sentence, "Sentence")
    for where, select in (("stMain", "stMultiSelect"), ("stSidebar", "stSelectbox")):
        box = page.locator(f'[data-testid="{where}"] [data-testid="{select}"]').first
        box.locator("input").click()
        page.keyboard.press("Escape")  # its list closed: the box itself, focused
        expect_focus_border(box.locator('[role="group"]'), select)
    page = open_url("senses", source="Paste lines")
    page.locator('[data-testid="stMain"] textarea').first.click()
    expect_focus_border(page.locator('[data-testid="stMain"] [data-testid="stTextAreaRootElement"]').first, "text area")
    page = open_url("fill_mask", text="The [MASK] sat.", pretrain="true")
    page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first.click()
    expect_focus_border(page.locator('[data-testid="stMain"] [data-testid="stNumberInputContainer"]').first, "number")


def focus_by_keyboard(page, control) -> None:
    """Move focus onto ``control`` with the keyboard (Shift+Tab, Tab), so it matches :focus-visible."""
    control.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    expect(control).to_be_focused()


def expect_ring(ringed, offset: str | None = None, color: str | None = None) -> None:
    """A solid 2 px focus outline on ``ringed`` (polled: one CI run read no ring right after the key press)."""
    expect(ringed).to_have_css("outline-style", "solid")
    expect(ringed).to_have_css("outline-width", "2px")
    if offset is not None:
        expect(ringed).to_have_css("outline-offset", offset)
    if color is not None:
        expect(ringed).to_have_css("outline-color", color)
