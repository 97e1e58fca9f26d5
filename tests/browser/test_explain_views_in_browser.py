"""In a real browser: choices made in the new views land in the link, and the link reopens the same view."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import wait_for_layout, wait_for_run
from tests.browser.test_pages import chart_text, main, type_into


def test_step_by_step_choice_lands_in_the_link_and_reopens(open_url):
    page = open_url("attention", tab="Step by step", layer="1", head="2")
    expect(main(page)).to_contain_text("computes the row of 10 it")
    page.locator(".st-key-step_query [role=combobox]").click()  # the box itself, wherever the layout puts it
    page.get_by_role("option", name="13 tired").click()
    expect(page).to_have_url(re.compile(r"step_query=13(\+|%20)tired"))  # written by the browser, before the run
    expect(main(page)).to_contain_text("computes the row of 13 tired")  # the run has begun: wait_for_run waits now
    wait_for_run(page)
    link = page.url  # after the run's own writes to the address
    page.goto("about:blank")
    page.goto(link)
    wait_for_run(page)
    expect(main(page)).to_contain_text("computes the row of 13 tired")
    first = page.locator('[data-testid="stMain"] .js-plotly-plot').first  # charts mount asynchronously, in any order
    expect(first).to_contain_text("Step 1")
    assert "13 tired" in chart_text(page)


def test_compare_and_mask_and_see_choices_land_in_the_link(open_url):
    page = open_url("attention", tab="Compare")
    type_into(page, "compare", "The animal didn't cross the road because it was too wide.")
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"compare=The"))
    expect(main(page)).to_contain_text("street → road, tired → wide")
    page = open_url("attention", tab="Mask and see")
    page.locator(".st-key-see_mode").get_by_text("Delete the token").click()
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"see_mode=Delete"))
    expect(main(page)).to_contain_text("(hidden)")  # one token hidden by default, named on its bar
    page.locator(".st-key-see_scope").get_by_text("Every token in turn", exact=False).click()
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"see_scope=Every"))
    expect(main(page)).to_contain_text("Rank correlation")
    page = open_url("fill_mask", text="The capital of France is [MASK].", fill_tab="Compare two sentences")
    type_into(page, "fill_compare", "The capital of Italy is [MASK].")
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"fill_compare=The"))
    expect(main(page)).to_contain_text("france → italy")


def test_head_view_click_on_a_key_token_focuses_who_attends_to_it(open_url):
    page = open_url("attention", text="The cat sat on the mat", tab="Head view", layer="1", head="3")
    chart = main(page).locator(".js-plotly-plot").first
    keys = chart.locator(".scatterlayer .trace").last  # the right-hand column (keys) is drawn last
    wait_for_layout(page)  # widgets above the chart swap in for their skeletons and move it down
    # At the point's place at click time (force: plotly's drag layer on top takes the click, as a student's)
    keys.locator("path.point").nth(2).click(force=True)  # as a student clicks "cat"
    expect(page).to_have_url(re.compile(r"focus=2(\+|%20)cat"))  # its run began: wait_for_run could pass before
    expect(page).to_have_url(re.compile(r"focus_side=who(\+|%20)attends"))
    wait_for_run(page)
    page.locator(".st-key-heads [role=combobox]").click()
    page.get_by_role("option", name="2", exact=True).click()
    page.keyboard.press("Escape")  # close the list, as a student does
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"heads=2"))
    page.get_by_role("button", name="All 4 heads").click()
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"heads=0&heads=1&heads=2&heads=3"))
    expect(chart).to_contain_text("head 3")  # the legend names the heads drawn together
