"""Fill-mask core: guesses equal transformers' fill-mask pipeline; the true-word check equals the MLM loss."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import pipeline

from bertlens import mlm
from bertlens.analysis import analyze

ONE_MASK = "The capital of France is [MASK]."
THREE_MASKS = "The [MASK] brown fox [MASK] over the [MASK] dog."


def reference_fill_mask(masked_lm, tokenizer, text: str, k: int) -> list[list[dict]]:
    """transformers' fill-mask pipeline, one list of guesses per mask."""
    result = pipeline("fill-mask", model=masked_lm, tokenizer=tokenizer, top_k=k)(text)
    return [result] if isinstance(result[0], dict) else result


def assert_same_guesses(ours: list[mlm.MaskGuesses], reference: list[list[dict]]) -> None:
    assert len(ours) == len(reference)
    for guesses, expected in zip(ours, reference):
        assert list(guesses.token_ids) == [e["token"] for e in expected]
        assert list(guesses.strings) == [e["token_str"] for e in expected]
        np.testing.assert_allclose(guesses.probabilities, [e["score"] for e in expected], rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("text", [ONE_MASK, THREE_MASKS])
@pytest.mark.parametrize("k", [1, 5, 50])
def test_guesses_equal_the_fill_mask_pipeline(tiny_bundle, masked_lm, text, k):
    ours = mlm.top_k_guesses(analyze(tiny_bundle, text), tiny_bundle.tokenizer, k)
    assert_same_guesses(ours, reference_fill_mask(masked_lm, tiny_bundle.tokenizer, text, k))
    assert [g.mask_number for g in ours] == list(range(1, len(ours) + 1))
    assert all(tiny_bundle.tokenizer.convert_ids_to_tokens(g.token_ids) == list(g.tokens) for g in ours)


def reference_mask_logits(masked_lm, tokenizer, text: str) -> np.ndarray:
    """The MLM head's own logits at each [MASK] of ``text`` (masks × vocabulary)."""
    inputs = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = masked_lm(**inputs).logits[0]
    return logits[inputs.input_ids[0] == tokenizer.mask_token_id].numpy()


@pytest.mark.parametrize("text", [ONE_MASK, THREE_MASKS])
def test_guess_logits_are_the_heads_own(tiny_bundle, masked_lm, text):
    ours = mlm.top_k_guesses(analyze(tiny_bundle, text), tiny_bundle.tokenizer, 5)
    for guesses, logits in zip(ours, reference_mask_logits(masked_lm, tiny_bundle.tokenizer, text), strict=True):
        np.testing.assert_allclose(guesses.logits, logits[list(guesses.token_ids)], atol=1e-4)


def test_guess_table_has_one_row_per_token(tiny_bundle):
    (guesses,) = mlm.top_k_guesses(analyze(tiny_bundle, ONE_MASK), tiny_bundle.tokenizer, 4)
    table = guesses.table()
    assert list(table["rank"]) == [1, 2, 3, 4] and list(table["token"]) == list(guesses.tokens)
    assert table["probability"].is_monotonic_decreasing


def test_no_mlm_head_means_no_guesses(bundled):
    assert mlm.top_k_guesses(analyze(bundled, ONE_MASK), bundled.tokenizer, 10) == []


def mlm_loss(masked_lm, tokenizer, masked: str, original: str) -> float:
    """Seed 003's reference: the model's own loss with labels at the mask only."""
    inputs = tokenizer(masked, return_tensors="pt")
    labels = tokenizer(original, return_tensors="pt")["input_ids"]
    labels = torch.where(inputs.input_ids == tokenizer.mask_token_id, labels, -100)
    with torch.no_grad():
        return masked_lm(**inputs, labels=labels).loss.item()


def test_true_word_check_equals_the_model_loss(tiny_bundle, masked_lm):
    tokenizer = tiny_bundle.tokenizer
    check = mlm.check_true_word(analyze(tiny_bundle, ONE_MASK), tokenizer, " Paris ")
    assert check.token == "paris" and check.note is None
    assert check.loss == pytest.approx(
        mlm_loss(masked_lm, tokenizer, ONE_MASK, "The capital of France is Paris."), abs=1e-5
    )
    assert check.probability == pytest.approx(math.exp(-check.loss))
    with torch.no_grad():
        logits = masked_lm(**tokenizer(ONE_MASK, return_tensors="pt")).logits[0, 6]
    probs = logits.softmax(-1)
    assert check.probability == pytest.approx(probs[check.token_id].item(), rel=1e-5)
    assert check.rank == 1 + int((probs > probs[check.token_id]).sum())


def test_true_word_at_a_later_mask(tiny_bundle, masked_lm):
    tokenizer = tiny_bundle.tokenizer
    analysis = analyze(tiny_bundle, THREE_MASKS)
    check = mlm.check_true_word(analysis, tokenizer, "lazy", mask_number=3)
    inputs = tokenizer(THREE_MASKS, return_tensors="pt")
    with torch.no_grad():
        logits = masked_lm(**inputs).logits[0, analysis.mask_positions[2]]
    assert check.loss == pytest.approx(-logits.log_softmax(-1)[check.token_id].item(), abs=1e-5)
    with pytest.raises(ValueError):
        mlm.check_true_word(analysis, tokenizer, "lazy", mask_number=4)


def test_several_piece_word_scores_its_first_piece(tiny_bundle):
    analysis = analyze(tiny_bundle, ONE_MASK)
    check = mlm.check_true_word(analysis, tiny_bundle.tokenizer, "backpropagation")
    assert check.pieces == ("back", "##pro", "##pa", "##gation") and check.token == "back"
    assert "4 WordPiece tokens" in check.note and "first piece, back" in check.note
    assert check.probability == pytest.approx(mlm.check_true_word(analysis, tiny_bundle.tokenizer, "back").probability)


@pytest.mark.parametrize(
    "word, expected", [("", "Type the word"), ("   ", "Type the word"), ("😀", "[UNK]"), ("paris", None)]
)
def test_true_word_problems(tiny_bundle, word, expected):
    problem = mlm.true_word_problem(tiny_bundle.tokenizer, word)
    assert problem is None if expected is None else expected in problem


def masked(text: str, label: str) -> str:
    """``text`` with the word the "Mask this word" picker lists as ``label`` masked, as the page does it."""
    return mlm.mask_spans(text, [next(span for span in mlm.word_spans(text) if span.label == label)])[0]


def test_seed_word_to_mask():
    assert masked("The cat chased the mouse.", "cat") == "The [MASK] chased the mouse."


def test_mask_word_whole_words_and_occurrences():
    text = "The cat chased the concatenated cat."
    assert [span.label for span in mlm.word_spans(text)] == [
        "The", "cat", "chased", "the (occurrence 2)", "concatenated", "cat (occurrence 2)",
    ]  # fmt: skip
    assert masked(text, "the (occurrence 2)") == "The cat chased [MASK] concatenated cat."
    assert masked(text, "cat (occurrence 2)") == "The cat chased the concatenated [MASK]."
    assert masked("It didn't rain.", "didn't") == "It [MASK] rain."


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ذَهَبَ الطالب", ["ذَهَبَ", "الطالب"]),  # Arabic with its vowel marks
        ("मैं स्कूल जाता हूँ", ["मैं", "स्कूल", "जाता", "हूँ"]),  # Hindi's vowel signs
        ("The cafe\u0301 is", ["The", "cafe\u0301", "is"]),  # an accent typed apart
        ("a\u200db c", ["a\u200db", "c"]),  # a zero-width joiner inside a word
        ("我喜欢 it", ["我", "喜", "欢", "it"]),  # a Chinese character is a word to BERT
    ],
)
def test_words_to_mask_keep_their_marks(text, words):
    """Fill-mask's word picker offered ذ, ه, ب for ذَهَبَ and म, स, क for Hindi, cut at every mark; masking one left
    the marks around the [MASK] (an audit of international input)."""
    assert [span.word for span in mlm.word_spans(text)] == words
    assert masked(text, words[1]) == text.replace(words[1], "[MASK]", 1)


