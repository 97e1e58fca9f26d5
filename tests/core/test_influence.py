"""Mask and see: the batched pass of every variant equals running each masked (or shortened) input alone."""

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, rankdata, spearmanr
from transformers import BertForNextSentencePrediction, BertModel

from bertlens.analysis import analyze, model_engine
from bertlens.influence import (
    AFTER_LABELS,
    Influence,
    attention_received,
    influence_table,
    mask_and_see,
    rank_correlation,
    watch,
    within_budget,
)
from bertlens.models import bundled_model_path


def variant(ids: list[int], position: int, mode: str, mask_id: int) -> list[int]:
    return ids[:position] + ([mask_id] if mode == "mask" else []) + ids[position + 1 :]


def assert_guess_label(label: str, probs: np.ndarray, tokenizer) -> None:
    """``label`` reads "token (p)": the reference's top token and its probability (to the 3 figures shown)."""
    token, shown = label.rsplit(" (", 1)
    assert token == tokenizer.convert_ids_to_tokens(int(probs.argmax()))
    assert float(shown.rstrip(")")) == pytest.approx(probs.max(), rel=1e-2)


def reference_guesses(masked_lm, token_ids: list[int], position: int) -> np.ndarray:
    """The MLM head's own probabilities at ``position`` (float64 softmax of its logits)."""
    with torch.no_grad():
        return masked_lm(input_ids=torch.tensor([token_ids])).logits[0, position].double().softmax(-1).numpy()


@pytest.mark.parametrize("mode", ["mask", "delete"])
def test_guess_change_equals_one_pass_per_variant(tiny_bundle, masked_lm, mode):
    tokenizer = tiny_bundle.tokenizer
    text = "The capital of France is [MASK]."
    ours = mask_and_see(tiny_bundle, analyze(tiny_bundle, text), mode)
    ids = tokenizer(text)["input_ids"]
    mask = ids.index(tokenizer.mask_token_id)
    assert ours.measure == "guess" and ours.observer == mask
    assert ours.tested == tuple(i for i in range(1, len(ids) - 1) if i != mask)

    def guesses(token_ids: list[int]) -> np.ndarray:
        with torch.no_grad():
            logits = masked_lm(input_ids=torch.tensor([token_ids])).logits[0]
        return (
            logits[token_ids.index(tokenizer.mask_token_id) if mode == "delete" else mask].double().softmax(-1).numpy()
        )

    before = guesses(ids)
    assert_guess_label(ours.before, before, tokenizer)  # the top guess before hiding, from the MLM head
    for position, effect, label in zip(ours.tested, ours.effect, ours.after, strict=True):
        after = guesses(variant(ids, position, mode, tokenizer.mask_token_id)) if mode == "delete" else None
        if mode == "mask":  # two masks now: watch the original one
            with torch.no_grad():
                logits = masked_lm(
                    input_ids=torch.tensor([variant(ids, position, mode, tokenizer.mask_token_id)])
                ).logits[0, mask]
            after = logits.double().softmax(-1).numpy()
        assert effect == pytest.approx(0.5 * np.abs(after - before).sum(), abs=2e-5)
        assert_guess_label(label, after, tokenizer)


def test_verdict_change_equals_the_nsp_model(tiny_pretraining_dir, tiny_bundle):
    nsp_model = BertForNextSentencePrediction.from_pretrained(tiny_pretraining_dir).eval()
    a, b = "I went to the store.", "At the store, I bought fruit."
    ours = mask_and_see(tiny_bundle, analyze(tiny_bundle, a, b), "mask")
    assert ours.measure == "verdict" and ours.observer == 0
    encoded = tiny_bundle.tokenizer(a, b)

    def p_is_next(ids):
        with torch.no_grad():
            logits = nsp_model(
                input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([encoded["token_type_ids"]])
            ).logits
        return logits[0].double().softmax(-1)[0].item()

    before = p_is_next(encoded["input_ids"])
    # shown to 4 decimals: P(IsNext) (index 0 of the NSP head), not P(NotNext) = 1 - P(IsNext)
    assert abs(before - 0.5) > 1e-3  # else P(IsNext) and P(NotNext) would read alike
    assert float(ours.before) == pytest.approx(before, abs=6e-5) and len(ours.before) == len("0.1234")
    for position, effect, label in zip(ours.tested, ours.effect, ours.after, strict=True):
        after = p_is_next(variant(encoded["input_ids"], position, "mask", tiny_bundle.tokenizer.mask_token_id))
        assert effect == pytest.approx(abs(after - before), abs=1e-5)
        assert abs(after - 0.5) > 1e-3
        assert float(label) == pytest.approx(after, abs=6e-5) and len(label) == len("0.1234")


