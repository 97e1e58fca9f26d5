"""The pre-training corruption (15 %, 80/10/10) and its loss, against the model's own MLM loss."""

from collections import Counter

import numpy as np
import pytest
import torch

from bertlens.analysis import encode
from bertlens.pretraining import corrupt, pretraining_step

TEXT = "The quick brown fox jumps over the lazy dog while the farmer watches from the old wooden fence."


def test_a_draw_chooses_15_percent_of_the_words_tokens_never_cls_or_sep(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, TEXT, "It was a sunny day.")
    mask_id = tiny_bundle.tokenizer.mask_token_id
    real = [i for i, s in enumerate(encoding.sequence_ids) if s is not None]
    for draw in range(50):
        c = corrupt(encoding, mask_id, 30522, draw)
        assert len(c.positions) == round(0.15 * len(encoding)) and set(c.positions) <= set(real)  # Google's count
        for position, action in zip(c.positions, c.actions):
            changed = c.input_ids[position] != encoding.input_ids[position]
            assert (action == "[MASK]") == (c.input_ids[position] == mask_id)
            assert action != "kept" or not changed
        untouched = set(range(len(encoding))) - set(c.positions)
        assert all(c.input_ids[i] == encoding.input_ids[i] for i in untouched)
    assert corrupt(encoding, mask_id, 30522, 7) == corrupt(encoding, mask_id, 30522, 7)  # a draw is reproducible


def test_the_shares_are_80_10_10_over_many_draws(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, TEXT)
    actions = Counter(a for draw in range(2000) for a in corrupt(encoding, 103, 30522, draw).actions)
    total = sum(actions.values())
    assert actions["[MASK]"] / total == pytest.approx(0.8, abs=0.02)
    assert actions["random token"] / total == pytest.approx(0.1, abs=0.015)
    assert actions["kept"] / total == pytest.approx(0.1, abs=0.015)


def test_a_one_word_sentence_still_gets_one_chosen_token(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, "Hello")
    assert len(corrupt(encoding, 103, 30522, 0).positions) == 1


@pytest.mark.parametrize("draw", [0, 1, 2, 3])
def test_the_loss_is_the_models_own_mlm_loss_at_the_chosen_positions(tiny_bundle, masked_lm, draw):
    encoding = encode(tiny_bundle.tokenizer, TEXT)
    step = pretraining_step(tiny_bundle, encoding, draw)
    ids = torch.tensor([step.corruption.input_ids])
    labels = torch.full_like(ids, -100)
    chosen = list(step.corruption.positions)
    labels[0, chosen] = torch.tensor([encoding.input_ids[p] for p in chosen])
    with torch.no_grad():
        out = masked_lm(input_ids=ids, labels=labels)
    assert step.loss == pytest.approx(out.loss.item(), rel=1e-4)  # transformers' loss: -100 labels ignored
    probs = out.logits[0, chosen].softmax(-1)
    assert step.table["top guess"].tolist() == tiny_bundle.tokenizer.convert_ids_to_tokens(probs.argmax(-1).tolist())
    originals = torch.tensor([encoding.input_ids[p] for p in chosen])
    np.testing.assert_allclose(step.table["P(original)"], probs[range(len(chosen)), originals].numpy(), rtol=1e-4)
    assert step.seen == tuple(tiny_bundle.tokenizer.convert_ids_to_tokens(list(step.corruption.input_ids)))


def test_no_mlm_head_no_guesses(bundled):
    with pytest.raises(ValueError):
        pretraining_step(bundled, encode(bundled.tokenizer, TEXT), 0)


def test_a_typed_mask_is_never_chosen(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, "The [MASK] sat on the mat with a [MASK].")
    mask_id = tiny_bundle.tokenizer.mask_token_id
    typed = {i for i, t in enumerate(encoding.input_ids) if t == mask_id}
    for draw in range(30):
        c = corrupt(encoding, mask_id, 30522, draw)
        assert not typed & set(c.positions) and c.candidates == len(encoding) - 2 - len(typed)
    assert corrupt(encode(tiny_bundle.tokenizer, "[MASK]"), mask_id, 30522, 0).positions == ()


def test_random_tokens_come_from_the_tokenizers_vocabulary(tiny_bundle):
    """A checkpoint may have more embedding rows than vocabulary entries: a random token is always a real entry."""
    step = pretraining_step(tiny_bundle, encode(tiny_bundle.tokenizer, TEXT), 0)
    assert None not in step.seen
    encoding = encode(tiny_bundle.tokenizer, TEXT)
    drawn = [c.input_ids[p] for d in range(300) for c in [corrupt(encoding, 103, 100, d)]
             for p, a in zip(c.positions, c.actions) if a == "random token"]  # fmt: skip
    assert drawn and max(drawn) < 100
