"""One page registry (``bertlens.pages``): the app's navigation, the link schema's scopes, the home page's cards and
the page files all come from it, so a page is declared once."""

from __future__ import annotations

from pathlib import Path

from bertlens.pages import PAGES, TOOL_PAGES
from components.state.params import PAGES as SCOPES
from components.state.params import SCHEMA
from components.views.home.cards import CARDS

ROOT = Path(__file__).resolve().parents[2]


def test_each_registered_page_has_its_file_and_views_and_nothing_else_is_a_page():
    assert sorted(p.file for p in PAGES) == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    views = {p.name for p in (ROOT / "components" / "views").iterdir() if (p / "__init__.py").exists()}
    assert views == {p.stem for p in PAGES}


def test_the_link_schema_and_the_home_cards_read_the_registry():
    assert tuple(p.stem for p in PAGES) == SCOPES
    assert {param.scope for param in SCHEMA} - {"shared"} <= set(SCOPES)
    assert tuple(card.stem for card in CARDS) == TOOL_PAGES


def test_app_py_builds_its_navigation_from_the_registry():
    app = (ROOT / "app.py").read_text()
    assert "for page in PAGES" in app and "pages/" not in app.split("NAVIGATION")[1].split("\n")[0]
