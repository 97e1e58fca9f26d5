"""The pre-training corruption (15 %, 80/10/10) and its loss, against the model's own MLM loss."""

from collections import Counter

import numpy as np
import pytest
import torch

from bertlens.analysis import encode
from bertlens.pretraining import corrupt, pretraining_step

TEXT = "The quick brown fox jumps over the lazy dog while the farmer watches from the old wooden fence."


def test_a_draw_chooses_15_percent_of_the_words_tokens_never_cls_or_sep(tiny_bundle):
    """Google counts 15 % of the whole sequence ([CLS] and [SEP] included): 26 tokens -> round(3.9) = 4 chosen,
    where 15 % of the 23 text tokens alone would give round(3.45) = 3."""
    encoding = encode(tiny_bundle.tokenizer, TEXT, "It was sunny.")
    assert len(encoding) == 26
    mask_id = tiny_bundle.tokenizer.mask_token_id
    real = [i for i, s in enumerate(encoding.sequence_ids) if s is not None]
    assert len(real) == 23
    for draw in range(50):
        c = corrupt(encoding, mask_id, 30522, draw)
        assert len(c.positions) == 4 and set(c.positions) <= set(real) and c.candidates == 23  # Google's count
        for position, action in zip(c.positions, c.actions):
            changed = c.input_ids[position] != encoding.input_ids[position]
            assert (action == "[MASK]") == (c.input_ids[position] == mask_id)
            assert action != "kept" or not changed
        untouched = set(range(len(encoding))) - set(c.positions)
        assert all(c.input_ids[i] == encoding.input_ids[i] for i in untouched)
    assert corrupt(encoding, mask_id, 30522, 7) == corrupt(encoding, mask_id, 30522, 7)  # a draw is reproducible


@pytest.mark.parametrize(
    "text, tokens, chosen",
    [
        (TEXT, 21, 3),  # round(3.15)
        (TEXT[:-1] + " near the barn.", 24, 4),  # round(3.6); 15 % of the 22 text tokens would be round(3.3) = 3
        (TEXT[:-1] + " near the red barn.", 25, 4),  # round(3.75); the 23 text tokens alone: round(3.45) = 3
        ("Hello", 3, 1),  # round(0.45) = 0, but at least one
    ],
)
def test_the_chosen_count_is_15_percent_of_the_whole_sequence(tiny_bundle, text, tokens, chosen):
    """ "Tokens chosen" is 15 % of the sequence length in tokens ([CLS] and [SEP] count), as Google's
    create_pretraining_data.py counts it, at least one."""
    encoding = encode(tiny_bundle.tokenizer, text)
    assert len(encoding) == tokens
    assert {len(corrupt(encoding, 103, 30522, draw).positions) for draw in range(20)} == {chosen}


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
    # the rank of the original: 1 + how many vocabulary entries the MLM head scores strictly higher
    log_probs = out.logits[0, chosen].double().log_softmax(-1)
    expected_ranks = [1 + int((row > row[o]).sum()) for row, o in zip(log_probs, originals.tolist())]
    assert step.table["rank of the original"].tolist() == expected_ranks
    assert step.table["original token"].tolist() == [encoding.tokens[p] for p in chosen]


@pytest.mark.parametrize("draw", [0, 1, 2, 3])
def test_bert_is_given_the_corrupted_token_not_the_original(tiny_bundle, draw):
    """ "BERT is given" shows the token the model actually receives: [MASK] where the action is [MASK], the drawn
    token where it is random, the original only where it is kept."""
    tokenizer = tiny_bundle.tokenizer
    encoding = encode(tokenizer, TEXT)
    step = pretraining_step(tiny_bundle, encoding, draw)
    received = tokenizer.convert_ids_to_tokens(list(step.corruption.input_ids))
    table = step.table
    assert table["BERT is given"].tolist() == [received[p] for p in table["position"]]
    masked = table[table["what happened"] == "[MASK]"]
    assert len(masked) and set(masked["BERT is given"]) == {"[MASK]"}
    assert (masked["original token"] != "[MASK]").all()
    kept = table[table["what happened"] == "kept"]
    assert kept["BERT is given"].tolist() == kept["original token"].tolist()


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
