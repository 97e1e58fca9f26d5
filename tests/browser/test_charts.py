"""In a real browser: the charts are drawn by BERT Lens's plotly.js, in Streamlit's chart theme."""

from __future__ import annotations

import json
from urllib.parse import urlparse

from playwright.sync_api import expect

from scripts.chart_theme import THEME, streamlit_theme
from tests.browser.conftest import wait_for_layout
from tests.browser.test_pages import main


def test_the_chart_theme_is_the_one_streamlit_draws(browser):
    """static/plotly/theme.json is what st.plotly_chart draws with this app's theme today: after a Streamlit upgrade
    or a theme change, run scripts/chart_theme.py."""
    assert json.loads(THEME.read_text()) == streamlit_theme(browser)


def test_charts_come_from_bertlens_plotly_and_3d_only_when_drawn(page, open_url):
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(urlparse(request.url).path))
    wait_for_layout(open_url("senses", preset="apple", senses_tab="Map", projection="PCA 2D"))
    assert "/app/static/plotly/plotly.js" in fetched and "/app/static/plotly/theme.json" in fetched
    assert not [path for path in fetched if "PlotlyChart" in path or "scatter3d" in path], fetched
    wait_for_layout(open_url("senses", preset="apple", senses_tab="Map", projection="PCA 3D", senses_axes="All three"))
    expect(main(page).locator(".js-plotly-plot .gl-container canvas").first).to_be_attached()
    assert [path for path in fetched if path.startswith("/app/static/plotly/scatter3d-")]


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