def test_existing_masks_are_not_words():
    spans = mlm.word_spans("The [MASK] sat on the mat.")
    assert [s.label for s in spans] == ["The", "sat", "on", "the (occurrence 2)", "mat"]
    assert mlm.word_spans("") == [] and mlm.word_spans("😀 !!") == []


def test_missing_mask_message():
    assert "A [MASK] is needed" in mlm.missing_mask_message("The cat chased the mouse.")
    assert mlm.missing_mask_message("No mask here.", other_way="") == (
        "A [MASK] is needed: put [MASK] where BERT should guess a word."  # no helper to point to
    )
    assert "in capitals" in mlm.missing_mask_message("The [mask] chased the mouse.")
    assert mlm.missing_mask_message(ONE_MASK) is None
    # The mask typed, but beyond what the page reads: said so, not "a [MASK] is needed".
    beyond = mlm.missing_mask_message("abc def " * 3, typed="abc def " * 3 + "[MASK] x")
    assert beyond is not None and beyond.startswith("Your [MASK] lies beyond the first 24 characters")


@pytest.mark.parametrize("text", [ONE_MASK, "x[MASK]y [MASK][MASK]", "[mask] and [ MASK ]", "[MASK]"])
def test_counting_masks_in_text_matches_the_tokenizer(tiny_bundle, text):
    ids = tiny_bundle.tokenizer(text)["input_ids"]
    assert text.count("[MASK]") == ids.count(tiny_bundle.tokenizer.mask_token_id)


