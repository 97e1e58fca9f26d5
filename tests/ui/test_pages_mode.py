"""``components.ui.layout.run_inside_app`` switches off Streamlit's old ``pages/``-folder mode by hand.

Streamlit 1.67 has no supported setting for that (checked: no config option names the pages folder;
``client.showSidebarNavigation`` only hides the links), and calling ``st.navigation`` is what switches
it off. These tests pin the internals it relies on, so a Streamlit upgrade that changes them (or adds a
supported way) fails here rather than in a classroom. The behaviour itself: tests/browser/test_fresh_server_deep_link.py.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from streamlit import config
from streamlit.commands import navigation
from streamlit.runtime.pages_manager import PagesManager

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_still_switches_the_folder_mode_off_as_we_do():
    assert "uses_pages_directory" in vars(PagesManager)
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation.navigation)


def test_streamlit_still_offers_no_setting_for_it():
    options = config.get_config_options()
    assert len(options) > 50 and "client.showSidebarNavigation" in options  # the options really were read
    assert [name for name in options if "page" in name.lower()] == []


def test_only_layout_touches_the_pages_manager():
    users = [
        p.relative_to(ROOT).as_posix()
        for folder in ("components", "pages", "bertlens")
        for p in (ROOT / folder).rglob("*.py")
        if "PagesManager" in p.read_text()
    ]
    assert users == ["components/ui/layout.py"]
    assert "PagesManager" not in (ROOT / "app.py").read_text()
