"""In a real browser: the charts are drawn by BERT Lens's plotly.js, in Streamlit's chart theme."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlencode, urlparse

import pytest
from playwright.sync_api import expect

from scripts.chart_theme import THEME, streamlit_theme
from tests.browser.conftest import wait_for_layout
from tests.browser.test_pages import main


def test_the_chart_theme_is_the_one_streamlit_draws(browser):
    """static/plotly/theme.json is what st.plotly_chart draws with this app's theme today: after a Streamlit upgrade
    or a theme change, run `python -m scripts.chart_theme`."""
    assert json.loads(THEME.read_text()) == streamlit_theme(browser)


@pytest.mark.new_tab
def test_charts_come_from_bertlens_plotly_and_3d_only_when_drawn(page, open_url):
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(urlparse(request.url).path))
    wait_for_layout(open_url("senses", preset="apple", senses_tab="Map", projection="PCA 2D"))
    assert "/app/static/plotly/plotly.js" in fetched and "/app/static/plotly/theme.json" in fetched
    assert not [path for path in fetched if "PlotlyChart" in path or "scatter3d" in path], fetched
    wait_for_layout(open_url("senses", preset="apple", senses_tab="Map", projection="PCA 3D", senses_axes="All three"))
    expect(main(page).locator(".js-plotly-plot .gl-container canvas").first).to_be_attached()
    assert [path for path in fetched if path.startswith("/app/static/plotly/scatter3d-")]


@pytest.mark.new_tab
def test_the_element_code_comes_once_for_every_chart_of_a_page(page, open_url):
    """Each chart's message carries only a loader (components.ui.plotly_chart.ENTRY); its code is one file."""
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(urlparse(request.url).path))
    wait_for_layout(open_url("tokenizer", tokenizer_tab="Padding lab"))
    assert main(page).locator(".bl-chart:has(.main-svg)").count() >= 2
    assert fetched.count("/app/static/plotly_chart.js") == 1, fetched


def test_the_toolbar_is_streamlits_and_fullscreen_fills_the_screen(open_url):
    """The buttons st.plotly_chart showed, in its order: plotly's "Share chart" (it sends the data to Plotly's cloud)
    and the selection tools left out, Fullscreen added (a projector); out of full screen the chart is as it was."""
    page = open_url("attention", text="The cat sat on the mat")
    chart = main(page).locator(".bl-chart").first
    expect(chart.locator(".main-svg").first).to_be_attached()
    before = chart.bounding_box()
    chart.hover()
    titles = chart.locator(".modebar-btn").evaluate_all("buttons => buttons.map(b => b.getAttribute('data-title'))")
    assert titles == ["Download plot as a PNG", "Zoom", "Pan", "Zoom in", "Zoom out", "Autoscale", "Reset axes",
                      "Fullscreen"]  # fmt: skip
    chart.locator('[data-title="Fullscreen"]').click()
    page.wait_for_function("() => document.fullscreenElement?.classList.contains('bl-chart')")
    expect(chart.locator(".main-svg").first).to_have_attribute("height", str(page.viewport_size["height"]))
    chart.hover()
    chart.locator('[data-title="Fullscreen"]').click()
    page.wait_for_function("() => !document.fullscreenElement")
    expect(chart.locator(".main-svg").first).to_have_attribute("height", str(round(before["height"])))


def test_on_a_phone_the_toolbar_keeps_png_reset_and_fullscreen_beside_the_title(browser, server_url):
    """A touch screen shows plotly's toolbar all the time: its zoom and pan tools covered the chart's title at
    390 px (and a swipe scrolls the page there)."""
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = phone.new_page()
        page.goto(f"{server_url}/attention?text=The+cat+sat+on+the+mat")
        chart = main(page).locator(".bl-chart").first
        expect(chart.locator(".main-svg").first).to_be_attached()
        titles = chart.locator(".modebar-btn").evaluate_all("buttons => buttons.map(b => b.getAttribute('data-title'))")
        assert titles[:2] == ["Download plot as a PNG", "Reset axes"] and set(titles[2:]) <= {"Fullscreen"}, titles
        title, toolbar = chart.locator(".gtitle").bounding_box(), chart.locator(".modebar").bounding_box()
        assert title and toolbar and title["x"] + title["width"] <= toolbar["x"], (title, toolbar)
    finally:
        phone.close()


