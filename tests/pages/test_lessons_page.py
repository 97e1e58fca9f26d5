"""The lesson panel on the live pages: a link opens a step, Next opens the next step's page with its view,
and a question's reveal is the model's own output. The class link carries the whole view."""

from __future__ import annotations

from urllib.parse import parse_qs, quote_plus, urlsplit

import pytest
import torch
from streamlit.testing.v1 import AppTest
from transformers import AutoTokenizer, BertModel

from bertlens import curriculum
from bertlens.curriculum import LESSONS
from bertlens.lessons import COMPARED, PAGE_HEADS, resolve
from bertlens.pages import PAGE_TITLES
from bertlens.wording import first_words, percent
from components.state.params import EVERY_TOKEN, PARAMS, session_value
from components.ui import layout
from components.ui.class_link import SHOW
from components.ui.lessons import CALLOUT_WORDS, FOLLOWED, SHARED_TEXTS
from tests.conftest import APPTEST_TIMEOUT, ROOT, assert_shows, renderings, tables
from tests.core.test_mlm import reference_fill_mask

DISCOVER = LESSONS["discover"]


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.header])


def step_link(lesson, index: int, num_layers: int) -> dict[str, str]:
    params = {k: v for k, v in resolve(lesson.steps[index].params, num_layers).items() if not isinstance(v, list)}
    return {**params, "lesson": lesson.key, "step": str(index + 1)}


def app(monkeypatch, server_model, page: str = "home", class_link_open: bool = False, **params: str) -> AppTest:
    """``app.py`` on the home page, then (with a lesson link) the step's page through the panel's button.

    Not ``AppTest.switch_page``: the page it picks sticks to every later run, so Next and Back could not
    leave it.

    AppTest resets ``PagesManager.uses_pages_directory`` before every run (a server sets it once), so
    ``run_inside_app`` would rerun each run and eat the click that started it: it is a no-op here.
    """
    monkeypatch.setattr(layout, "run_inside_app", lambda: None)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(server_model))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(params)
    if class_link_open:  # the sidebar's button, clicked (AppTest's later runs run the page alone, without app.py)
        at.session_state[SHOW] = True
    at.run()
    if page != "home":
        at.button(key="_lesson_open").click().run()
        assert at.title[0].value != "BERT Lens"
    return at


def test_a_link_opens_the_step_and_the_reveal_is_the_models_answer(
    open_page, tiny_pretraining_dir, tiny_bundle, masked_lm
):
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, **step_link(DISCOVER, 1, 2))
    assert not at.exception
    assert f"step 2 of {len(DISCOVER.steps)}" in shown(at) and "Predict the hidden word" in [s.value for s in at.header]
    assert len(DISCOVER.steps) == 10 and [p.value for p in at.get("progress")] == [20]  # 2 of 10 steps
    assert "does not" in shown(at)  # the "next word" misconception callout
    assert page_waits(at) and r"Sentence: **The \[MASK\] chased the mouse\.**" in shown(at)  # what to predict on
    at.button(key="_lesson_discover_1_check").click().run()  # nothing to check before a guess
    # An alert (role="status": screen readers announce it; a caption was silent), and no verdict
    assert [w.value for w in at.warning] == ["Choose or type an answer first."] and not at.success and page_waits(at)
    at.text_input(key="_lesson_discover_1_guess").input("zebra")  # in a form: sent with the submit below
    at.button(key="_lesson_discover_1_check").click().run()
    assert not page_waits(at) and at.text_input(key="text").value == "The [MASK] chased the mouse."
    top = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, "The [MASK] chased the mouse.", 1)[0][0]
    verdict = " ".join(w.value for w in [*at.warning, *at.success])
    assert f"computed live, it is “**{top['token_str'].strip()}**”" in verdict or top["token_str"].strip() == "zebra"
    assert any(p in verdict for p in renderings(top["score"], percent))


