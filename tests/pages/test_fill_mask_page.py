"""Fill-mask page opened from a link: the numbers on screen equal transformers' fill-mask pipeline."""

import json

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from bertlens.mlm import LOSS_IF_RIGHT
from bertlens.models import BUNDLED_MODEL
from bertlens.wording import percent
from components.ui.html_table import is_table, read_table
from tests.conftest import assert_shows, chart_title, drawn_charts, renderings, tables
from tests.core.test_mlm import mlm_loss, reference_fill_mask, reference_mask_logits
from tests.pages.test_attention_page import typed

PAGE = "pages/fill_mask.py"
ONE_MASK = "The capital of France is [MASK]."


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.warning, *at.info, *at.success])


def guess_tables(at):
    """Each mask's guess table (not the overview of several masks)."""
    return [t for t in tables(at) if "rank" in t.columns]


def shown_guess_cells(at) -> list[dict[str, list[str]]]:
    """Each mask's guess table as shown on screen: column name → the cells' text."""
    shown_tables = [read_table(e.proto.body, shown=True) for e in at.get("html") if is_table(e.proto.body)]
    return [{name: list(table[name]) for name in table.columns} for table in shown_tables if "rank" in table.columns]


def guess_charts(at) -> list[dict]:
    """Each mask's bar chart of guesses (plotly spec's first trace)."""
    specs = [json.loads(c.spec) for c in drawn_charts(at)]
    return [s["data"][0] for s in specs if chart_title(s).startswith("Mask ")]


def assert_tables_equal_pipeline(at, reference):
    tables = guess_tables(at)
    assert len(tables) == len(reference)
    for table, expected in zip(tables, reference):
        assert table["token_id"].tolist() == [e["token"] for e in expected]
        assert table["decoded"].tolist() == [e["token_str"] for e in expected]
        np.testing.assert_allclose(table["probability"], [e["score"] for e in expected], rtol=1e-5, atol=1e-9)
        # seed 003's "loss if correct": the cross-entropy were this guess the true word
        np.testing.assert_allclose(table[LOSS_IF_RIGHT], [-np.log(e["score"]) for e in expected], rtol=1e-4)


@pytest.mark.parametrize("k", [3, 17])
def test_one_mask_from_the_link(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm, k):
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, k=str(k))
    assert not at.exception
    assert at.text_input(key="text").value == ONE_MASK and at.slider(key="k").value == k
    assert_tables_equal_pipeline(at, reference_fill_mask(masked_lm, tiny_bundle.tokenizer, ONE_MASK, k))
    assert len(drawn_charts(at)) == 1
    # No word typed yet: the check says what it needs (it was a heading over nothing).
    assert "Type the word mask 1 hides in *Original word* above" in " ".join(i.value for i in at.info)