# The shown x tick labels of a chart: left and right edges on screen, and the angle each is drawn at.
X_LABELS = """chart => [...chart.querySelectorAll(".xtick text")].filter(t => getComputedStyle(t).display !== "none")
  .map(t => { const box = t.getBoundingClientRect();
    return [box.left, box.right, Number(t.getAttribute("transform")?.match(/rotate\\(([-0-9.]+)/)?.[1] ?? 0)]; })"""


@pytest.mark.parametrize(
    ("width", "height", "tokens", "angle"), [(390, 844, 15, -90), (1280, 720, 15, -60), (1280, 720, 102, -90)]
)
def test_the_heatmaps_token_labels_never_run_into_each_other(browser, server_url, width, height, tokens, angle):
    """At 390 px (a phone) the heatmap's 15 key labels, slanted, ran into each other, as did a long sentence's on a
    laptop: they stand upright there, as many as fit; a short sentence on a laptop keeps them slanted, all shown."""
    words = "The students read a short story about the [MASK] near the river." if tokens == 15 else "word " * 100
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{server_url}/attention?{urlencode({'text': words})}")
        chart = main(page).locator(".bl-chart").first
        expect(chart.locator(".xtick text").first).to_be_attached()
        labels = chart.evaluate(X_LABELS)
        assert {label_angle for *_, label_angle in labels} == {angle}, labels
        assert all(left >= right_before - 0.5 for (_, right_before, _), (left, _, _) in zip(labels, labels[1:])), labels
        assert len(labels) == tokens if angle == -60 else tokens / 3 <= len(labels) < tokens, labels
    finally:
        context.close()


def test_probability_axes_read_as_decimals(open_url):
    """Layer by layer's axis read "100μ, 200μ" (plotly's SI prefixes) where the Guesses chart wrote 0.0001."""
    page = open_url("fill_mask", text="The capital of France is [MASK].", fill_tab="Layer by layer")
    ticks = main(page).locator(".bl-chart").first.locator(".ytick text")
    expect(ticks.first).to_be_attached()
    labels = ticks.all_text_contents()
    assert len(labels) >= 2 and all(re.fullmatch(r"0|0\.\d+|1", label) for label in labels), labels


# The size (px) each shown label is drawn at: its font size, times the scale plotly shrinks it by to fit its slice.
SHOWN_TEXT_SIZES = """texts => texts
  .filter(t => t.textContent && getComputedStyle(t).display !== "none" && getComputedStyle(t).opacity !== "0")
  .map(t => parseFloat(getComputedStyle(t).fontSize) * Math.hypot(t.getCTM().a, t.getCTM().b))"""


def test_the_parameters_sunburst_shows_no_label_too_small_to_read(open_url):
    """The thinnest slices (the heads, the pooler) carried labels a few pixels high; their hovers name them."""
    page = open_url("anatomy", anatomy_tab="Parameters")
    labels = main(page).locator(".bl-chart .slicetext")
    expect(labels.first).to_be_attached()
    sizes = labels.evaluate_all(SHOWN_TEXT_SIZES)
    assert sizes and min(sizes) >= 10, sizes


