"""The first visitor of a freshly started server (a teacher who has just typed ``streamlit run app.py``)."""

from __future__ import annotations

from playwright.sync_api import expect

from bertlens.pages import PAGE_TITLES
from tests.browser.conftest import RUN_TIMEOUT_MS
from tests.live_server import streamlit_server


def test_while_a_fresh_server_imports_the_app_the_sidebar_shows_the_pages_titles(
    browser, tiny_pretraining_dir, tmp_path
):
    """The first run imports torch and transformers (~5 s): the sidebar showed Streamlit's raw list of the pages/
    files ("anatomy", "fill mask", "app") meanwhile, and the page was blank."""
    with streamlit_server(tiny_pretraining_dir, tmp_path / "server.log") as url:
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        try:
            page = context.new_page()
            page.goto(url)
            expect(page.get_by_text("Starting BERT Lens")).to_be_visible(timeout=RUN_TIMEOUT_MS)
            links = page.locator('[data-testid="stSidebarNavLink"]')
            shown = [text.split("\n")[-1] for text in links.all_inner_texts()]  # after the icon's ligature name
            assert shown == list(PAGE_TITLES.values())  # while the import is under way
            expect(page.get_by_text("Starting BERT Lens")).to_be_visible()  # (it still was)
            expect(page.locator("h1")).to_have_text(PAGE_TITLES["home"], timeout=RUN_TIMEOUT_MS)
            expect(page.get_by_text("Starting BERT Lens")).to_have_count(0)
        finally:
            context.close()
