"""Two models side by side (``bertlens.comparison``) and the lesson "BERT and its successors"'s questions, on tiny
models of two families and more saved by ``bertlens.synthetic`` (``tests/conftest.py``'s ``family_dir``).

The weights are random: these tests check that every number the comparison and the questions show is the models'
own (each tokenizer's tokens, each checkpoint's parameters, transformers' fill-mask pipeline's top 5, the heads the
checkpoint has), never what a real BERT or RoBERTa would predict."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import pipeline

from bertlens.analysis import analyze
from bertlens.anatomy import bundle_parameter_counts
from bertlens.comparison import GUESSES, default_partner, in_own_mask, side_of
from bertlens.curriculum import LESSONS, TWO_MODELS_TEXT
from bertlens.family import pair_head
from bertlens.lessons import (
    COMPARED,
    PAIR_CHOICES,
    SAME_FIRST,
    SIDES,
    DirectLive,
    MoreParameters,
    MoreTokens,
    PairTask,
    SameFirstGuess,
    side,
    why_not_asked,
)
from bertlens.models import BUNDLED_MODEL, MODEL_CHOICES, ModelBundle, load_model

TEXT = "Unbelievably, the capital of France is [MASK]."


@pytest.fixture(scope="module")
def models(family_dir) -> dict[str, tuple[str, ModelBundle]]:
    """Tiny random models by family: their folder and their bundle."""
    return {
        family: (str(family_dir(family)), load_model(str(family_dir(family))))
        for family in ("bert", "roberta", "albert", "electra")
    }


def own_parameters(bundle: ModelBundle) -> int:
    """Every parameter of the loaded checkpoint, shared tensors once (these tiny models have every head)."""
    return sum(p.numel() for p in bundle.model.parameters())


def test_the_default_partner_is_a_successor_beside_bert_and_bert_beside_a_successor():
    assert default_partner("bert-base-uncased", "bert", MODEL_CHOICES) == "roberta-base"
    assert default_partner(BUNDLED_MODEL, "bert", MODEL_CHOICES) == "roberta-base"
    assert default_partner("roberta-base", "roberta", MODEL_CHOICES) == "bert-base-uncased"
    assert default_partner("bert-base-uncased", "bert", ["bert-base-uncased", BUNDLED_MODEL]) == BUNDLED_MODEL
    assert default_partner("/a/folder", "bert", ["/a/folder", "/b/folder"]) == "/b/folder"
    assert default_partner("bert-base-uncased", "bert", ["bert-base-uncased"]) is None


@pytest.mark.parametrize("family", ["bert", "roberta", "albert", "electra"])
def test_a_side_is_the_models_own_tokens_parameters_guesses_and_heads(models, family):
    """Random weights. Tokens from the model's own tokenizer; parameters that add up to the checkpoint's own;
    the top 5 of transformers' fill-mask pipeline; the heads the description reads from the checkpoint."""
    folder, bundle = models[family]
    text = in_own_mask(TEXT, bundle)
    assert bundle.description.mask_token in text
    one = side_of(bundle, text, analyze(bundle, text), bundle_parameter_counts(bundle))
    tokenizer = bundle.tokenizer
    assert one.tokens == tuple(tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"]))
    assert sum(n for _, n in one.parts) == one.total == own_parameters(bundle)
    assert [part for part, _ in one.parts][:2] == ["Embeddings", "Encoder"]
    assert one.heads == bundle.description.heads and one.pair_head == pair_head(bundle.description)
    assert {m.part for m in one.missing} == {"MLM", "NSP", "SOP", "RTD"} & {m.part for m in bundle.description.missing}
    if "MLM" not in bundle.description.heads:  # ELECTRA's discriminator
        assert one.guesses is None and one.first_guess is None
        return
    fill = pipeline("fill-mask", model=folder, tokenizer=folder, model_kwargs={"attn_implementation": "eager"})
    expected = fill(text, top_k=GUESSES)
    assert one.guesses is not None and [word for word, _ in one.guesses] == [r["token_str"].strip() for r in expected]
    np.testing.assert_allclose([p for _, p in one.guesses], [r["score"] for r in expected], rtol=1e-4)


def test_a_sentence_without_a_mask_has_no_guesses(models):
    _, bundle = models["roberta"]
    text = "The cat [MASK] a book."  # BERT's mask is ordinary text to RoBERTa
    one = side_of(bundle, text, analyze(bundle, text), bundle_parameter_counts(bundle))
    assert one.masks == 0 and one.guesses == ()


def test_the_lesson_asks_each_comparison_question_about_the_two_models():
    steps = LESSONS["successors"].steps
    kinds = {type(step.question) for step in steps if step.question}
    assert kinds == set(COMPARED)
    assert {step.page for step in steps} == {"anatomy"}
    assert all(step.params["anatomy_tab"] == "Two models" for step in steps)


def test_more_tokens_counts_each_tokenizers_tokens(models):
    """Random weights (the tokenizers are trained offline on a few sentences: their cuts are their own)."""
    question = MoreTokens(TWO_MODELS_TEXT)
    for active, beside in (("bert", "roberta"), ("roberta", "albert"), ("albert", "bert")):
        a, b = models[active][1], models[beside][1]
        counts = [len(x.tokenizer(in_own_mask(TWO_MODELS_TEXT, x))["input_ids"]) for x in (a, b)]
        expected = SIDES[2] if counts[0] == counts[1] else SIDES[0] if counts[0] > counts[1] else SIDES[1]
        reveal = question.reveal(DirectLive(a, b))
        assert reveal.answer == expected
        assert f"{counts[0]} tokens" in reveal.detail and f"{counts[1]} tokens" in reveal.detail


def test_more_parameters_counts_each_checkpoint(models):
    for active, beside in (("bert", "roberta"), ("albert", "electra")):
        a, b = models[active][1], models[beside][1]
        totals = [own_parameters(a), own_parameters(b)]
        expected = SIDES[2] if totals[0] == totals[1] else SIDES[0] if totals[0] > totals[1] else SIDES[1]
        reveal = MoreParameters().reveal(DirectLive(a, b))
        assert reveal.answer == expected and f"{totals[0]:,}" in reveal.detail and f"{totals[1]:,}" in reveal.detail


def test_same_first_guess_is_each_pipelines_top_1(models):
    """Random weights: each model's top 1 is transformers' fill-mask pipeline's, with its own mask token."""
    (bert_dir, bert), (roberta_dir, roberta) = models["bert"], models["roberta"]
    firsts = []
    for folder, bundle in ((bert_dir, bert), (roberta_dir, roberta)):
        fill = pipeline("fill-mask", model=folder, tokenizer=folder, model_kwargs={"attn_implementation": "eager"})
        firsts.append(fill(in_own_mask(TWO_MODELS_TEXT, bundle), top_k=1)[0]["token_str"].strip())
    reveal = SameFirstGuess(TWO_MODELS_TEXT).reveal(DirectLive(bert, roberta))
    assert reveal.answer == (SAME_FIRST[0] if firsts[0].lower() == firsts[1].lower() else SAME_FIRST[1])
    assert all(f"**{word}**" in reveal.detail for word in firsts)


def test_same_first_guess_needs_a_masked_word_head_on_both(models):
    bert, electra = models["bert"][1], models["electra"][1]
    live = DirectLive(bert, electra)
    why = why_not_asked(SameFirstGuess(TWO_MODELS_TEXT), live)
    assert why is not None and "needs a model with the MLM head" in why and electra.name in why
    assert SameFirstGuess(TWO_MODELS_TEXT).reveal(live).answer is None
    assert why_not_asked(PairTask(), live) is None  # the other questions need no head


def test_pair_task_reads_each_checkpoints_pair_head(models):
    bert, roberta, albert, electra = (models[f][1] for f in ("bert", "roberta", "albert", "electra"))
    assert pair_head(bert.description) == "NSP" and pair_head(albert.description) == "SOP"
    assert pair_head(roberta.description) is None and pair_head(electra.description) is None
    cases = {
        (bert, roberta): PAIR_CHOICES[0],
        (roberta, albert): PAIR_CHOICES[1],
        (bert, albert): PAIR_CHOICES[2],
        (roberta, electra): PAIR_CHOICES[3],
    }
    for (a, b), expected in cases.items():
        reveal = PairTask().reveal(DirectLive(a, b))
        assert reveal.answer == expected, (a.name, b.name)
    detail = PairTask().reveal(DirectLive(bert, roberta)).detail
    assert "(NSP)" in detail and "RoBERTa dropped next sentence prediction" in detail


@pytest.mark.parametrize("question", [MoreTokens(TEXT), MoreParameters(), SameFirstGuess(TEXT), PairTask()])
def test_without_a_second_model_a_comparison_asks_nothing_and_says_why(models, question):
    """As a missing head is said: the browser's walk of every lesson looks for "needs a model with the"."""
    live = DirectLive(models["bert"][1])
    why = why_not_asked(question, live)
    assert why is not None and why.startswith("This question needs a model with the")
    reveal = question.reveal(live)
    assert reveal.answer is None and reveal.detail == why


def test_a_side_through_the_live_protocol_is_side_of(models):
    bert, roberta = models["bert"][1], models["roberta"][1]
    live = DirectLive(roberta, bert)
    one = side(live, TEXT)
    text = in_own_mask(TEXT, roberta)
    assert one == side_of(roberta, text, analyze(roberta, text), bundle_parameter_counts(roberta))
