"""A link's parameters as the student sees them (``components.state.params``, ``components.state.widgets``): what a malformed,
repeated or differently spelt value opens, and what the page says about it."""

from __future__ import annotations

import pytest
from streamlit.runtime.state.query_params import QueryParams
from streamlit.testing.v1 import AppTest

from bertlens.curriculum import LESSONS
from bertlens.mlm import DEFAULT_K
from components.services.text import literal
from components.ui.layout import PRESENTATION_CSS
from tests.conftest import APPTEST_TIMEOUT, ROOT
from tests.pages.test_attention_page import warnings
from tests.pages.test_lessons_page import app, step_link
from tests.pages.test_presentation import styles


@pytest.mark.parametrize("raw", ["100000", "0", "-3", "07", " 7", "+7", "1_0", "٣", "３"])
def test_an_out_of_range_number_in_the_link_opens_the_default_the_warning_promises(
    open_page, tiny_pretraining_dir, raw
):
    """Not the nearest value in range: the warning says "using the default", and the slider must show it. A number
    is written as the page writes it: Python's ``int`` reads "07", "1_0" or "٣" too, and opened them in silence."""
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="A [MASK] here.", k=raw)
    assert not at.exception
    assert (
        f"The link's `k` parameter ({literal(raw)}) is not a whole number from 1 to 50; using the default."
        in warnings(at)
    )
    assert at.slider(key="k").value == DEFAULT_K
    assert "k" not in at.query_params  # the default needs no link value


def test_a_mask_number_written_otherwise_is_warned_about(open_page, tiny_pretraining_dir):
    """The warning's check read "02" as 2 while the select box, matching text, silently opened mask 1."""
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="The [MASK] sat on the [MASK].", at_mask="02")
    assert "The link's `at_mask` parameter (02) is not a mask number from 1 to 2; using the default." in warnings(at)
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="The [MASK] sat on the [MASK].", at_mask="2")
    assert not warnings(at) and at.query_params["at_mask"] == "2"


def test_a_token_mask_and_see_cannot_hide_is_named_as_such(open_page, tiny_pretraining_dir):
    """[CLS] is a token of the input: the warning said it was not, where the picker only leaves it out."""
    at = open_page("pages/attention.py", tiny_pretraining_dir, attn_tab="Mask and see", see_token="0 [CLS]")
    assert "is not a token of this input that can be hidden (not a special token, nor the watched one)" in warnings(at)


def test_an_out_of_range_layer_in_an_old_link_opens_layer_0(open_page, tiny_pretraining_dir):
    at = open_page("pages/attention.py", tiny_pretraining_dir, layer="99")  # two layers: 0 and 1
    assert "`layer` parameter (99) is not a whole number from 0 to 1; using the default." in warnings(at)
    assert at.slider(key="attn_layer").value == 0


def test_a_parameter_given_twice_is_named_with_its_count_and_the_last_value_is_used(open_page, bundled):
    at = open_page("pages/tokenizer.py", bundled.name, text=["First one.", "Second one."])
    assert not at.exception
    assert "The link gives `text` 2 times; the last value is used." in [i.value for i in at.info]
    assert at.text_input(key="text").value == "Second one."
    once = open_page("pages/tokenizer.py", bundled.name, text="First one.")
    assert not any("times" in i.value for i in once.info)


def test_a_repeated_choice_opens_its_last_value_and_the_link_keeps_only_that(open_page, tiny_pretraining_dir):
    """The segmented control took the first of a repeated value while the page said the last was used; and a
    repeated value stayed in the address (and so in the class link) after the page had chosen one."""
    at = open_page("pages/attention.py", tiny_pretraining_dir, view=["Rollout", "Raw attention"])
    assert "The link gives `view` 2 times; the last value is used." in [i.value for i in at.info]
    assert at.get("button_group")[0].value == "Raw attention"
    at = open_page("pages/attention.py", tiny_pretraining_dir, view=["Raw attention", "Rollout"])
    assert at.get("button_group")[0].value == "Rollout"
    at = open_page("pages/attention.py", tiny_pretraining_dir, attn_tab="Head view", focus=["1 the", "2 animal"])
    assert at.query_params["focus"] == "2 animal"


def test_an_old_name_given_twice_is_named_too(open_page, tiny_pretraining_dir):
    at = open_page("pages/attention.py", tiny_pretraining_dir, layer=["1", "0"])
    assert (
        "The link gives `layer` 2 times; the last value is used. (`layer` is called `attn_layer` on this page now.)"
        in [i.value for i in at.info]
    )
    assert at.slider(key="attn_layer").value == 0


def test_an_old_name_with_a_bad_value_is_warned_about_once_and_leaves_the_link(open_page, tiny_pretraining_dir):
    """It was moved to the new name and kept there, warned about again on every run and copied into class links."""
    at = open_page("pages/senses.py", tiny_pretraining_dir, layer="abc")
    assert "`layer` parameter (abc)" in warnings(at)
    assert "senses_layer" not in at.query_params and "layer" not in at.query_params
    at.run()
    assert "abc" not in warnings(at)
    assert "senses_layer" not in at.query_params


@pytest.mark.parametrize("spelt", ["true", "True", "TRUE"])
def test_a_link_turns_presentation_mode_on_however_true_is_spelt(open_page, spelt):
    """The switch accepts true in any case without a warning, so a page on its own must present too."""
    at = open_page("pages/tokenizer.py", present=spelt)
    assert not at.exception and "`present`" not in warnings(at)
    assert styles(at) == [PRESENTATION_CSS]


