"""A view's link stays short enough for servers to accept it (``components.state.params.fit_link``)."""

from urllib.parse import urlencode

from streamlit.testing.v1 import AppTest

from bertlens.curriculum import LESSONS
from tests.conftest import APPTEST_TIMEOUT
from tests.pages.test_lessons_page import app


def test_a_link_too_long_for_servers_leaves_the_longest_value_out_and_says_so(monkeypatch, tiny_pretraining_dir):
    long = "中文句子。" * 3000  # 15,000 characters, 135,000 in a link: servers refuse such a request line
    at = app(monkeypatch, tiny_pretraining_dir, text=long, b="short")
    assert not at.exception
    assert "text" not in at.query_params and at.query_params["b"] == "short"
    notice = " ".join(i.value for i in at.info)
    assert "Too long for a link" in notice and "`text` (135," in notice
    at = app(monkeypatch, tiny_pretraining_dir, text="中文句子。" * 100)  # 4,500 characters as a link: kept
    assert at.query_params["text"] == "中文句子。" * 100 and not any("Too long" in i.value for i in at.info)


def test_malformed_switches_and_lesson_links_get_a_message(monkeypatch, tiny_pretraining_dir):
    """Streamlit turns a switch off for any value but true/false, and a bad lesson link was ignored, silently."""
    for params, name in (
        ({"present": "banana"}, "present"),
        ({"lesson": "nope", "step": "1"}, "lesson"),
        ({"lesson": "discover", "step": "999"}, "step"),
        ({"lesson": "discover", "step": "abc"}, "step"),
        ({"step": "abc"}, "step"),  # a step of no lesson (it was dropped silently)
    ):
        at = app(monkeypatch, tiny_pretraining_dir, **params)
        assert not at.exception
        assert any(f"`{name}` parameter" in w.value for w in at.warning), params
        if "lesson" not in params:
            assert "step" not in at.query_params
        elif name == "step":  # the step opened replaces the bad value in the address
            last = str(len(LESSONS["discover"].steps))
            assert at.query_params["step"] == (last if params["step"] == "999" else "1"), params
        if name == "lesson":  # no such lesson: out of the address
            assert "lesson" not in at.query_params and "step" not in at.query_params


def test_a_widgets_own_long_value_stays_and_nothing_breaks():
    """Streamlit refuses to drop a value bound to a widget (bind="query-params"): the others go instead."""
    script = """
import streamlit as st
from components.state.params import fit_link
st.text_area("Candidate Bs", key="candidates", bind="query-params")
st.session_state["dropped"] = fit_link()
"""
    at = AppTest.from_string(script, default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(candidates="中" * 2000, text="x" * 7000)
    at.run()
    assert not at.exception
    assert at.session_state["dropped"] == {"text": len("text=") + 7000}
    assert at.query_params["candidates"] == "中" * 2000


def test_a_long_paste_in_a_text_box_is_left_out_of_the_link_and_still_used():
    """A page's own text boxes write the link themselves (``linked_text``), so a paste too long for a link
    can be left out of it like the shared sentence."""
    script = """
import streamlit as st
from components.state.params import copy_page_state, fit_link, restore_page_state
from components.state.widgets import linked_text
restore_page_state("tokenizer")  # as every page's header does
if not st.session_state.get("hidden"):
    st.session_state["used"] = linked_text(st.text_area, "Sentences, one per line", "lines", "a default")
copy_page_state()  # as app.py does after the page
st.session_state["dropped"] = fit_link()
"""
    at = AppTest.from_string(script, default_timeout=APPTEST_TIMEOUT)
    long = "中文句子。" * 2000
    at.query_params.update(lines=long, b="short")
    at.run()
    assert not at.exception
    assert at.session_state["dropped"] == {"lines": len(urlencode({"lines": long}))}
    assert "lines" not in at.query_params and at.query_params["b"] == "short"
    assert at.session_state["used"] == at.text_area(key="lines").value == long  # the page keeps using it
    at.session_state["hidden"] = True  # another tab or page: the box is not drawn, and a browser drops the link
    at.query_params.clear()
    at.run()
    at.session_state["hidden"] = False
    at.run()
    assert at.text_area(key="lines").value == long  # still the pasted text, though the link never held it
    at.text_area(key="lines").input("two\nlines").run()
    assert at.query_params["lines"] == "two\nlines" and at.session_state["dropped"] == {}
    at.text_area(key="lines").input("a default").run()
    assert "lines" not in at.query_params  # the default needs no link value
