"""Two sentences compared: token alignment, attention difference, where the guesses moved."""

import numpy as np
import torch

from bertlens.analysis import analyze
from bertlens.compare import (
    SEED_FIRST,
    SEED_SECOND,
    align_tokens,
    attention_difference,
    default_second,
    guess_difference,
    paired,
    partner_mask,
    unaligned_note,
)
from tests.core.test_influence import reference_guesses


def test_the_seed_pair_aligns_token_by_token_with_one_change(bundled):
    first, second = (bundled.tokenizer.tokenize(s) for s in (SEED_FIRST, SEED_SECOND))
    alignment = align_tokens(tuple(first), tuple(second))
    assert [(r.first, r.second) for r in alignment] == [(i, i) for i in range(len(first))]
    assert [(first[r.first], second[r.second]) for r in alignment if r.status == "changed"] == [("tired", "wide")]
    assert unaligned_note(alignment, tuple(first), tuple(second)) is None


def test_tokens_that_cannot_pair_are_named():
    first, second = ("[CLS]", "a", "cat", "[SEP]"), ("[CLS]", "a", "big", "black", "dog", "[SEP]")
    alignment = align_tokens(first, second)
    assert [(r.first, r.second) for r in paired(alignment)] == [(0, 0), (1, 1), (3, 5)]
    note = unaligned_note(alignment, first, second)
    assert "only in the first sentence: 2 cat" in note and "only in the second: 2 big, 3 black, 4 dog" in note


def test_attention_difference_is_second_minus_first_over_paired_tokens(bundled):
    inputs = [
        bundled.tokenizer(s, return_tensors="pt")
        for s in (SEED_FIRST, "The animal didn't cross the wide street because it was too tired.")
    ]
    with torch.no_grad():
        first, second = (bundled.model.bert(**i, output_attentions=True).attentions[3][0, 1].numpy() for i in inputs)
    tokens = [tuple(bundled.tokenizer.convert_ids_to_tokens(i["input_ids"][0])) for i in inputs]
    alignment = align_tokens(*tokens)
    diff = attention_difference(first, second, alignment)
    assert diff.shape == (16, 16)  # "wide" inserted: 17 tokens, 16 pairs
    # pairs: positions 0..7 equal, then first i ↔ second i+1
    map_b = [i if i < 8 else i + 1 for i in range(16)]
    np.testing.assert_allclose(diff, second[np.ix_(map_b, map_b)] - first, atol=1e-7)


def mask_probabilities(bundle, masked_lm, text: str) -> np.ndarray:
    """The reference: BertForMaskedLM's own softmax over the vocabulary at the first [MASK]."""
    ids = bundle.tokenizer(text)["input_ids"]
    return reference_guesses(masked_lm, ids, ids.index(bundle.tokenizer.mask_token_id))


def test_guess_difference_equals_the_two_softmaxes(tiny_bundle, masked_lm):
    texts = ("The animal was too [MASK].", "The street was too [MASK].")
    table = guess_difference(*(analyze(tiny_bundle, t) for t in texts), 1, tiny_bundle.tokenizer, 5)
    probabilities = [mask_probabilities(tiny_bundle, masked_lm, text) for text in texts]
    expected_ids = set(np.argsort(-probabilities[0])[:5]) | set(np.argsort(-probabilities[1])[:5])
    assert set(table["token_id"]) == expected_ids
    np.testing.assert_allclose(table["P (first)"], probabilities[0][table["token_id"]], rtol=1e-4)
    np.testing.assert_allclose(table["P (second)"], probabilities[1][table["token_id"]], rtol=1e-4)
    change = table["change (second − first)"].abs().to_numpy()
    assert (np.diff(change) <= 0).all()  # the largest move first


def test_guess_ranks_are_each_sentences_own_rank_in_the_vocabulary(tiny_bundle, masked_lm):
    """ "rank (first)" and "rank (second)" are each token's place (1 = top guess) in its own sentence's guesses."""
    texts = ("[MASK] is here.", "Paris is the capital of France and this is a long sentence about [MASK].")
    table = guess_difference(*(analyze(tiny_bundle, t) for t in texts), 1, tiny_bundle.tokenizer, 5)
    for column, text in zip(("rank (first)", "rank (second)"), texts):
        p = mask_probabilities(tiny_bundle, masked_lm, text)
        # 1 + how many tokens are more probable; a random model's near-ties (within float noise) may go either way.
        fewest = np.array([1 + int((p > p[i] * (1 + 1e-5)).sum()) for i in table["token_id"]])
        most = np.array([int((p >= p[i] * (1 - 1e-5)).sum()) for i in table["token_id"]])  # i itself too
        ranks = table[column].to_numpy()
        assert ((fewest <= ranks) & (ranks <= most)).all(), column
        assert (fewest == most).sum() >= 5  # most ranks are exact: an off-by-one shows
        assert ranks.min() == 1  # the sentence's own top guess is in the table, at rank 1
    assert (table["rank (first)"] != table["rank (second)"]).sum() >= 5  # the two columns can tell each other apart


def test_the_default_second_sentence_changes_tired_to_wide_or_is_the_seeds():
    """A first sentence without "tired" is compared with the seed's second sentence, never with itself."""
    assert default_second("The cat sat.") == SEED_SECOND
    assert default_second(SEED_FIRST) == SEED_SECOND
    assert default_second("She couldn't walk, she was tired, so tired.") == "She couldn't walk, she was wide, so tired."
    assert default_second("He is retired.") == SEED_SECOND  # "retired" is not the word "tired"


def test_a_mask_is_compared_with_the_mask_in_its_place(tiny_bundle):
    """Masks were paired by their order: the first's only mask (token 6) beside the second's first mask (token 1),
    when its mask at token 6 is its second."""
    first = analyze(tiny_bundle, "The capital of France is [MASK].")
    assert partner_mask(first, analyze(tiny_bundle, "[MASK] capital of Germany is [MASK]."), 1) == 2
    assert partner_mask(first, analyze(tiny_bundle, "The capital of Germany is [MASK]."), 1) == 1
    assert partner_mask(first, analyze(tiny_bundle, "The [MASK] of France is big."), 1) is None  # no mask there
    assert partner_mask(first, analyze(tiny_bundle, "[MASK] is a city."), 1) is None  # nothing in its place