def test_vectors_move_on_a_model_without_heads(bundled):
    encoder = BertModel.from_pretrained(bundled_model_path()).eval()
    text = "The cat sat on the mat"
    analysis = analyze(bundled, text)
    ours = mask_and_see(bundled, analysis, "delete")
    assert ours.measure == "vectors" and ours.observer is None and ours.tested == (1, 2, 3, 4, 5, 6)
    ids = bundled.tokenizer(text)["input_ids"]
    with torch.no_grad():
        before = encoder(input_ids=torch.tensor([ids])).last_hidden_state[0]
        for position, effect, label in zip(ours.tested, ours.effect, ours.after, strict=True):
            after = encoder(input_ids=torch.tensor([variant(ids, position, "delete", 0)])).last_hidden_state[0]
            kept = [i for i in range(len(ids)) if i != position]
            cosine = torch.nn.functional.cosine_similarity(before[kept], after, dim=-1)
            assert effect == pytest.approx((1 - cosine).mean().item(), abs=1e-5)
            # "token that moved most": the kept token whose state moved furthest (largest 1 - cos)
            distance = (1 - cosine).double().numpy()
            most = kept[int(distance.argmax())]
            assert np.sort(distance)[-1] - np.sort(distance)[-2] > 1e-4  # a clear winner, not float noise
            assert label.startswith(f"{most} {bundled.tokenizer.convert_ids_to_tokens(ids[most])} (")
            assert float(label.rsplit("(", 1)[1].rstrip(")")) == pytest.approx(distance.max(), rel=1e-2, abs=1e-4)
    matrix = analysis.attentions[2, 3]
    received = attention_received(matrix, ours)
    n = matrix.shape[0]
    np.testing.assert_allclose(
        received, [np.mean([matrix[i, j] for i in range(n) if i != j]) for j in ours.tested], rtol=1e-6
    )


def test_one_hidden_token_costs_one_pass_and_equals_its_row_of_every_token(tiny_bundle, masked_lm):
    analysis = analyze(tiny_bundle, "The capital of France is [MASK].")
    every = mask_and_see(tiny_bundle, analysis, "mask")
    engine = model_engine(tiny_bundle)
    runs = engine.executions
    one = mask_and_see(tiny_bundle, analysis, "mask", hide=3)
    assert engine.executions == runs + 1  # one extra pass, of one variant
    assert one.tested == (3,) and one.candidates == 1
    row = every.tested.index(3)
    assert one.effect[0] == pytest.approx(every.effect[row], abs=1e-6) and one.after == (every.after[row],)
    assert one.before == every.before
    ids = tiny_bundle.tokenizer("The capital of France is [MASK].")["input_ids"]
    assert_guess_label(one.before, reference_guesses(masked_lm, ids, one.observer), tiny_bundle.tokenizer)
    masked = variant(ids, 3, "mask", tiny_bundle.tokenizer.mask_token_id)
    assert_guess_label(one.after[0], reference_guesses(masked_lm, masked, one.observer), tiny_bundle.tokenizer)
    assert watch(tiny_bundle, analysis, "mask").hideable == every.tested
    assert mask_and_see(tiny_bundle, analysis, "mask", hide=0).tested == ()  # [CLS] is not hideable