def page_waits(at: AppTest) -> bool:
    """Whether the page waits for the step's question (its own widgets not drawn yet)."""
    waiting = "Your answer first" in shown(at)
    assert waiting == (not [t for t in at.text_input if t.key == "text"]), "the page waits exactly while it says so"
    return waiting


def test_the_page_waits_for_an_answer_or_a_skip(open_page, tiny_pretraining_dir):
    """A question's answer is on its page (the heatmap, the guesses): the page waits until the student has
    answered, or chooses to skip, and keeps the step's view meanwhile."""
    at = open_page("pages/attention.py", tiny_pretraining_dir, **step_link(DISCOVER, 3, 2))
    assert page_waits(at) and not at.slider and f"Sentence: **{curriculum.ANIMAL_TIRED[:20]}" in shown(at)
    assert "outlined below" not in shown(at)  # the control is not drawn yet
    at.button(key="_lesson_discover_3_skip").click().run()
    assert not at.exception and not page_waits(at) and "outlined below" in shown(at)
    step = DISCOVER.steps[3]
    assert f"outlined below: {PARAMS[step.control].meaning.split(' (')[0]}." in shown(at)  # named, not only seen
    assert at.slider(key="attn_layer").value == 1 and at.text_input(key="text").value == curriculum.ANIMAL_TIRED
    assert not [*at.success, *at.warning]  # skipped: no answer revealed, and the question stays
    assert at.button(key="_lesson_discover_3_check")


def test_an_answered_question_stays_answered(monkeypatch, tiny_pretraining_dir):
    """The answer box is a widget, which Streamlit forgets on a run that does not draw it: Back to an answered
    step, or its page opened after answering on another page, waited again with an empty box."""
    at = app(monkeypatch, tiny_pretraining_dir, "fill_mask", **step_link(DISCOVER, 1, 2))
    answer_and_check(at, "_lesson_discover_1")
    at.button(key="_lesson_next").click().run()
    assert page_waits(at)  # step 3: a question of its own
    at.button(key="_lesson_back").click().run()
    assert f"step 2 of {len(DISCOVER.steps)}" in shown(at) and not page_waits(at)
    assert at.text_input(key="_lesson_discover_1_guess").value == "paris" and "you said “paris”" in shown(at)

    at = app(monkeypatch, tiny_pretraining_dir, **step_link(DISCOVER, 3, 2))  # the attention step, on home
    answer_and_check(at, "_lesson_discover_3")
    at.button(key="_lesson_open").click().run()
    assert at.title[0].value == "Attention" and not page_waits(at) and at.slider(key="attn_layer").value == 1


def test_a_bare_lesson_link_opens_the_steps_view(open_page, tiny_pretraining_dir):
    """``?lesson=discover&step=2`` alone: the question asked about the step's sentence while the page showed the
    page's default one (no [MASK]: no guesses)."""
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, lesson="discover", step="2")
    assert not at.exception and page_waits(at) and at.query_params["text"] == "The [MASK] chased the mouse."
    at.button(key="_lesson_discover_1_skip").click().run()
    assert at.text_input(key="text").value == "The [MASK] chased the mouse." and tables(at)  # the guesses
    at.text_input(key="text").input("A [MASK] day.").run()  # the student's own sentence stays theirs
    assert at.text_input(key="text").value == "A [MASK] day." and not page_waits(at)


def test_encoder_only_model_says_the_head_is_missing(open_page, bundled):
    at = open_page("pages/fill_mask.py", bundled.name, **step_link(DISCOVER, 1, 6))
    assert not at.exception
    assert "needs a model with the MLM head" in shown(at) and not page_waits(at)  # nothing to wait for
    assert not [w for w in at.text_input if w.key == "_lesson_discover_1_guess"]  # nothing to predict against
    # Said once: the panel says the step asks nothing; where to get the head is the page's own explanation's
    # (both said it). On another page, the panel says it.
    (notice,) = [i.value for i in at.info if "needs a model with the MLM head" in i.value]
    assert notice.endswith("So this step asks nothing.") and "hf download" not in notice
    elsewhere = open_page("pages/attention.py", bundled.name, **step_link(DISCOVER, 1, 6))
    assert "hf download bert-base-uncased" in shown(elsewhere)