def test_a_lesson_step_opens_every_head_it_draws_together(monkeypatch, tiny_pretraining_dir):
    """Discover step 7 draws heads 0-3 together; the step's view (in session state, as in its link) keeps all four."""
    discover = LESSONS["discover"]
    at = app(monkeypatch, tiny_pretraining_dir, "attention", **step_link(discover, 5, 2))
    at.button(key="_lesson_next").click().run()
    assert not at.exception and at.session_state["attn_tab"] == "Head view"
    assert at.multiselect(key="heads").value == ["0", "1", "2", "3"]
    assert at.query_params["heads"] == ["0", "1", "2", "3"]


def test_app_presentation_switch_follows_a_capitalised_true(monkeypatch):
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params["present"] = "True"
    at.run()
    assert not at.exception
    assert at.sidebar.toggle(key="present").value is True and styles(at) == [PRESENTATION_CSS]


@pytest.mark.parametrize("raw", ["First line\rsecond", "First line\r\nsecond", "First line\n\nsecond"])
def test_a_line_break_in_the_links_sentence_becomes_a_space(open_page, bundled, raw):
    """The one-line input would join the words ("linesecond") and the page would analyse them apart."""
    at = open_page("pages/tokenizer.py", bundled.name, text=raw)
    assert at.text_input(key="text").value == "First line second"


def test_old_word_and_lines_links_open_word_senses_with_their_values(open_page, bundled):
    """``word`` and ``lines`` are the tokenizer's names now; an old Word senses link still means its own."""
    at = open_page("pages/senses.py", bundled.name, word="river", lines="a river | water\nthe river | flow")
    assert not at.exception
    assert at.text_input(key="senses_word").value == "river"
    assert at.query_params["senses_word"] == "river" and "word" not in at.query_params
    assert at.query_params["senses_lines"] == "a river | water\nthe river | flow" and "lines" not in at.query_params


def test_a_value_the_students_own_edit_puts_out_of_range_is_no_fault_of_the_link(open_page, tiny_pretraining_dir):
    """The browser's address keeps the widget's last value: after a new sentence with fewer masks, a warning
    about "the link's `at_mask`" named a link the student never used."""
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="[MASK] then [MASK] then [MASK].")
    at.selectbox(key="at_mask").set_value(3).run()
    assert not at.exception and at.selectbox(key="at_mask").value == 3
    at.query_params["at_mask"] = "3"  # as the browser's address still has it (AppTest does not write it)
    at.text_input(key="text").set_value("[MASK] then [MASK].").run()
    assert not at.exception and "`at_mask`" not in warnings(at)
    assert at.selectbox(key="at_mask").value == 2
    linked = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="[MASK] then [MASK].", at_mask="3")
    assert "The link's `at_mask` parameter (3) is not a mask number from 1 to 2" in warnings(linked)


@pytest.mark.parametrize(
    "page, params",
    [
        ("attention", {"text": "The cat sat on the mat.", "attn_layer": "1", "head": "2", "attn_tab": "Step by step"}),
        ("next_sentence", {"text": "The cat sat on the mat.", "a": "I was hungry.", "b": "So I ate."}),
        ("tokenizer", {"tokenizer_tab": "Padding lab", "pad_len": "16", "lines": "one\ntwo words"}),
    ],
)
def test_a_run_that_changes_nothing_writes_nothing_to_the_link(
    open_page, tiny_pretraining_dir, monkeypatch, page, params
):
    """Each write sends the server's copy of the address, which can be older than the browser's (a bound widget's
    change is written straight into the browser's address): a run may write only what it changes."""
    at = open_page(f"pages/{page}.py", tiny_pretraining_dir, **params)
    assert not at.exception, at.exception
    sent: list[str] = []
    monkeypatch.setattr(QueryParams, "_send_query_param_msg", lambda self: sent.append(str(self)))
    at.run()
    assert not at.exception, at.exception
    assert sent == []
    assert {k: at.query_params.get(k) for k in params} == params  # the link still holds every setting


@pytest.mark.parametrize(("page", "spelt", "shown", "meant"),
                         [("tokenizer", "Text", "Text", "text"), ("tokenizer", "tex", "tex", "text"),
                          ("attention", "attn-layr", "attn-layr", "attn_layer"),
                          ("next_sentence", "candid\n\n# ates", "candid  # ates", "candidates")])  # fmt: skip
def test_a_misspelt_parameter_is_named_with_the_one_meant_and_left_out(
    open_page, tiny_pretraining_dir, page, spelt, shown, meant
):
    """A teacher's typo in a link opened the default view in silence. A name with a blank line in it (a link's
    ``candid%0A%0A%23%20ates``) is named on one line: its blank line started Markdown of its own, a heading."""
    at = open_page(f"pages/{page}.py", tiny_pretraining_dir, **{spelt: "2"})
    assert not at.exception
    message = f"The link's `{shown}` parameter is not one BERT Lens reads: did you mean `{meant}`? It was left out."
    assert message in [i.value for i in at.info]
    assert spelt not in at.query_params


def test_a_parameter_bertlens_does_not_read_is_otherwise_left_alone(open_page, tiny_pretraining_dir):
    """A platform's tracking tag, another page's parameter, Streamlit's own: no message, and still in the link."""
    at = open_page("pages/tokenizer.py", tiny_pretraining_dir, utm_source="newsletter", attn_layer="1", embed="true")
    assert not at.exception and not [i.value for i in at.info if "did you mean" in i.value]
    assert (at.query_params["utm_source"], at.query_params["attn_layer"]) == ("newsletter", "1")