def test_logits_are_shown_before_their_softmax(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    text = "The [MASK] brown fox [MASK] over the lazy dog."
    at = open_page(PAGE, tiny_pretraining_dir, text=text, k="4")
    shown_tables = guess_tables(at)
    logits = reference_mask_logits(masked_lm, tiny_bundle.tokenizer, text)
    for table, expected in zip(shown_tables, logits, strict=True):
        assert list(table.columns[:4]) == ["rank", "token", "logit", "probability"]
        np.testing.assert_allclose(table["logit"], expected[table["token_id"].tolist()], atol=1e-4)


def test_several_masks_side_by_side(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    text = "The [MASK] brown fox [MASK] over the [MASK] dog."
    at = open_page(PAGE, tiny_pretraining_dir, text=text, k="4")
    assert not at.exception
    assert_tables_equal_pipeline(at, reference_fill_mask(masked_lm, tiny_bundle.tokenizer, text, 4))
    assert "predicted **independently, in one pass**: each mask gets its own softmax" in shown(at)
    assert "joint" not in shown(at)
    titles = [chart_title(json.loads(c.spec)) for c in drawn_charts(at)]
    assert titles == ["Mask 1 · token 2", "Mask 2 · token 5", "Mask 3 · token 8"]
    # each mask's table is named as its chart, to a screen reader and on its download button
    names = [e.value for e in at.get("html") if is_table(e.value) and 'aria-label="Mask ' in e.value]
    assert [name.split('aria-label="')[1].split('"')[0] for name in names] == titles
    buttons = [b.label for b in at.get("download_button")]
    assert [f"Download CSV: Mask {n} · token {t}" for n, t in ((1, 2), (2, 5), (3, 8))] == [
        label for label in buttons if label.startswith("Download CSV: Mask")
    ]


def test_true_word_check_from_the_link(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, true_word="Paris")
    loss = mlm_loss(masked_lm, tiny_bundle.tokenizer, ONE_MASK, "The capital of France is Paris.")
    metrics = {m.label: m.value for m in at.metric}
    assert_shows(metrics["Loss −log p"], "{}", loss, places=4)
    assert metrics["P(paris)"] in renderings(np.exp(-loss), lambda p: f"{p:.4g}")
    with torch.no_grad():
        probs = masked_lm(**tiny_bundle.tokenizer(ONE_MASK, return_tensors="pt")).logits[0, 6].softmax(-1)
    paris = tiny_bundle.tokenizer.convert_tokens_to_ids("paris")
    assert metrics["Rank (of 30,522)"] == f"{1 + int((probs > probs[paris]).sum()):,}"
    assert "What the loss means" in shown(at) and "10.33" in shown(at)  # log(30522): a blind guess
    assert PRE_TRAINING_LOSS in shown(at) and "minimising this number" not in shown(at)
    assert not [t for t in tables(at) if "label" in t.columns]  # the labels are drawn when their expander opens
    at.session_state["loss_labels"] = True  # the student opens it
    labels = next(t for t in tables(at.run()) if "label" in t.columns)
    assert labels["label"].tolist() == [-100] * 6 + [paris] + [-100] * 2  # seed 003: labels after masking
    inputs = tiny_bundle.tokenizer(ONE_MASK, return_tensors="pt")
    with torch.no_grad():  # these labels give the model's own loss: the one shown
        own = masked_lm(**inputs, labels=torch.tensor([labels["label"].tolist()])).loss.item()
    assert_shows(metrics["Loss −log p"], "{}", own, places=4)
    two = open_page(PAGE, tiny_pretraining_dir, text="The [MASK] sat on the [MASK].", true_word="cat,mat", at_mask="2")
    two.session_state["loss_labels"] = True
    two.run()
    labels = next(t for t in tables(two) if "label" in t.columns)["label"].tolist()
    assert sum(label != -100 for label in labels) == 1 and labels[6] != -100  # the mask this check follows
    assert "In pre-training every mask carries its own label" in shown(two)


def test_the_true_word_box_takes_a_texts_characters_budget(open_page, tiny_pretraining_dir, monkeypatch):
    """It took any length: a link's 240,000 characters were tokenized on every run and echoed in a caption."""
    monkeypatch.setenv("BERTLENS_MAX_CHARS", "50")
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, true_word="paris " * 40)
    assert not at.exception
    assert "The link's `true_word` has 240 characters; this box takes 50: the first 50 are used." in [
        i.value for i in at.info
    ]
    assert at.text_input(key="true_word").value == ("paris " * 40)[:50]


def test_true_word_at_a_chosen_mask_and_a_several_piece_word(open_page, tiny_pretraining_dir):
    at = open_page(
        PAGE, tiny_pretraining_dir, text="The [MASK] of [MASK] is big.", true_word="backpropagation", at_mask="2"
    )
    assert not at.exception and at.selectbox(key="at_mask").value == 2
    assert "only the first piece, back, is scored" in shown(at)
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, true_word="😀")
    assert "unknown to this vocabulary" in shown(at) and not at.metric