def mean_last_layer_attention(model_dir, text: str, query: str, targets: tuple[str, ...]) -> list[float]:
    """How much ``query`` attends to each target word in the model's last layer, averaged over its heads: the
    checkpoint run by transformers itself (eager attention, which returns the weights)."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    encoded = tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        last = model(**encoded, output_attentions=True).attentions[-1][0].numpy()  # (heads, tokens, tokens)
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    row = last.mean(axis=0)[tokens.index(query)]
    return [float(row[tokens.index(word)]) for word in targets]


def test_choice_question_reveals_the_attention_answer(open_page, tiny_pretraining_dir):
    """The reveal's weights and winner are the model's own: "it" attends more to "animal" or to "street" in the
    last layer, averaged over its heads."""
    at = open_page("pages/attention.py", tiny_pretraining_dir, **step_link(DISCOVER, 3, 2))
    assert not at.exception
    at.radio(key="_lesson_discover_3_guess").set_value("street")  # in a form: sent with the submit below
    at.button(key="_lesson_discover_3_check").click().run()
    assert at.session_state["attn_tab"] == "Token focus"
    assert at.slider(key="attn_layer").value == 1  # the last encoder layer of the tiny model
    animal, street = mean_last_layer_attention(
        tiny_pretraining_dir, curriculum.ANIMAL_TIRED, "it", ("animal", "street")
    )
    assert_shows(shown(at), "“animal” {} and “street” {}", animal, street, places=3)
    winner = "animal" if animal > street else "street"
    assert f"attends more to **{winner}** here" in shown(at)
    assert ("Right" in shown(at)) == (winner == "street")


def test_next_opens_the_next_steps_page_with_its_view(monkeypatch, tiny_pretraining_dir):
    at = app(monkeypatch, tiny_pretraining_dir, "fill_mask", **step_link(DISCOVER, 2, 2))
    assert not at.exception and f"step 3 of {len(DISCOVER.steps)}" in shown(at)
    at.button(key="_lesson_discover_2_skip").click().run()
    assert at.text_input(key="text").value == "Paris is the most [MASK] city in the world."
    at.button(key="_lesson_next").click().run()
    assert not at.exception
    assert f"step 4 of {len(DISCOVER.steps)}" in shown(at) and at.title[0].value == "Attention"
    url = dict(at.query_params)  # the page waits for the step's question, and its view is in the link already
    assert url["lesson"] == "discover" and url["step"] == "4"
    assert url["attn_tab"] == "Token focus" and url["attn_layer"] == "1"  # the tiny model's last encoder layer
    assert url["targets"] == ["2 animal", "8 street"]
    at.button(key="_lesson_discover_3_skip").click().run()
    assert at.text_input(key="text").value == curriculum.ANIMAL_TIRED  # the step's sentence, not the last one
    assert {k: at.query_params[k] for k in ("attn_tab", "attn_layer")} == {
        k: url[k] for k in ("attn_tab", "attn_layer")
    }  # the view the page waited with; its targets are that sentence's defaults now, so the link may leave them out
    assert at.query_params.get("targets", []) in (url["targets"], [])
    assert at.multiselect(key="targets").value == [2, 8]  # the positions of "animal" and "street"
    at.button(key="_lesson_back").click().run()
    assert f"step 3 of {len(DISCOVER.steps)}" in shown(at) and at.title[0].value == "Fill-mask"


@pytest.mark.parametrize("pinned", ["present", "model"])
def test_next_opens_the_next_steps_page_when_the_link_pins_the_model_or_presentation(
    monkeypatch, tiny_pretraining_dir, bundled, pinned
):
    """A class link pins the model, and a teacher's may turn presentation mode on: both are sidebar widgets
    bound to the URL, which ``st.switch_page`` refuses to set (Next once left the student where they were)."""
    pin = {"present": "true"} if pinned == "present" else {"model": bundled.name}  # not the server's default
    at = app(monkeypatch, tiny_pretraining_dir, "fill_mask", **step_link(DISCOVER, 1, 2), **pin)
    assert not at.exception and at.title[0].value == "Fill-mask"
    at.button(key="_lesson_next").click().run()
    at.button(key="_lesson_next").click().run()
    assert not at.exception and at.title[0].value == "Attention"
    assert f"step 4 of {len(DISCOVER.steps)}" in shown(at)
    assert at.session_state[pinned] == (True if pinned == "present" else bundled.name)  # still pinned


def test_a_step_that_leaves_a_control_out_gets_the_pages_own_default(monkeypatch, bundled):
    """Word senses step 1 sets hidden state 0; step 2 sets none: the page's default (the last hidden state), not
    the first option, which a picker declaring its default only on its first draw gave."""
    at = app(monkeypatch, bundled.name, "senses", **step_link(LESSONS["senses"], 0, 6))
    assert at.selectbox(key="senses_layer").value == "0"
    at.button(key="_lesson_next").click().run()
    assert not at.exception and f"step 2 of {len(LESSONS['senses'].steps)}" in shown(at)
    assert at.selectbox(key="senses_layer").value == "6"  # the bundled encoder's last hidden state


def test_home_lists_the_lessons_and_starts_one(monkeypatch, tiny_pretraining_dir):
    at = app(monkeypatch, tiny_pretraining_dir)
    assert not at.exception
    for lesson in LESSONS.values():
        assert at.button(key=f"_lesson_start_{lesson.key}").label == f"Start the lesson “{lesson.title}”"
    at.button(key="_lesson_start_discover").click().run()
    assert f"step 1 of {len(DISCOVER.steps)}" in shown(at) and at.title[0].value == "Tokenizer"


def class_link(at: AppTest) -> str:
    [dialog] = at.get("dialog")  # the class link's view
    [link] = [c.value for c in dialog.get("code")]  # its only code block: the link
    return link


def test_class_link_carries_the_step_view_and_model(monkeypatch, tiny_pretraining_dir):
    """On the home page's first run (later AppTest runs, and switched-to pages, run without app.py's
    sidebar); tests/browser/test_lessons_in_browser.py checks the link on the Attention page, as it changes."""
    closed = app(monkeypatch, tiny_pretraining_dir, **step_link(DISCOVER, 3, 2))
    assert closed.get("dialog") == [] and closed.get("code") == [] and not closed.exception  # nothing drawn
    at = app(monkeypatch, tiny_pretraining_dir, class_link_open=True, **step_link(DISCOVER, 3, 2))
    link = class_link(at)
    assert link.startswith("/?") and f"model={quote_plus(str(tiny_pretraining_dir))}" in link
    for part in ("lesson=discover", "step=4", "attn_tab=Token+focus", "attn_layer=1", "text=The+animal"):
        assert part in link, (part, link)


def test_class_link_keeps_every_value_of_a_repeated_parameter(monkeypatch, tiny_pretraining_dir):
    """The head view's heads are one URL parameter given once per head: a link with only the last of them opened
    every student on one head instead of the teacher's two."""
    at = app(monkeypatch, tiny_pretraining_dir, class_link_open=True, attn_tab="Head view", heads=["1", "3"])
    assert not at.exception
    link = class_link(at)
    assert parse_qs(urlsplit(link).query)["heads"] == ["1", "3"], link