def test_notices_for_many_masks_and_only_masks(tiny_bundle):
    many = " ".join(["[MASK]"] * 20)
    notes = mlm.mask_notices(many, analyze(tiny_bundle, many))
    assert any("20 masks" in n and "independently, in one pass (its own softmax)" in n for n in notes)
    assert not any("joint" in n for n in notes)
    assert any("nothing but masks" in n for n in notes)
    assert len(mlm.top_k_guesses(analyze(tiny_bundle, many), tiny_bundle.tokenizer, 3)) == 20
    only = mlm.mask_notices("[MASK]", analyze(tiny_bundle, "[MASK]"))
    assert only == ["There is nothing but masks: with no context, BERT's guesses show only its prior."]
    assert mlm.mask_notices(ONE_MASK, analyze(tiny_bundle, ONE_MASK)) == []


def test_masks_beyond_the_cut_are_reported(tiny_bundle):
    text = "[MASK] is here. " + "word " * 600 + "and [MASK] is beyond the cut."
    analysis = analyze(tiny_bundle, text)
    assert len(analysis.mask_positions) == 1
    (note,) = mlm.mask_notices(text, analysis)
    assert "1 of 2 [MASK] tokens lie beyond the 512-token cut" in note
    beyond_only = "word " * 600 + "[MASK]"
    assert "1 of 1 [MASK] tokens" in mlm.mask_notices(beyond_only, analyze(tiny_bundle, beyond_only))[0]