@pytest.mark.parametrize("bad", ["abc", "0", "99", "-1"])
def test_malformed_k_gets_a_message_and_the_default(open_page, tiny_pretraining_dir, bad):
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, k=bad)
    assert not at.exception
    assert any("`k`" in w.value and "from 1 to 50" in w.value for w in at.warning)
    assert at.slider(key="k").value == 10 and len(tables(at)[0]) == 10


def test_no_mask_offers_the_word_to_mask_helper(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir, text="The cat chased the mouse.")
    assert not at.exception and "A [MASK] is needed" in shown(at) and not tables(at)
    assert at.multiselect(key="words_to_mask").value == [] and not at.button  # nothing masked before a pick
    at.multiselect(key="words_to_mask").select("cat").run()  # as in seed 000
    assert at.text[-1].value == "The [MASK] chased the mouse."  # the preview: only the word picked
    at.button(key="mask_word").click().run()
    assert at.text_input(key="text").value == "The [MASK] chased the mouse."
    assert at.text_input(key="true_word").value == "cat"  # the masked word is the one to check
    assert not at.exception and len(tables(at)) == 1 and at.metric


def test_masking_another_word_keeps_the_hidden_words_typed_and_unpicks_the_masked_one(open_page, tiny_pretraining_dir):
    """Seed 003's exercise 4, as the Overview lesson asks: masking one more word erased the hidden words already typed
    (", brown, , "), and the picker kept its choice by position, so it offered the next word under the masked one's
    name ("cat" shown, "chased" masked)."""
    at = open_page(
        PAGE,
        tiny_pretraining_dir,
        text="The [MASK] brown fox [MASK] over the [MASK] dog",
        true_word="quick, jumps, lazy",
    )
    at.multiselect(key="words_to_mask").select("brown").run()
    assert at.text[-1].value == "The [MASK] [MASK] fox [MASK] over the [MASK] dog"
    at.button(key="mask_word").click().run()
    assert not at.exception
    assert at.text_input(key="true_word").value == "quick, brown, jumps, lazy"
    overview = next(t for t in tables(at) if "top guess" in t.columns)
    assert overview["true word"].tolist() == ["quick", "brown", "jumps", "lazy"]
    picker = at.multiselect(key="words_to_mask")
    assert picker.value == [] and "brown" not in picker.options and "fox" in picker.options
    picker.select("fox").run()
    assert at.text[-1].value == "The [MASK] [MASK] [MASK] [MASK] over the [MASK] dog"


def test_masking_keeps_the_word_typed_for_a_single_mask_whatever_at_mask_was(open_page, tiny_pretraining_dir):
    """At mask stays in session state (bound to the link) after a sentence with more masks: with one mask left, its
    word was read as mask 2's and lost ("capital, " for "capital, paris")."""
    at = open_page(PAGE, tiny_pretraining_dir, text="The [MASK] of [MASK] is big.", at_mask="2")
    assert at.selectbox(key="at_mask").value == 2
    at.text_input(key="text").set_value("The capital of France is [MASK].").run()
    at.text_input(key="true_word").set_value("paris").run()
    at.multiselect(key="words_to_mask").select("capital").run()
    at.button(key="mask_word").click().run()
    assert not at.exception
    assert at.text_input(key="true_word").value == "capital, paris"