def test_class_link_says_what_a_too_long_link_leaves_out(monkeypatch, tiny_pretraining_dir):
    """QA: the link left the 9,000-character sentence out (the page said so), and the sidebar still promised every
    student "the same sentence"."""
    at = app(monkeypatch, tiny_pretraining_dir, class_link_open=True, text="word " * 1_800)
    assert not at.exception and "text=" not in class_link(at)
    said = " ".join(c.value for c in at.get("dialog")[0].get("caption"))
    assert "Too long to share whole: it leaves out `text`" in said and "with the same sentence" not in said, said


def answer_and_check(at: AppTest, key: str) -> None:
    """Answer the step's question (its first choice, or a word) and check it."""
    radios = [r for r in at.radio if r.key == f"{key}_guess"]
    if radios:
        radios[0].set_value(radios[0].options[0])  # in a form: sent with the submit
    else:
        at.text_input(key=f"{key}_guess").input("paris")
    at.button(key=f"{key}_check").click().run()


@pytest.mark.parametrize("model", ["tiny", "bundled"])
@pytest.mark.parametrize("lesson", list(LESSONS.values()), ids=list(LESSONS))
def test_every_lesson_walks_to_its_last_step(monkeypatch, tiny_pretraining_dir, bundled, lesson, model):
    """Start on the home page, then Next through every step: each opens its page with no error, shows its
    callouts, and its question's reveal (or, on the encoder-only model, which head is missing)."""
    at = app(monkeypatch, tiny_pretraining_dir if model == "tiny" else bundled.name)
    at.button(key=f"_lesson_start_{lesson.key}").click().run()
    for index, step in enumerate(lesson.steps):
        assert not at.exception, (lesson.key, index, at.exception)
        assert f"step {index + 1} of {len(lesson.steps)}" in shown(at)
        assert step.title in [s.value for s in at.header]
        assert at.title[0].value == PAGE_TITLES[step.page]
        for callout in step.callouts:  # its lead in a callout, the rest under "More"
            lead, rest = first_words(callout, CALLOUT_WORDS)
            assert lead in [i.value for i in at.info]
            assert not rest or rest in [m.value for m in at.markdown]
        if step.question is not None and model == "bundled" and step.page in PAGE_HEADS:
            assert f"needs a model with the {PAGE_HEADS[step.page]} head" in shown(at)
            assert not [b for b in at.button if b.key == f"_lesson_{lesson.key}_{index}_check"]
        elif isinstance(step.question, COMPARED):  # offline, the model beside it (roberta-base) cannot be loaded
            assert "needs a model with the active one beside it" in shown(at)
            assert "roberta-base" in shown(at) and "cannot be loaded here" in shown(at)
            assert not [b for b in at.button if b.key == f"_lesson_{lesson.key}_{index}_check"]
        elif step.question is not None:
            key = f"_lesson_{lesson.key}_{index}"
            assert "Your answer first" in shown(at), index  # the page, with the answer, waits
            answer_and_check(at, key)
            assert not at.exception, (lesson.key, index, at.exception)
            verdicts = [*at.success, *at.warning, *at.info]
            judged = ("so does the live computation", "computed live, it is", "needs a model with the")
            assert any(phrase in v.value for v in verdicts for phrase in judged), index
        assert "Your answer first" not in shown(at), index
        layers = 2 if model == "tiny" else 6
        for name, value in resolve(step.params, layers).items():  # the step's view, in its page's widgets
            if name in SHARED_TEXTS:
                assert at.text_input(key=name).value == value, (index, name)
            else:
                assert at.session_state[name] == session_value(PARAMS[name], value), (index, name)
        if index < len(lesson.steps) - 1:
            at.button(key="_lesson_next").click().run()
    assert at.button(key="_lesson_next").disabled
    assert "Last step of this lesson" in shown(at)