def test_several_words_masked_at_once_give_their_true_words():
    text = "The quick brown fox jumps over the lazy dog"  # seed 003's exercise 4
    spans = {span.word: span for span in mlm.word_spans(text)}
    masked, hidden = mlm.mask_spans(text, [spans["lazy"], spans["quick"], spans["jumps"]])
    assert masked == THREE_MASKS.rstrip(".") and hidden == "quick, jumps, lazy"
    # a mask already there gets a blank entry, so the words still line up with the masks
    masked, hidden = mlm.mask_spans("The [MASK] sat on the mat.", [mlm.word_spans("The [MASK] sat on the mat.")[-1]])
    assert masked == "The [MASK] sat on the [MASK]." and hidden == ", mat"
    assert mlm.mask_spans("A cat.", [mlm.word_spans("A cat.")[1]]) == ("A [MASK].", "cat")
    # ... unless its true word is known: each keeps its own, however the new masks fall between them
    text = "The [MASK] brown fox [MASK] over the [MASK] dog"
    spans = {span.word: span for span in mlm.word_spans(text)}
    known = {1: "quick", 3: "lazy"}  # mask 2's word not typed
    assert mlm.mask_spans(text, [spans["dog"], spans["brown"]], known) == (
        "The [MASK] [MASK] fox [MASK] over the [MASK] [MASK]",
        "quick, brown, , lazy, dog",
    )


@pytest.mark.parametrize(
    "typed, expected, problem",
    [
        ("paris", {2: "paris"}, None),  # one word: the mask chosen under At mask
        ("", {}, None),
        ("quick, jumps, lazy", {1: "quick", 2: "jumps", 3: "lazy"}, None),
        (" , jumps,", {2: "jumps"}, None),  # a blank entry skips its mask
        ("quick, jumps", {}, "2 words for 3 masks"),
    ],
)
def test_true_words_typed_in_one_field(typed, expected, problem):
    words, message = mlm.true_words(typed, masks=3, at_mask=2)
    assert words == expected
    assert message is None if problem is None else problem in message


def test_every_mask_at_a_glance_equals_the_pipeline_and_the_checks(tiny_bundle, masked_lm):
    tokenizer = tiny_bundle.tokenizer
    analysis = analyze(tiny_bundle, THREE_MASKS)
    guesses = mlm.top_k_guesses(analysis, tokenizer, 3)
    reference = reference_fill_mask(masked_lm, tokenizer, THREE_MASKS, 3)
    top = reference[1][0]["token_str"]  # mask 2's top guess: checked as the true word, it is rank 1
    words = {1: "quick", 2: top, 3: "😀"}
    checks = {n: mlm.check_true_word(analysis, tokenizer, w, n) for n, w in words.items() if w != "😀"}
    checks[3] = mlm.true_word_problem(tokenizer, "😀") or ""
    overview = mlm.mask_overview(guesses, words, checks).set_index("mask")
    assert overview["top guess"].tolist() == [r[0]["token_str"] for r in reference]
    np.testing.assert_allclose(overview["P(top guess)"], [r[0]["score"] for r in reference], rtol=1e-5)
    assert overview.loc[2, "top guess is the true word"] == "yes ✓" and overview.loc[2, "rank of the true word"] == 1
    quick = tokenizer.convert_tokens_to_ids("quick")
    every_guess = reference_fill_mask(masked_lm, tokenizer, THREE_MASKS, tokenizer.vocab_size)[0]
    assert overview.loc[1, "P(true word)"] == pytest.approx(
        next(r["score"] for r in every_guess if r["token"] == quick)
    )
    assert "unknown to this vocabulary" in overview.loc[3, "top guess is the true word"]
    assert mlm.average_top_confidence(guesses) == pytest.approx(np.mean([r[0]["score"] for r in reference]), rel=1e-5)
    assert "true word" not in mlm.mask_overview(guesses, {}, {}).columns


def test_at_a_glance_names_the_piece_scored_for_a_several_piece_word(tiny_bundle):
    analysis = analyze(tiny_bundle, THREE_MASKS)
    guesses = mlm.top_k_guesses(analysis, tiny_bundle.tokenizer, 3)
    check = mlm.check_true_word(analysis, tiny_bundle.tokenizer, "backpropagation", 1)
    overview = mlm.mask_overview(guesses, {1: "backpropagation"}, {1: check})
    assert overview.loc[0, "true word"] == "backpropagation (scored: back)"