def test_the_token_budget_keeps_the_tokens_nearest_the_watched_one(tiny_bundle):
    assert within_budget(list(range(1, 11)), 6, 10, 40) == [4, 5, 6, 7]  # room for 4; ties go to the earlier token
    assert within_budget([1, 2, 3, 5, 7, 8], 4, 10, 30) == [2, 3, 5]
    assert within_budget([1, 2, 3, 5, 7, 8], None, 10, 30) == [1, 2, 3]  # nothing watched: the first ones
    assert within_budget([1, 2, 3], 0, 10, 10_000) == [1, 2, 3]
    text = "one two three four five six seven eight nine ten eleven twelve [MASK] thirteen fourteen"
    ours = mask_and_see(tiny_bundle, analyze(tiny_bundle, text), "mask", budget=5 * 18)
    assert ours.observer == 13 and ours.candidates == 14  # 18 tokens: [CLS], 12 words, [MASK], 2 words, [SEP]
    assert ours.tested == (10, 11, 12, 14, 15) and len(ours.effect) == 5


def test_rank_correlation():
    assert rank_correlation(np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])) == pytest.approx(1.0)
    assert rank_correlation(np.array([0.1, 0.2, 0.3]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    assert rank_correlation(np.array([0.1, 0.2]), np.array([3.0, 2.0])) is None
    assert rank_correlation(np.array([0.1, 0.2, 0.3]), np.array([2.0, 2.0, 2.0])) is None  # constant influence
    # same order, far from linear: the rank correlation is 1 (Pearson's would be about 0.8)
    assert rank_correlation(np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, 2.0, 3.0, 100.0])) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "received, effect",
    [
        ([0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 100.0]),  # same order, far from linear: Spearman 1, Pearson ~0.8
        ([0.05, 0.4, 0.1, 0.3, 0.2], [0.9, 0.01, 0.5, 0.02, 0.03]),
        ([0.1, 0.1, 0.3, 0.5, 0.2], [3.0, 1.0, 1.0, 1000.0, 2.0]),  # ties: average ranks
    ],
)
def test_rank_correlation_is_spearmans_not_pearsons(received, effect):
    """Mask & see reports Spearman's rank correlation (scipy's), which differs from Pearson's on these."""
    ours = rank_correlation(np.array(received), np.array(effect))
    assert ours == pytest.approx(spearmanr(received, effect).statistic, abs=1e-12)
    assert abs(ours - pearsonr(received, effect).statistic) > 0.05  # the data can tell the two apart


def test_rank_columns_rank_the_largest_first_ties_sharing_the_best_rank():
    """Rank 1 is the token that received the most attention / had the most influence; ties share the lower rank."""
    received = np.array([0.30, 0.05, 0.30, 0.20, 0.45])
    effect = np.array([0.01, 0.50, 0.20, 0.20, 0.00])
    influence = Influence("verdict", "mask", 0, (1, 2, 3, 4, 5), effect, ("0.5",) * 5, 5, "0.5")
    table = influence_table(influence, ("[CLS]", "a", "b", "c", "d", "e", "[SEP]"), received)
    assert table["attention rank"].tolist() == [2, 5, 2, 4, 1] == rankdata(-received, "min").tolist()
    assert table["influence rank"].tolist() == [4, 1, 2, 2, 5] == rankdata(-effect, "min").tolist()
    assert table["token"].tolist() == list("abcde") and AFTER_LABELS["verdict"] in table.columns


def test_one_hidden_token_has_no_rank_columns():
    """Ranked among itself one token is always 1: the table once said "attention rank 1" beside a sentence
    giving that token's rank among every hideable token (e.g. 6 of 6)."""
    influence = Influence("verdict", "mask", 0, (3,), np.array([0.2]), ("0.5",), 5, "0.5")
    table = influence_table(influence, ("[CLS]", "a", "b", "c", "d", "e", "[SEP]"), np.array([0.05]))
    assert table.columns.tolist() == [
        "position",
        "token",
        "attention received",
        influence.effect_label,
        AFTER_LABELS["verdict"],
    ]


def test_rank_columns_of_a_real_run_equal_scipy(tiny_bundle):
    analysis = analyze(tiny_bundle, "The capital of France is [MASK].")
    ours = mask_and_see(tiny_bundle, analysis, "mask")
    received = attention_received(analysis.attentions[1, 2], ours)
    table = influence_table(ours, analysis.encoding.tokens, received)
    np.testing.assert_array_equal(table["attention rank"], rankdata(-received, "min"))
    np.testing.assert_array_equal(table["influence rank"], rankdata(-ours.effect, "min"))
