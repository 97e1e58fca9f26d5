"""Moving between pages: shared values follow, a page's own values never reach another page.

Driven through ``app.py``'s navigation (``AppTest.switch_page``), as a student clicks the sidebar.
AppTest keeps the URL's parameters across a switch (a browser drops them), so every page also sees
the other pages' parameters here: the harsher case.
"""

from __future__ import annotations

import itertools

import pytest
from streamlit.testing.v1 import AppTest

from bertlens.nsp import DEFAULT_PAIRS
from bertlens.pages import TOOL_PAGES
from components.services.text import literal
from components.state.params import PARAMS, SCHEMA, SHARED
from components.state.widgets import FROM_HISTORY
from components.ui import layout
from components.views.attention import sections as attention_views
from tests.conftest import APPTEST_TIMEOUT, ROOT, assert_shows, drawn_charts, tables
from tests.core.test_nsp import reference_p_is_next
from tests.pages.test_next_sentence_page import metrics, shown
from tests.pages.test_senses_page import coordinates, messages

PAGES = TOOL_PAGES  # every page that shows the model (the registry, bertlens.pages)
TEXT = "The animal didn't cross the [MASK] because it was too tired."
B = "It was raining."


def app(monkeypatch, model, **params: str) -> AppTest:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(model))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(params)
    return at.run()


def visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, (page, at.exception)
    return at


def layer_slider(at: AppTest):
    return next(s for s in at.slider if "ayer" in s.label)


def senses_layer_box(at: AppTest):
    return next(s for s in at.selectbox if "last4" in s.options)


def declared_widget_values(at: AppTest) -> dict[str, object]:
    """Every widget bound to a declared parameter, with its value (widgets of the main area)."""
    values = {}
    for kind in ("slider", "selectbox", "text_input", "text_area", "radio", "toggle", "multiselect"):
        for widget in getattr(at.main, kind):
            if widget.key in PARAMS:
                values[widget.key] = widget.value
    return values


def test_a_layer_or_position_still_in_range_is_kept_when_the_range_changes(monkeypatch, tiny_pretraining_dir, bundled):
    """Another model's layers (or a longer sentence's positions) change a slider's range: Streamlit then draws a
    new slider, which started at 0 (layer 1 of the 6-layer encoder, through the 2-layer model and back, became 0).
    A value still in range is kept; one out of range is clamped."""
    at = app(monkeypatch, tiny_pretraining_dir)
    visit(at, "attention")
    at.sidebar.selectbox(key="model").set_value(bundled.name).run()
    at.slider(key="attn_layer").set_value(4).run()
    at.slider(key="head").set_value(3).run()
    at.sidebar.selectbox(key="model").set_value(str(tiny_pretraining_dir)).run()  # 2 layers × 4 heads
    assert (at.slider(key="attn_layer").value, at.slider(key="head").value) == (1, 3)  # the layer clamped
    at.sidebar.selectbox(key="model").set_value(bundled.name).run()
    assert not at.exception
    assert (at.slider(key="attn_layer").value, at.slider(key="head").value) == (1, 3)
    assert at.query_params["attn_layer"] == "1"
    visit(at, "anatomy")
    at.query_params["anatomy_tab"] = "Embeddings"
    at.run()
    at.slider(key="pos").set_value(3).run()
    at.text_input(key="text").set_value("A much longer sentence than the one before it.").run()
    assert not at.exception and at.slider(key="pos").value == 3