def test_at_a_glance_says_no_when_the_true_word_is_only_the_second_guess(tiny_bundle, masked_lm):
    """A true word the pipeline ranks second must read "no", rank 2: not "yes ✓" as if it were BERT's top guess."""
    tokenizer = tiny_bundle.tokenizer
    analysis = analyze(tiny_bundle, THREE_MASKS)
    reference = reference_fill_mask(masked_lm, tokenizer, THREE_MASKS, 5)
    # a mask whose second guess is a whole word, so that typing it scores exactly that token
    number, second = next(
        (n, r[1])
        for n, r in enumerate(reference, start=1)
        if tokenizer.tokenize(r[1]["token_str"]) == [r[1]["token_str"]]
    )
    assert reference[number - 1][0]["score"] > second["score"]  # strictly second, not tied with the first
    check = mlm.check_true_word(analysis, tokenizer, second["token_str"], number)
    assert check.token_id == second["token"]
    overview = mlm.mask_overview(
        mlm.top_k_guesses(analysis, tokenizer, 3), {number: second["token_str"]}, {number: check}
    ).set_index("mask")
    assert overview.loc[number, "rank of the true word"] == 2
    assert overview.loc[number, "top guess is the true word"] == "no"
    assert overview.loc[number, "P(true word)"] == pytest.approx(second["score"], rel=1e-5)


def test_at_a_glance_leaves_p_blank_for_a_word_that_cannot_be_scored(tiny_bundle):
    """An unscorable word ([UNK]) or a mask without a true word shows a blank P and rank, never P = 0.0."""
    tokenizer = tiny_bundle.tokenizer
    analysis = analyze(tiny_bundle, THREE_MASKS)
    problem = mlm.true_word_problem(tokenizer, "😀")
    assert problem is not None
    overview = mlm.mask_overview(
        mlm.top_k_guesses(analysis, tokenizer, 3),
        {1: "😀", 3: "dog"},
        {1: problem, 3: mlm.check_true_word(analysis, tokenizer, "dog", 3)},
    ).set_index("mask")
    for number in (1, 2):  # 1: cannot be scored; 2: no word typed
        assert pd.isna(overview.loc[number, "P(true word)"]), overview.loc[number, "P(true word)"]
        assert pd.isna(overview.loc[number, "rank of the true word"])
    assert overview.loc[1, "top guess is the true word"] == problem
    assert overview.loc[2, "top guess is the true word"] == ""
    assert overview.loc[3, "P(true word)"] > 0


def test_the_many_masks_notice_starts_just_above_the_threshold(tiny_bundle):
    """MANY_MASKS masks in a sentence with context: no notice; one more: the notice, naming the count."""
    words = "the cat sat on the old mat by the door".split()

    def notices(masks: int) -> list[str]:
        text = " ".join(w for pair in zip(["[MASK]"] * masks, words) for w in pair) + " " + " ".join(words[masks:])
        analysis = analyze(tiny_bundle, text)
        assert len(analysis.mask_positions) == masks == text.count("[MASK]")
        return mlm.mask_notices(text, analysis)

    assert notices(mlm.MANY_MASKS) == []
    (note,) = notices(mlm.MANY_MASKS + 1)
    assert note.startswith(f"{mlm.MANY_MASKS + 1} masks:")


@pytest.mark.parametrize("text", ["[MASK] [MASK] cat", "[MASK] cat [MASK]", "dog [MASK]"])
def test_masks_with_one_word_of_context_are_not_nothing_but_masks(tiny_bundle, text):
    """A single real word among the masks is context: no "nothing but masks" notice."""
    assert mlm.mask_notices(text, analyze(tiny_bundle, text)) == []


@pytest.mark.parametrize("text", ["[MASK] [MASK]", "[MASK] [MASK] [MASK]"])
def test_only_masks_is_nothing_but_masks(tiny_bundle, text):
    assert mlm.mask_notices(text, analyze(tiny_bundle, text)) == [
        "There is nothing but masks: with no context, BERT's guesses show only its prior."
    ]