def test_seed_003_exercise_4_several_masks_at_a_glance(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    """Mask quick, jumps and lazy at once: every mask's top guess, the average confidence, the true words."""
    at = open_page(PAGE, tiny_pretraining_dir, text="The quick brown fox jumps over the lazy dog", k="3")
    picker = at.multiselect(key="words_to_mask")
    for word in ("quick", "jumps", "lazy"):
        picker.select(word)
    at.run()
    at.button(key="mask_word").click().run()
    masked = "The [MASK] brown fox [MASK] over the [MASK] dog"
    assert not at.exception and at.text_input(key="text").value == masked
    assert at.text_input(key="true_word").value == "quick, jumps, lazy"
    reference = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, masked, 3)
    overview = next(t for t in tables(at) if "top guess" in t.columns)
    assert overview["top guess"].tolist() == [r[0]["token_str"] for r in reference]
    np.testing.assert_allclose(overview["P(top guess)"], [r[0]["score"] for r in reference], rtol=1e-3)
    assert overview["true word"].tolist() == ["quick", "jumps", "lazy"]
    right = ["yes ✓" if r[0]["token_str"] == w else "no" for r, w in zip(reference, ["quick", "jumps", "lazy"])]
    assert overview["top guess is the true word"].tolist() == right
    metrics = {m.label: m.value for m in at.metric}
    # A tiny model's guesses get ~0.005 %: shown as such, not rounded to 0.01 %.
    mean = np.mean([r[0]["score"] for r in reference])
    assert metrics["Average confidence of the top guesses"] in renderings(mean, lambda p: percent(p, 2))
    at.text_input(key="true_word").set_value("quick, jumps").run()  # two words for three masks
    assert any("2 words for 3 masks" in w.value for w in at.warning) and not at.exception
    assert not [i for i in at.info if "Type the word" in i.value]  # the student did type: the warning says what
    at.text_input(key="true_word").set_value("").run()
    assert [i for i in at.info if "Type the word mask 1 hides" in i.value]


@pytest.mark.parametrize(
    "text, message",
    [
        (" ".join(["[MASK]"] * 20), "20 masks"),
        ("[MASK]", "nothing but masks"),
        ("word " * 600 + "[MASK].", "beyond the 512-token cut"),
        ("   ", "empty"),
        ("The [mask] sat.", "in capitals"),
    ],
)
def test_bad_input_gets_a_clear_message(open_page, tiny_pretraining_dir, text, message):
    at = open_page(PAGE, tiny_pretraining_dir, text=text)
    assert not at.exception
    assert message in shown(at)


@pytest.mark.parametrize(
    "text",
    ["😀🔥 [MASK] 🎉", "<b>bold</b> [MASK] <script>alert(1)</script>", "مرحبا [MASK] بالعالم", "a\u200b[MASK]\u200bb"],
)
def test_odd_text_is_predicted_and_shown_literally(open_page, tiny_pretraining_dir, text):
    at = open_page(PAGE, tiny_pretraining_dir, text=text)
    assert not at.exception and at.text_input(key="text").value == text and len(tables(at)) == 1
    assert "<script>" not in shown(at) and "<b>" not in shown(at)


def test_bundled_encoder_gets_the_explanation_and_no_numbers(open_page):
    at = open_page(PAGE, BUNDLED_MODEL, text=ONE_MASK, true_word="paris")
    assert not at.exception
    explanation = " ".join(i.value for i in at.info)
    assert "no masked-language-model (MLM) head" in explanation and "hf download bert-base-uncased" in explanation
    assert not tables(at) and not at.metric and not drawn_charts(at)
    assert at.text_input(key="text").value == ONE_MASK


# BERT's pre-training minimised the masked-LM loss summed with the next-sentence-prediction loss (Devlin et al. 2019;
# Google's run_pretraining.py: total_loss = masked_lm_loss + next_sentence_loss): the MLM loss alone was not it.
PRE_TRAINING_LOSS = "pre-training minimised its sum with the next-sentence-prediction loss (Devlin et al., 2019)"


def test_the_loss_is_said_to_be_the_masked_lm_part_of_pre_trainings_loss(open_page, tiny_pretraining_dir):
    """It said "the loss pre-training minimised is the mean −log p of those originals": pre-training minimised that
    masked-LM loss plus the NSP loss."""
    at = open_page(PAGE, tiny_pretraining_dir, text="The quick brown fox jumps over the lazy dog.", pretrain="true")
    (note,) = [m.value for m in at.markdown if "15 %" in m.value]
    assert "the masked-language-model (MLM) loss is the mean −log p of those originals" in note
    assert PRE_TRAINING_LOSS in note and "the loss pre-training minimised" not in note