@pytest.mark.new_tab
def test_a_click_picks_a_head_and_reruns_nothing_on_a_chart_that_picks_nothing(page, open_url):
    """All heads: a click on a thumbnail opens that head (its point's customdata goes to the server). The Padding
    lab's ids heatmap has customdata too but no callback: a click on it sends nothing (it reran the page)."""
    sent: list = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda frame: sent.append(frame)))
    open_url("attention", text="The cat sat on the mat", attn_tab="All heads")
    wait_for_layout(page)
    overview = main(page).locator(".bl-chart").first
    layer, head = overview.evaluate("chart => chart.data[1].customdata.at(-1)")  # the last head of the last layer
    overview.locator(".scatterlayer .trace").last.locator("path.point").last.click(force=True)
    page.wait_for_url(
        lambda url: {("attn_layer", str(layer)), ("head", str(head))} <= set(parse_qsl(urlparse(url).query))
    )
    wait_for_layout(page)
    heatmap = main(page).locator(".bl-chart").first
    expect(heatmap).to_have_attribute("aria-label", re.compile(rf"Encoder layer {layer}, head {head}"))
    open_url("tokenizer", tokenizer_tab="Padding lab")
    wait_for_layout(page)
    ids = main(page).locator(".st-key-ids_heatmap .bl-chart")
    assert ids.evaluate("chart => chart.data[0].customdata.length") > 0
    sent.clear()
    ids.locator(".nsewdrag").first.click()
    page.wait_for_timeout(1500)
    assert sent == []


# Counts each chart's draws (plotly's "plotly_afterplot" event) on the chart element itself.
COUNT_DRAWS = """Object.defineProperty(HTMLDivElement.prototype, "emit", { configurable: true, set(emit) {
  Object.defineProperty(this, "emit", { configurable: true, writable: true, value: (name, ...rest) => {
    if (name === "plotly_afterplot") this.bertlensDraws = (this.bertlensDraws || 0) + 1;
    return emit.call(this, name, ...rest); } }); } });"""


@pytest.mark.new_tab
def test_each_chart_is_drawn_once(page, open_url):
    """st.plotly_chart drew each chart twice (its theme applied after a first draw); a resize observer's first call
    would redraw it too."""
    page.add_init_script(COUNT_DRAWS)
    for path, params in (("attention", {"text": "The cat sat"}), ("tokenizer", {"tokenizer_tab": "Padding lab"})):
        wait_for_layout(open_url(path, **params))
        page.wait_for_timeout(500)  # a second draw came ~100 ms after the first
        draws = main(page).locator(".bl-chart").evaluate_all("charts => charts.map(chart => chart.bertlensDraws)")
        assert draws and set(draws) == {1}, (path, draws)


@pytest.mark.parametrize("tab", ["Separation by layer", "Static vs contextual"])
def test_at_200_percent_zoom_word_senses_axis_titles_are_whole(browser, server_url, tab):
    """At 640×360 in presentation mode the layer charts' long x-axis titles (what 0, h and static mean) were cut at
    both ends: one line wider than the chart."""
    context = browser.new_context(viewport={"width": 640, "height": 360})
    try:
        page = context.new_page()
        page.goto(f"{server_url}/senses?{urlencode({'present': 'true', 'senses_tab': tab})}")
        chart = main(page).locator(".bl-chart").first
        expect(chart.locator(".xtitle").first).to_be_attached()
        box, title = chart.bounding_box(), chart.locator(".xtitle").bounding_box()
        assert box and title and box["x"] <= title["x"] and title["x"] + title["width"] <= box["x"] + box["width"]
        assert title["y"] + title["height"] <= box["y"] + box["height"], (title, box)
    finally:
        context.close()


@pytest.mark.new_tab
def test_leaving_a_chart_tab_raises_nothing_in_the_browser(page, open_url):
    """Each switch away from a chart's tab threw in the browser (the chart, hidden, was resized to 0 by plotly)."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    wait_for_layout(open_url("attention", attn_tab="Heatmap"))
    for name in ("Head view", "Heatmap", "Token focus", "Heatmap"):
        page.get_by_role("tab", name=name).click()
        wait_for_layout(page)
    page.wait_for_timeout(500)  # a resize observer's last call
    assert not errors, errors