def test_an_upload_is_still_read_after_another_page_until_the_student_removes_it(monkeypatch, tiny_pretraining_dir):
    """The page said "Uploaded files stay in this tab", but Streamlit forgets a page's files on another page: a
    student back from the Tokenizer found "Choose a CSV file…" and their map gone."""
    at = app(monkeypatch, tiny_pretraining_dir)
    visit(at, "senses")
    at.radio(key="source").set_value("Upload CSV").run()
    at.text_input(key="senses_word").set_value("apple").run()
    csv = b"sentence,sense\nAn apple pie.,fruit\nApple shares.,company\nI ate an apple.,fruit\n"
    at.file_uploader(key="csv_upload").set_value(("mine.csv", csv, "text/csv")).run()
    assert list(coordinates(at).sense) == ["fruit", "company", "fruit"]
    visit(visit(at, "tokenizer"), "senses")
    assert list(coordinates(at).sense) == ["fruit", "company", "fruit"]
    assert f"Still reading {literal('mine.csv')}, chosen earlier in this tab" in messages(at, "caption")
    assert "Choose a CSV file" not in messages(at, "info")
    at.button(key="forget_csv_upload").click().run()  # the box is empty: forgotten by the button beside the caption
    assert "Choose a CSV file" in messages(at, "info") and not any({"x", "y"} <= set(t.columns) for t in tables(at))
    at.file_uploader(key="csv_upload").set_value(("mine.csv", csv, "text/csv")).run()
    at.file_uploader(key="csv_upload").clear().run()  # removed in the box: gone here too
    assert "Choose a CSV file" in messages(at, "info") and not any({"x", "y"} <= set(t.columns) for t in tables(at))
    at.file_uploader(key="csv_upload").set_value(("bad.csv", b"text\nAn apple pie.\n", "text/csv")).run()
    assert "`sentence` column" in messages(at, "error")
    visit(visit(at, "tokenizer"), "senses")  # a file that could not be read is not kept: the page asks for one
    assert "Choose a CSV file" in messages(at, "info") and not messages(at, "error")