def test_pretraining_masking_on_the_sentence_equals_the_models_own_loss(open_page, tiny_pretraining_dir, masked_lm):
    text = "The quick brown fox jumps over the lazy dog while the farmer watches from the old wooden fence."
    at = open_page(PAGE, tiny_pretraining_dir, text=text, pretrain="true", draw="3")
    assert not at.exception and at.toggle(key="pretrain").value and at.number_input(key="draw").value == 3
    # The pre-training view needs no mask of the student's: no call for one, and the mask helper stays closed (a
    # lesson step opened it above the view it talks about, with "A [MASK] is needed" and the helper open).
    assert "A [MASK] is needed" not in shown(at) and not at.expander[0].proto.expanded
    (draw,) = [t for t in tables(at) if "what happened" in t.columns]
    tokenizer = AutoTokenizer.from_pretrained(tiny_pretraining_dir)
    original = tokenizer(text)["input_ids"]
    seen = tokenizer.convert_tokens_to_ids(at.text[-1].value.split(" "))  # what BERT is given, shown literally
    labels = torch.full((1, len(seen)), -100)
    labels[0, draw["position"].tolist()] = torch.tensor([original[p] for p in draw["position"]])
    with torch.no_grad():
        loss = masked_lm(input_ids=torch.tensor([seen]), labels=labels).loss.item()
    metrics = {m.label: m.value for m in at.metric}
    assert_shows(metrics["Loss of this draw (mean −log p)"], "{}", loss, places=4)
    assert metrics["Tokens chosen"] == f"{len(draw)} of {len(original) - 2}" and len(draw) == round(
        0.15 * len(original)
    )
    at.button(key="draw_again").click().run()
    assert at.number_input(key="draw").value == 4 and at.query_params["draw"] == "4" and not at.exception


def test_a_malformed_draw_gets_a_message(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, pretrain="true", draw="abc")
    assert not at.exception and any("`draw`" in w.value for w in at.warning)
    assert at.number_input(key="draw").value == 1


def test_a_shared_sentence_b_is_said_to_be_unread(open_page, tiny_pretraining_dir):
    """The guesses are for the one sentence; a B from another page stayed in the link without a word."""
    at = open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK, b="It was fast.")
    assert not at.exception and "Sentence B, from another page, is not read here" in shown(at)
    assert "Sentence B" not in shown(open_page(PAGE, tiny_pretraining_dir, text=ONE_MASK))


@pytest.mark.parametrize("text", ["[MASK]", "[SEP]", "[MASK] [SEP] [PAD]"])  # "\u200b" alone: an empty box now
def test_pre_training_with_nothing_to_choose_says_so_instead_of_a_nan_loss(open_page, tiny_pretraining_dir, text):
    """A hosted-mode audit saw "Tokens chosen 0 of 0" and "Loss of this draw: nan"; a typed [SEP] counted as a
    token pre-training could choose, though the page says [CLS] and [SEP] never are."""
    at = open_page(PAGE, tiny_pretraining_dir, text=text, pretrain="true")
    assert not at.exception
    assert any("Pre-training has nothing to choose here" in i.value for i in at.info)
    assert not [m for m in at.metric if m.label.startswith("Loss of this draw")]


def test_pre_training_may_choose_an_unknown_token(open_page, tiny_pretraining_dir):
    """[UNK] is a token of the text (the original skips only [CLS] and [SEP]): "😀" alone has one to choose."""
    at = open_page(PAGE, tiny_pretraining_dir, text="😀", pretrain="true")
    assert not at.exception and not any("nothing to choose" in i.value for i in at.info)
    assert [m.value for m in at.metric if m.label == "Tokens chosen"] == ["1 of 1"]