def test_leave_closes_the_lesson_and_keeps_the_page(open_page, tiny_pretraining_dir):
    at = open_page("pages/attention.py", tiny_pretraining_dir, **step_link(DISCOVER, 3, 2))
    at.button(key="_lesson_leave").click().run()
    assert not at.exception
    assert "lesson" not in at.query_params and "step" not in at.query_params
    assert not [b for b in at.button if b.key == "_lesson_next"]
    assert at.query_params["attn_tab"] == "Token focus" and at.title[0].value == "Attention"
    assert FOLLOWED not in at.session_state  # the next page switch does not bring the lesson back


def test_a_token_pickers_all_tokens_option_is_an_option_not_none(monkeypatch, tiny_pretraining_dir):
    """Session state held "all tokens" as None, which a selectbox shows as no choice ("Choose an option"): the
    head view's focus after Next from Discover step 6 to 7, which resets it."""
    assert session_value(PARAMS["focus"], "all tokens") == EVERY_TOKEN
    assert session_value(PARAMS["focus"], "2 animal") == 2
    assert session_value(PARAMS["targets"], ["8 street", "2 animal"]) == [8, 2]
    at = app(monkeypatch, tiny_pretraining_dir, "attention", **step_link(DISCOVER, 5, 2))
    at.session_state["focus"] = 3  # the student focused a token at step 6
    at.run()
    at.button(key="_lesson_next").click().run()
    assert not at.exception and f"step 7 of {len(DISCOVER.steps)}" in shown(at)
    focus = at.selectbox(key="focus")
    assert focus.index == 0 and focus.format_func(focus.value) == "all tokens"