def test_the_students_pairs_are_as_they_left_them_after_another_page(monkeypatch, tiny_pretraining_dir):
    """Edited or uploaded pairs went back to the notebook's ten after a visit to another page (Streamlit forgets
    an editor's edits and an uploader's files with the page): the caption promised they stay in the tab."""
    at = app(monkeypatch, tiny_pretraining_dir, nsp_tab="Evaluation")
    visit(at, "next_sentence")
    at.session_state["pairs"] = {"edited_rows": {0: {"sentence_a": "EDITED"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert tables(at)[-1]["sentence_a"].tolist()[0] == "EDITED"
    visit(visit(at, "tokenizer"), "next_sentence")
    at.query_params["nsp_tab"] = "Evaluation"
    at.run()
    scored = tables(at)[-1]["sentence_a"].tolist()
    assert scored[0] == "EDITED" and scored[1:] == DEFAULT_PAIRS["sentence_a"].tolist()[1:]
    assert "Your pairs, as you left them." in messages(at, "caption")
    at.session_state["pairs"] = {"edited_rows": {1: {"sentence_a": "AGAIN"}}, "added_rows": [], "deleted_rows": []}
    at.run()  # an edit after coming back applies once, to the pairs as left
    assert tables(at)[-1]["sentence_a"].tolist()[:2] == ["EDITED", "AGAIN"]

    own = DEFAULT_PAIRS.head(3).assign(sentence_a=["UP1", "UP2", "UP3"])
    at.file_uploader(key="pairs_csv").set_value(("mine.csv", own.to_csv(index=False).encode(), "text/csv")).run()
    assert tables(at)[-1]["sentence_a"].tolist() == ["UP1", "UP2", "UP3"]
    visit(visit(at, "tokenizer"), "next_sentence")
    at.query_params["nsp_tab"] = "Evaluation"
    at.run()
    assert tables(at)[-1]["sentence_a"].tolist() == ["UP1", "UP2", "UP3"]
    assert f"Still reading {literal('mine.csv')}" in messages(at, "caption")
    at.button(key="forget_pairs_csv").click().run()  # back to the notebook's ten
    assert tables(at)[-1]["sentence_a"].tolist() == DEFAULT_PAIRS["sentence_a"].tolist()


def test_word_senses_layer_never_turns_attention_into_a_range_slider(monkeypatch, bundled):
    at = app(monkeypatch, bundled.name)
    visit(at, "senses")
    senses_layer_box(at).select("4").run()
    visit(at, "attention")
    slider = layer_slider(at)
    assert slider.value == 0 and isinstance(slider.value, int)  # Attention's own default: nothing carried
    assert "(" not in str(at.query_params.get(slider.key, ""))
    assert not any("Layer (0" in str(m.value) for m in at.markdown)


def test_a_pages_own_settings_are_back_after_another_page_though_the_link_dropped_them(monkeypatch, bundled):
    at = app(monkeypatch, bundled.name)
    visit(at, "attention")
    layer_slider(at).set_value(3).run()
    at.session_state["attn_tab"] = "Head view"  # as a click on the tab leaves it
    at.run()
    head = next(s for s in at.slider if s.key == "head")
    head.set_value(5).run()
    visit(at, "tokenizer")
    at.query_params.clear()  # a browser drops the page's link on a switch (AppTest keeps it)
    visit(at, "attention")
    assert layer_slider(at).value == 3 and next(s for s in at.slider if s.key == "head").value == 5
    assert at.session_state["attn_tab"] == "Head view" and at.query_params["attn_tab"] == "Head view"
    assert at.query_params["attn_layer"] == "3"  # the link shows the view again
    at.query_params.clear()
    at.query_params["attn_layer"] = "1"  # a link's value wins over the session's copy
    visit(at, "tokenizer")
    at.query_params["attn_layer"] = "1"
    visit(at, "attention")
    assert layer_slider(at).value == 1


def test_a_setting_that_broke_the_page_is_not_brought_back(monkeypatch, bundled):
    def broken_at_layer_3(page, choice, heads):
        if choice.layer == 3:
            raise RuntimeError("a bug at layer 3")

    monkeypatch.setattr(attention_views, "heatmap_section", broken_at_layer_3)
    at = app(monkeypatch, bundled.name)
    visit(at, "attention")
    layer_slider(at).set_value(3).run()
    assert at.exception  # the bug shows
    at.switch_page("pages/tokenizer.py").run()
    at.query_params.clear()
    visit(at, "attention")
    assert layer_slider(at).value == 0  # the last view that ran without an error


def test_a_bound_setting_that_broke_the_page_is_not_brought_back(monkeypatch, bundled):
    """Streamlit itself keeps a bound widget's value across pages: not copying it was not enough."""

    def broken_when_averaged(page, choice, heads):
        if choice.mean:
            raise RuntimeError("a bug with the heads averaged")

    monkeypatch.setattr(attention_views, "heatmap_section", broken_when_averaged)
    at = app(monkeypatch, bundled.name)
    visit(at, "attention")
    layer_slider(at).set_value(2).run()  # a setting that works: it is brought back
    at.toggle(key="mean").set_value(True).run()
    assert at.exception  # the bug shows
    at.switch_page("pages/tokenizer.py").run()
    at.query_params.clear()
    visit(at, "attention")
    assert at.toggle(key="mean").value is False and layer_slider(at).value == 2  # the last view that ran


def test_attention_layer_is_not_read_as_a_hidden_state_on_word_senses(monkeypatch, bundled):
    at = app(monkeypatch, bundled.name)
    visit(at, "attention")
    layer_slider(at).set_value(3).run()
    visit(at, "senses")
    assert senses_layer_box(at).value == "6"  # its own default (the last hidden state), not encoder layer 3's "3"


def test_tokenizer_then_word_senses_keeps_the_word_to_follow(monkeypatch, bundled):
    at = app(monkeypatch, bundled.name, tokenizer_tab="Vocabulary")
    visit(at, "tokenizer")
    visit(at, "senses")
    word = next(t for t in at.text_input if t.label == "Word to follow")
    assert word.value == "field"  # the preset's word


def test_every_parameter_a_page_writes_is_declared(monkeypatch, tiny_pretraining_dir):
    at = app(monkeypatch, tiny_pretraining_dir, text=TEXT)
    for page in PAGES:
        visit(at, page)
        assert set(at.query_params) <= set(PARAMS), (page, set(at.query_params) - set(PARAMS))
        for key, _ in declared_widget_values(at).items():
            assert PARAMS[key].scope in (SHARED, page), (page, key)


def _examples(page: str) -> dict[str, str]:
    return {p.name: p.example for p in SCHEMA if p.scope == page and not p.multi}


@pytest.fixture(scope="module")
def fresh_views(tiny_pretraining_dir) -> dict[str, dict[str, object]]:
    """Each page's declared widgets when opened straight from the home page with the shared values."""
    views = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for page in PAGES:
            views[page] = declared_widget_values(visit(app(monkeypatch, tiny_pretraining_dir, text=TEXT, b=B), page))
    return views


@pytest.mark.parametrize("source,target", list(itertools.permutations(PAGES, 2)))
def test_every_route_keeps_shared_values_and_nothing_else(
    monkeypatch, tiny_pretraining_dir, fresh_views, source, target
):
    # The source page opened from a link that sets every one of its parameters to a non-default value.
    at = app(monkeypatch, tiny_pretraining_dir, text=TEXT, b=B, **_examples(source))
    visit(at, source)
    applied = {k: v for k, v in declared_widget_values(at).items() if str(v) == _examples(source).get(k)}
    assert applied, "the link set none of the source page's values: the route would test nothing"
    visit(at, target)
    assert at.sidebar.selectbox(key="model").value == str(tiny_pretraining_dir)
    if "text" in (declared := declared_widget_values(at)):
        assert declared["text"] == TEXT
    if "b" in declared and target != "next_sentence":
        assert declared["b"] == B
    assert declared == fresh_views[target]  # exactly the page as opened fresh: none of the source's values


def test_old_links_open_the_view_they_showed(open_page, bundled):
    at = open_page("pages/senses.py", bundled.name, layer="4", word="bank", preset="bank")
    assert at.selectbox(key="senses_layer").value == "4" and at.text_input(key="senses_word").value == "bank"
    assert "layer" not in at.query_params and at.query_params["senses_layer"] == "4"
    at = open_page("pages/attention.py", bundled.name, layer="3", tab="Head view")
    assert at.slider(key="attn_layer").value == 3 and at.query_params["attn_tab"] == "Head view"


def test_an_old_name_that_means_nothing_on_the_page_is_dropped_with_a_message(open_page, bundled):
    at = open_page("pages/tokenizer.py", bundled.name, layer="3")
    assert not at.exception and "layer" not in at.query_params
    assert any("`layer` parameter is from an older version" in i.value for i in at.info)


def test_a_foreign_session_value_is_reported_and_never_reaches_the_widget(monkeypatch, bundled):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", bundled.name)
    at = AppTest.from_file(str(ROOT / "pages/attention.py"), default_timeout=APPTEST_TIMEOUT)
    at.session_state["attn_layer"] = "4"  # a string, as Word senses once left under its name
    at.run()
    assert not at.exception and at.slider(key="attn_layer").value == 0
    assert any("`attn_layer` setting (4)" in w.value for w in at.warning)


@pytest.mark.parametrize("page", ["next_sentence", "home"])
def test_the_link_of_a_page_without_the_sentence_keeps_it(monkeypatch, tiny_pretraining_dir, page):
    """Next sentence reads A and B, not ``text``; its link once dropped the sentence, so a reload, or the class
    link opened by a student, showed every other page's default sentence instead of the teacher's."""
    at = app(monkeypatch, tiny_pretraining_dir)
    visit(at, "attention")
    at.text_input(key="text").set_value("Teacher sentence about rivers.").run()
    at.query_params.clear()  # a browser drops the page's link on a switch (AppTest keeps it)
    visit(at, page)
    assert at.query_params["text"] == "Teacher sentence about rivers."
    at.query_params.clear()
    visit(at, "attention")  # and it is still the shared sentence there
    assert at.text_input(key="text").value == "Teacher sentence about rivers."


@pytest.mark.parametrize(("start", "params", "then", "key"), [
    ("next_sentence", {"text": "A linked sentence about rivers."}, "attention", "text"),
    ("home", {"text": "A linked sentence about rivers."}, "tokenizer", "text"),
    ("attention", {"a": "A linked sentence A."}, "next_sentence", "a"),
    ("fill_mask", {"text": "A [MASK] link.", "b": "A linked sentence B."}, "tokenizer", "b"),
])  # fmt: skip
def test_a_links_shared_texts_follow_the_student_from_a_page_that_does_not_show_them(
    monkeypatch, tiny_pretraining_dir, start, params, then, key
):
    """A class link made on Next sentence carries ``text``; students who opened it lost the teacher's sentence
    at their first page switch, because only a page that drew the sentence took it from the link."""
    at = app(monkeypatch, tiny_pretraining_dir, **params)
    if start != "home":
        visit(at, start)
    at.query_params.clear()  # a browser drops the page's link on a switch (AppTest keeps it)
    visit(at, then)
    assert at.text_input(key=key).value == params[key]


def test_a_pair_built_on_another_page_is_the_pair_next_sentence_scores(
    monkeypatch, tiny_pretraining_dir, tiny_bundle, nsp_model
):
    """Next sentence showed its example A with the B the student gave Attention, and scored that pair, one nobody
    made. Arriving with a B and no A of their own, A is the other pages' sentence; the pair is then theirs."""
    at = app(monkeypatch, tiny_pretraining_dir)
    visit(at, "attention")
    at.text_input(key="b").set_value(B).run()  # the sentence stays Attention's default
    at.query_params.clear()  # a browser drops the page's link on a switch (AppTest keeps it)
    visit(at, "next_sentence")
    a = "The animal didn't cross the street because it was too tired."
    assert (at.text_input(key="a").value, at.text_input(key="b").value) == (a, B)
    (p,) = reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(a, B)])
    assert_shows(metrics(at)["P(IsNext)"], "{}", p, places=4)
    assert "The pair the other pages show" in shown(at)
    assert at.query_params["a"] == a  # the link opens this pair, not the example A with B
    at.text_input(key="b").input(" ").run()  # no B: no pair to speak of
    assert "The pair the other pages show" not in shown(at)
    at.text_input(key="b").input(B).run()
    visit(at, "attention")
    at.text_input(key="text").set_value(TEXT).run()  # A is the student's now: another sentence does not move it
    at.query_params.clear()
    visit(at, "next_sentence")
    assert at.text_input(key="a").value == a and "The pair the other pages show" not in shown(at)
    assert at.button(key="use_shared")  # the newer sentence is a click away


def test_a_b_first_given_on_next_sentence_keeps_the_example_a(monkeypatch, tiny_pretraining_dir):
    at = app(monkeypatch, tiny_pretraining_dir)
    visit(at, "next_sentence")
    at.text_input(key="b").set_value(B).run()
    assert at.text_input(key="a").value == "The weather is beautiful today."  # not the other pages' sentence
    at.query_params.clear()
    visit(at, "tokenizer")
    at.query_params.clear()
    visit(at, "next_sentence")
    assert (at.text_input(key="a").value, at.text_input(key="b").value) == ("The weather is beautiful today.", B)


def test_a_next_sentence_link_without_a_still_opens_the_example_a(monkeypatch, tiny_pretraining_dir):
    """Links made before A followed a pair from another page: ``b`` alone meant the example A, and still does."""
    at = app(monkeypatch, tiny_pretraining_dir, b=B, text=TEXT)
    visit(at, "next_sentence")
    assert (at.text_input(key="a").value, at.text_input(key="b").value) == ("The weather is beautiful today.", B)


def test_a_links_view_survives_leaving_before_the_first_run_ends(monkeypatch, tiny_pretraining_dir):
    """On a busy server a student left a shared Attention link while its first run still waited for the model,
    and came back to layer 0, head 0 and the Heatmap: the run that would have drawn the link's settings never
    finished (a hosted-mode audit, in Chromium). Here the first run stops before it draws them."""
    link = {"text": "The cat sat on the mat.", "attn_layer": "1", "head": "2", "attn_tab": "Head view"}
    real_controls = attention_views.controls
    monkeypatch.setattr(attention_views, "controls", lambda bundle: layout.stop_page())
    at = app(monkeypatch, tiny_pretraining_dir, **link)
    visit(at, "attention")
    assert not at.slider  # stopped before its controls
    at.query_params.clear()  # a browser drops the page's link on a switch (AppTest keeps it)
    visit(at, "tokenizer")
    monkeypatch.setattr(attention_views, "controls", real_controls)
    at.query_params.clear()
    visit(at, "attention")
    assert at.slider(key="attn_layer").value == 1 and at.slider(key="head").value == 2
    assert drawn_charts(at.tabs[attention_views.TABS.index("Head view")])  # the link's tab is the open one


def test_a_link_setting_that_broke_the_page_is_not_brought_back_by_the_kept_link(monkeypatch, tiny_pretraining_dir):
    """The link's settings are kept until widgets hold them; a setting whose first run raised must not come back
    with them (the page would raise on every return: a review of the change that keeps them)."""
    real = attention_views.heatmap_section

    def breaks_at_layer_1(page, choice, heads):
        if choice.layer == 1:
            raise RuntimeError("broken view")
        real(page, choice, heads)

    monkeypatch.setattr(attention_views, "heatmap_section", breaks_at_layer_1)
    at = app(monkeypatch, tiny_pretraining_dir, text="The cat sat.", attn_layer="1")
    at.switch_page("pages/attention.py").run()
    assert at.exception  # the link's view raised
    at.query_params.clear()
    visit(at, "tokenizer")
    at.query_params.clear()
    visit(at, "attention")  # asserts no exception
    assert at.slider(key="attn_layer").value == 0


def test_back_to_an_entry_shows_that_entry_not_an_older_links_kept_settings(monkeypatch, tiny_pretraining_dir):
    real_controls = attention_views.controls
    monkeypatch.setattr(attention_views, "controls", lambda bundle: layout.stop_page())
    at = app(monkeypatch, tiny_pretraining_dir, text="The cat sat.", attn_layer="1", head="2")
    visit(at, "attention")  # stopped before its controls: the link's settings are kept
    monkeypatch.setattr(attention_views, "controls", real_controls)
    at.query_params.clear()
    at.query_params.update({"text": "The cat sat.", FROM_HISTORY: "1"})  # Back to an entry with the default view
    visit(at, "attention")
    assert at.slider(key="attn_layer").value == 0 and at.slider(key="head").value == 0


def test_back_keeps_the_entrys_shared_texts_for_the_next_page(monkeypatch, tiny_pretraining_dir):
    """Back dropped the session's shared texts so that the entry's address is the view; but a text the page does
    not show (A, on Tokenizer) then lived only in the address, and the next page switch lost it."""
    at = app(monkeypatch, tiny_pretraining_dir, a="LinkA")
    visit(at, "next_sentence")
    at.query_params.clear()
    at.query_params["a"] = "LinkA"
    visit(at, "tokenizer")
    at.text_input(key="text").set_value("Mine").run()
    at.query_params.clear()
    at.query_params.update({"a": "LinkA", FROM_HISTORY: "1"})  # Back to the entry before "Mine"
    visit(at, "tokenizer")
    at.query_params.clear()
    visit(at, "next_sentence")
    assert at.text_input(key="a").value == "LinkA"


def test_a_lesson_follows_the_student_to_another_page_until_left(monkeypatch, tiny_pretraining_dir):
    """A sidebar click dropped ``lesson`` and ``step`` (shared parameters) with the rest of the address: the
    lesson panel vanished, and its 'Open the … page for this step' could not be reached (lessons audit)."""

    def panel(at: AppTest) -> list[str]:
        return [c.value for c in at.caption if c.value.startswith("Lesson: ")]

    at = app(monkeypatch, tiny_pretraining_dir, lesson="discover", step="2")
    visit(at, "tokenizer")
    at.query_params.clear()  # a sidebar click: the browser drops the address's parameters
    visit(at, "anatomy")
    assert at.query_params["lesson"] == "discover" and at.query_params["step"] == "2"
    assert panel(at) and any(b.label.startswith("Open the ") for b in at.button)
    at = app(monkeypatch, tiny_pretraining_dir, lesson="discover", step="2")
    visit(at, "tokenizer")
    at.query_params.clear()
    at.query_params[FROM_HISTORY] = "1"  # Back to an entry from before the lesson
    visit(at, "anatomy")
    assert "lesson" not in at.query_params and not panel(at)