def test_guess_charts_and_tables_show_the_pipelines_probabilities(
    open_page, tiny_pretraining_dir, tiny_bundle, masked_lm
):
    """The bars are the probabilities (not the logits) on the "probability" axis, labelled with 3 significant
    digits, and the table's probability column shows 4: a tiny model's ~3e-5 read "0.000" and "0.0000"."""
    text = "The [MASK] brown fox [MASK] over the lazy dog."
    at = open_page(PAGE, tiny_pretraining_dir, text=text, k="5")
    assert not at.exception
    reference = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, text, 5)
    charts, cells = guess_charts(at), shown_guess_cells(at)
    assert len(charts) == len(cells) == len(reference) == 2
    for bars, shown_cells, expected in zip(charts, cells, reference, strict=True):
        scores = [e["score"] for e in expected]
        assert max(scores) < 1e-3  # the tiny model: where a fixed-point format shows nothing but zeros
        shown = typed(bars["x"])  # the page's own probabilities: its labels are these, formatted
        np.testing.assert_allclose(shown, scores, rtol=1e-5, atol=1e-9)
        assert list(bars["y"]) == shown_cells["token"]  # each bar beside its own token
        assert bars["text"] == [f"{s:#.3g}" for s in shown]  # three figures each, a last zero kept
        assert shown_cells["probability"] == [f"{s:#.4g}" for s in shown]  # the column's "%.4g", zeros kept


def test_one_word_at_two_masks_is_checked_at_the_mask_chosen(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    """The same true word at two masks: switching "At mask" from 1 to 2 must give mask 2's probability and rank,
    not the check of mask 1 kept from the run before."""
    text = "The [MASK] sat on the [MASK]."
    tokenizer = tiny_bundle.tokenizer
    cat = tokenizer.convert_tokens_to_ids("cat")
    probs = torch.from_numpy(reference_mask_logits(masked_lm, tokenizer, text)).softmax(-1)
    expected = [(p[cat].item(), 1 + int((p > p[cat]).sum())) for p in probs]
    assert abs(np.log(expected[0][0] / expected[1][0])) > 1e-2  # the two masks' checks tell apart
    at = open_page(PAGE, tiny_pretraining_dir, text=text, true_word="cat,cat", at_mask="1")
    for mask in (1, 2):
        if mask == 2:
            at.selectbox(key="at_mask").set_value(2).run()
        assert not at.exception and at.selectbox(key="at_mask").value == mask
        p, rank = expected[mask - 1]
        metrics = {m.label: m.value for m in at.metric}
        assert float(metrics["P(cat)"]) == pytest.approx(p, rel=1e-3)
        assert metrics["Rank (of 30,522)"] == f"{rank:,}"
        assert float(metrics["Loss −log p"]) == pytest.approx(-np.log(p), abs=2e-4)
        overview = next(t for t in tables(at) if "P(true word)" in t.columns)
        np.testing.assert_allclose(overview["P(true word)"], [e[0] for e in expected], rtol=1e-4)
        assert overview["rank of the true word"].tolist() == [e[1] for e in expected]


def test_masks_over_the_budget_are_listed_but_not_drawn(
    open_page, tiny_pretraining_dir, tiny_bundle, masked_lm, monkeypatch
):
    """Over the masks budget only the first masks get a table and a chart; the overview still lists every one."""
    monkeypatch.setenv("BERTLENS_MAX_MASKS", "2")
    text = "The [MASK] brown fox [MASK] over the [MASK] dog."
    at = open_page(PAGE, tiny_pretraining_dir, text=text, k="3")
    assert not at.exception
    assert any("3 masks given; only the first 2 are drawn one by one" in w.value for w in at.warning)
    reference = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, text, 3)
    assert_tables_equal_pipeline(at, reference[:2])
    assert len(guess_charts(at)) == 2
    overview = next(t for t in tables(at) if "top guess" in t.columns)
    assert overview["mask"].tolist() == [1, 2, 3]
    assert overview["top guess"].tolist() == [r[0]["token_str"] for r in reference]
