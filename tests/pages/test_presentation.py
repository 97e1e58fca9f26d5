"""Presentation mode: larger text for a projector, switched in the sidebar or by a class link."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL
from components.ui.exports import PROJECTOR_TEXT, PROJECTOR_TITLES, grown_height
from components.ui.html_table import is_table
from components.ui.layout import COMPACT_CSS, PRESENTATION_CSS
from components.views.anatomy import sections as anatomy_views
from tests.conftest import APPTEST_TIMEOUT, ROOT, drawn_charts


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


CHART_PAGES = [
    ("pages/attention.py", {}),
    ("pages/attention.py", {"attn_tab": "Head view"}),
    ("pages/attention.py", {"attn_tab": "All heads"}),
    ("pages/attention.py", {"attn_tab": "Head statistics"}),
    ("pages/attention.py", {"attn_tab": "Step by step"}),
    ("pages/fill_mask.py", {"text": "The capital of France is [MASK]."}),
    ("pages/senses.py", {}),
    ("pages/senses.py", {"projection": "PCA 3D"}),
    ("pages/tokenizer.py", {"tokenizer_tab": "Padding lab"}),
    ("pages/anatomy.py", {"anatomy_tab": "Parameters"}),
    ("pages/next_sentence.py", {"nsp_tab": "Evaluation"}),
]


def test_a_chart_grows_with_its_text_within_the_pictures_room():
    """Up to the 520 px a 720 px projector leaves the picture; a chart already taller keeps its height (scrolls)."""
    assert [grown_height(h) for h in (300, 405, 500, 540, 900)] == [400, 520, 520, 540, 900]


def layouts(at: AppTest) -> list[dict]:
    return [json.loads(chart.spec)["layout"] for chart in drawn_charts(at)]


@pytest.mark.parametrize(("page", "params"), CHART_PAGES)
def test_chart_text_grows_on_a_projector_where_the_chart_theme_sets_it(page, params, open_page, tiny_pretraining_dir):
    """Chart text was 12 px in presentation mode: the page's text grew, the charts' did not. Each size is set
    where Streamlit's chart theme sets its own (ticks, axis titles, legend), and a set height grows with it."""
    plain = layouts(open_page(page, tiny_pretraining_dir, **params))
    presented = layouts(open_page(page, tiny_pretraining_dir, present="true", **params))
    assert plain and len(plain) == len(presented)
    for before, after in zip(plain, presented, strict=True):
        assert "size" not in before.get("font", {})
        assert after["font"]["size"] == PROJECTOR_TEXT
        assert after["legend"]["font"]["size"] == PROJECTOR_TEXT
        for axis in [after[name] for name in after if name.startswith(("xaxis", "yaxis"))]:
            assert (axis["tickfont"]["size"], axis["title"]["font"]["size"]) == (PROJECTOR_TEXT, PROJECTOR_TITLES)
        if before.get("title", {}).get("text"):
            assert after["title"]["font"]["size"] == PROJECTOR_TITLES
        else:  # no title made up (Streamlit would draw an empty bold one)
            assert "title" not in after
        if "height" in before:
            assert after["height"] == grown_height(before["height"])
        # Subplot titles ("Step 3 — softmax: …") and labels drawn on a chart are annotations.
        assert [a["font"]["size"] for a in after.get("annotations", [])] == [PROJECTOR_TITLES] * len(
            before.get("annotations", [])
        )


def test_the_shared_architecture_diagram_is_never_written(open_page, tiny_pretraining_dir):
    """The diagram is one figure shared by every session (st.cache_resource): presentation mode leaves it as built,
    so no other student's diagram changes (a projector gets a diagram of its own, built with larger text: at 11 px
    the boxes' parameter counts could not be read from the back row). Every run draws the same cached object, so a
    write shows only against a copy serialised before any presenting run: the figure as first built, then drawn
    for a projector, then drawn plain again must be the same figure, byte for byte."""

    def diagram(**params: str) -> str:
        [chart] = drawn_charts(open_page("pages/anatomy.py", tiny_pretraining_dir, **params))
        return chart.spec

    anatomy_views.architecture_chart.clear()  # built afresh here, by a plain run: no earlier test's writes in it
    before = diagram()
    presented = diagram(present="true")
    after = diagram()
    assert after == before and diagram(present="true") == presented  # the projector's copy is never written either
    plain, projected = json.loads(after)["layout"], json.loads(presented)["layout"]
    assert "size" not in plain.get("font", {}) and plain["height"] == 700
    sizes = {a["font"]["size"] for a in plain["annotations"] if a.get("text")}
    projected_sizes = {a["font"]["size"] for a in projected["annotations"] if a.get("text")}
    assert sizes == {11} and projected_sizes == {16} and projected["height"] == round(700 * 16 / 11)
