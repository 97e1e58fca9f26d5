"""Presentation mode: larger text for a projector, switched in the sidebar or by a class link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL
from components.html_table import is_table
from components.layout import COMPACT_CSS, PRESENTATION_CSS
from tests.conftest import APPTEST_TIMEOUT, ROOT


def styles(at: AppTest) -> list[str]:
    return [e.proto.body for e in at.get("html") if "<style>" in e.proto.body and not is_table(e.proto.body)]


def test_a_link_turns_it_on_for_a_page_alone(open_page):
    assert styles(open_page("pages/attention.py", BUNDLED_MODEL, present="true")) == [PRESENTATION_CSS]
    assert styles(open_page("pages/attention.py", BUNDLED_MODEL)) == [COMPACT_CSS]


def test_the_sidebar_switch_follows_the_link_and_every_page(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params["present"] = "true"
    at.run()
    assert not at.exception
    assert at.sidebar.toggle(key="present").value is True
    for path in ("pages/tokenizer.py", "pages/senses.py"):
        at.switch_page(path).run()
        assert styles(at) == [PRESENTATION_CSS], path
    at.sidebar.toggle(key="present").set_value(False).run()
    assert styles(at) == [COMPACT_CSS]
