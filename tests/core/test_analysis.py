import numpy as np
import pytest
import torch

from bertlens.analysis import analyze, encode, input_problem, max_tokens


def test_seed_token_ids(bundled):
    enc = encode(bundled.tokenizer, "Sinan loves a beautiful day")
    assert enc.input_ids == (101, 8254, 2319, 7459, 1037, 3376, 2154, 102)
    assert enc.tokens[1:3] == ("sin", "##an") and enc.word_ids[1:3] == (0, 0)


def test_pair_segments(bundled):
    enc = encode(bundled.tokenizer, "I went to the store.", "At the store, I bought fresh strawberries.")
    sep = enc.tokens.index("[SEP]")
    assert enc.token_type_ids[: sep + 1] == (0,) * (sep + 1)
    assert set(enc.token_type_ids[sep + 1 :]) == {1}
    assert "straw" in enc.tokens and "##berries" in enc.tokens


def test_one_forward_pass_gives_every_output(tiny_bundle):
    a = analyze(tiny_bundle, "The capital of [MASK] is [MASK].", "It is big.")
    n, caps = len(a.encoding), tiny_bundle.capabilities
    assert a.attentions.shape == (caps.num_layers, caps.num_heads, n, n)
    assert a.hidden_states.shape == (caps.num_layers + 1, n, caps.hidden_size)
    assert a.mlm_logits.shape == (2, caps.vocab_size) and len(a.mask_positions) == 2
    assert a.nsp_logits.shape == (2,) and a.pooler_output.shape == (caps.hidden_size,)
    # Equal to the model's own pre-training outputs.
    with torch.no_grad():
        ref = tiny_bundle.model(
            input_ids=torch.tensor([a.encoding.input_ids]),
            token_type_ids=torch.tensor([a.encoding.token_type_ids]),
            output_attentions=True,
            output_hidden_states=True,
        )
    np.testing.assert_allclose(a.mlm_logits, ref.prediction_logits[0, list(a.mask_positions)].numpy(), atol=1e-5)
    np.testing.assert_allclose(a.nsp_logits, ref.seq_relationship_logits[0].numpy(), atol=1e-6)
    np.testing.assert_allclose(a.attentions[1], ref.attentions[1][0].numpy(), atol=1e-6)
    np.testing.assert_allclose(a.hidden_states[-1], ref.hidden_states[-1][0].numpy(), atol=1e-5)


def test_attention_rows_sum_to_one(bundled):
    a = analyze(bundled, "The animal didn't cross the street because it was too tired.")
    np.testing.assert_allclose(a.attentions.sum(-1), 1.0, atol=1e-5)
    assert a.mlm_logits is None and a.nsp_logits is None  # no random heads, ever


def test_results_are_read_only(bundled):
    a = analyze(bundled, "Hello world")
    with pytest.raises(ValueError):
        a.attentions[0, 0, 0, 0] = 1.0


def test_long_input_is_truncated_to_model_positions(bundled):
    a = analyze(bundled, "word " * 700)
    assert len(a.encoding) == 512 and a.encoding.full_length == 702 and a.encoding.truncated
    assert a.encoding.tokens[-1] == "[SEP]"
    assert analyze(bundled, "word " * 700, token_cap=64).encoding.input_ids.__len__() == 64


def test_a_token_cap_above_the_position_embeddings_still_stops_at_them(bundled):
    """A server's token cap of 1,000 cannot let 700 words past the model's 512 position embeddings."""
    positions = bundled.model.config.max_position_embeddings
    assert positions == bundled.model.bert.embeddings.position_embeddings.weight.shape[0] == 512
    assert max_tokens(bundled, 10_000) == max_tokens(bundled, 512) == max_tokens(bundled) == positions
    assert max_tokens(bundled, 100) == 100
    a = analyze(bundled, "word " * 700, token_cap=1000)
    assert len(a.encoding) == positions and a.attentions.shape[-1] == positions and a.encoding.truncated


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_a_problem(text):
    assert "empty" in input_problem(text)


@pytest.mark.parametrize("text", ["😀🔥", "<script>alert(1)</script>", "مرحبا بالعالم", "你好世界今天", "a\u200bb"])
def test_odd_text_is_analysed(bundled, text):
    assert input_problem(text) is None
    a = analyze(bundled, text)
    assert a.encoding.tokens[0] == "[CLS]" and a.attentions.shape[-1] == len(a.encoding)