def test_a_step_on_the_same_page_puts_its_whole_view_in_the_link_while_it_waits(monkeypatch, tiny_pretraining_dir):
    """Patterns 2 → 3 stays on Attention, whose statistic picker is bound to the URL: the link (and so the class
    link, and a reload) once lacked the step's statistic and tab until the question was answered."""
    patterns = LESSONS["patterns"]
    at = app(monkeypatch, tiny_pretraining_dir, "attention", **step_link(patterns, 1, 2))
    at.button(key="_lesson_patterns_1_skip").click().run()
    at.session_state["attn_tab"] = "Heatmap"  # the student wanders off the step's view
    at.run()
    at.button(key="_lesson_next").click().run()
    assert "Your answer first" in shown(at) and f"step 3 of {len(patterns.steps)}" in shown(at)
    for name, value in step_link(patterns, 2, 2).items():
        assert at.query_params[name] == value, name
    at.button(key="_lesson_patterns_2_skip").click().run()
    assert at.selectbox(key="stat").value == "To previous token"
    assert at.session_state["attn_tab"] == "Head statistics"


def test_back_to_a_senses_step_drops_the_sentence_a_later_step_typed(monkeypatch, bundled):
    """Word senses 6 (Fill-mask) sets the shared sentence; Back to 5 once kept it as the student's own sentence
    on the map: two extra points beside the twelve the step's text counts."""
    senses = LESSONS["senses"]
    at = app(monkeypatch, bundled.name, "fill_mask", **step_link(senses, 5, 6))
    assert "apple" in at.session_state["_shared_text"]
    at.button(key="_lesson_back").click().run()
    assert not at.exception and at.title[0].value == "Word senses"
    assert "apple" not in at.text_input(key="text").value.lower()


def test_no_outline_is_promised_for_a_control_the_model_cannot_draw(open_page, bundled):
    """On the encoder-only model the Fill-mask page has no guesses to show, and so no control to outline."""
    overview = LESSONS["overview"]
    index = next(i for i, step in enumerate(overview.steps) if step.page == "fill_mask")
    at = open_page("pages/fill_mask.py", bundled.name, **step_link(overview, index, 6))
    assert not at.exception and "needs a model with the MLM head" in shown(at)
    assert "outlined below" not in shown(at)


def test_back_to_a_bare_lesson_link_opens_the_steps_view_again(open_page, tiny_pretraining_dir):
    """Back to the entry of a bare link (lesson and step only) showed the step's question above the page's
    default view: the step had been opened once in this session, so its view was not put back."""
    at = open_page("pages/attention.py", tiny_pretraining_dir, lesson="discover", step="4")
    assert at.query_params["attn_tab"] == "Token focus"
    at.query_params.clear()
    at.query_params.update(lesson="discover", step="4", bertlens_history="1")  # Back, to the bare entry
    at.run()
    assert (
        not at.exception and at.query_params["attn_tab"] == "Token focus" and "bertlens_history" not in at.query_params
    )
