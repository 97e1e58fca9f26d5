"""A shared link is often the first request a server gets (a cold container, a class opening the
teacher's link). Streamlit would then run the page file as an old-style ``pages/`` app — no
sidebar, no model picker, narrow layout — until someone opened ``/``. The page must still open
inside ``app.py``."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import wait_for_run
from tests.live_server import streamlit_server


def test_first_request_deep_link_opens_inside_the_app(browser_context, tiny_pretraining_dir, tmp_path):
    with streamlit_server(tiny_pretraining_dir, tmp_path / "server.log") as url:
        page = browser_context.new_page()
        page.goto(f"{url}/tokenizer?text=Sinan+loves+a+beautiful+day")
        wait_for_run(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar.locator('[data-testid="stSelectbox"]').first).to_contain_text("Model")
        expect(sidebar.get_by_role("link", name="Model anatomy")).to_be_visible()  # app.py's titles, not file names
        expect(page.locator(".st-key-text input")).to_have_value("Sinan loves a beautiful day")
        page.close()
