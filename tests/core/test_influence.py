"""Mask and see: the batched pass of every variant equals running each masked (or shortened) input alone."""

import numpy as np
import pytest
import torch
from transformers import BertForNextSentencePrediction, BertModel

from bertlens.analysis import analyze
from bertlens.influence import attention_received, mask_and_see, rank_correlation, within_budget
from bertlens.models import bundled_model_path


def variant(ids: list[int], position: int, mode: str, mask_id: int) -> list[int]:
    return ids[:position] + ([mask_id] if mode == "mask" else []) + ids[position + 1 :]


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
    for position, effect in zip(ours.tested, ours.effect):
        after = guesses(variant(ids, position, mode, tokenizer.mask_token_id)) if mode == "delete" else None
        if mode == "mask":  # two masks now: watch the original one
            with torch.no_grad():
                logits = masked_lm(
                    input_ids=torch.tensor([variant(ids, position, mode, tokenizer.mask_token_id)])
                ).logits[0, mask]
            after = logits.double().softmax(-1).numpy()
        assert effect == pytest.approx(0.5 * np.abs(after - before).sum(), abs=2e-5)


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
    for position, effect in zip(ours.tested, ours.effect):
        after = p_is_next(variant(encoded["input_ids"], position, "mask", tiny_bundle.tokenizer.mask_token_id))
        assert effect == pytest.approx(abs(after - before), abs=1e-5)


def test_vectors_move_on_a_model_without_heads(bundled):
    encoder = BertModel.from_pretrained(bundled_model_path()).eval()
    text = "The cat sat on the mat"
    analysis = analyze(bundled, text)
    ours = mask_and_see(bundled, analysis, "delete")
    assert ours.measure == "vectors" and ours.observer is None and ours.tested == (1, 2, 3, 4, 5, 6)
    ids = bundled.tokenizer(text)["input_ids"]
    with torch.no_grad():
        before = encoder(input_ids=torch.tensor([ids])).last_hidden_state[0]
        for position, effect in zip(ours.tested, ours.effect):
            after = encoder(input_ids=torch.tensor([variant(ids, position, "delete", 0)])).last_hidden_state[0]
            kept = [i for i in range(len(ids)) if i != position]
            cosine = torch.nn.functional.cosine_similarity(before[kept], after, dim=-1)
            assert effect == pytest.approx((1 - cosine).mean().item(), abs=1e-5)
    matrix = analysis.attentions[2, 3]
    received = attention_received(matrix, ours)
    n = matrix.shape[0]
    np.testing.assert_allclose(
        received, [np.mean([matrix[i, j] for i in range(n) if i != j]) for j in ours.tested], rtol=1e-6
    )


def test_one_hidden_token_costs_one_pass_and_equals_its_row_of_every_token(tiny_bundle):
    from bertlens.analysis import model_engine
    from bertlens.influence import watch

    analysis = analyze(tiny_bundle, "The capital of France is [MASK].")
    every = mask_and_see(tiny_bundle, analysis, "mask")
    engine = model_engine(tiny_bundle)
    runs = engine.executions
    one = mask_and_see(tiny_bundle, analysis, "mask", hide=3)
    assert engine.executions == runs + 1  # one extra pass, of one variant
    assert one.tested == (3,) and one.candidates == 1
    row = every.tested.index(3)
    assert one.effect[0] == pytest.approx(every.effect[row], abs=1e-6) and one.after == (every.after[row],)
    assert one.before == every.before != ""
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
