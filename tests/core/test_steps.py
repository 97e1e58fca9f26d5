"""One head step by step and the guesses at every layer, against references computed here from the weights."""

import math

import numpy as np
import pytest
import torch

from bertlens import mlm
from bertlens.analysis import analyze, encode
from bertlens.steps import after_layer_label, head_steps, layer_guesses

SEED = "The animal didn't cross the street because it was too tired."


def reference_head(bundle, text: str, layer: int, head: int, query: int):
    """Recompute one head from the layer's own weights and hidden_states[layer]; capture its real output too."""
    model = bundle.model
    inputs = bundle.tokenizer(text, return_tensors="pt")
    captured = {}
    self_attention = model.bert.encoder.layer[layer].attention.self
    hook = self_attention.register_forward_hook(lambda module, args, output: captured.update(context=output[0]))
    try:
        with torch.no_grad():
            out = model.bert(**inputs, output_hidden_states=True, output_attentions=True)
    finally:
        hook.remove()
    d = model.config.hidden_size // model.config.num_attention_heads
    part = slice(head * d, (head + 1) * d)
    h = out.hidden_states[layer][0].double()
    project = lambda linear: h @ linear.weight.double().T + linear.bias.double()  # noqa: E731
    q, keys, values = (
        project(self_attention.query)[query, part],
        project(self_attention.key)[:, part],
        project(self_attention.value)[:, part],
    )
    scores = keys @ q / math.sqrt(d)
    weights = torch.softmax(scores, dim=-1)
    return {
        "q": q,
        "keys": keys,
        "values": values,
        "scaled": scores,
        "weights": weights,
        "output": weights @ values,
        "model_row": out.attentions[layer][0, head, query],
        "model_output": captured["context"][0, query, part],
    }


@pytest.mark.parametrize(
    "which, layer, head, query", [("tiny", 0, 0, 1), ("tiny", 1, 3, 5), ("bundled", 0, 2, 10), ("bundled", 5, 11, 10)]
)
def test_head_steps_equal_the_weights_and_the_forward_pass(tiny_bundle, bundled, which, layer, head, query):
    bundle = tiny_bundle if which == "tiny" else bundled
    steps = head_steps(bundle, analyze(bundle, SEED), layer, head, query)
    ref = reference_head(bundle, SEED, layer, head, query)
    for name in ("q", "keys", "values", "scaled", "weights", "output"):
        np.testing.assert_allclose(getattr(steps, name), ref[name].numpy(), atol=2e-5, rtol=1e-5, err_msg=name)
    np.testing.assert_allclose(steps.weights, ref["model_row"].numpy(), atol=1e-6)  # = output_attentions
    np.testing.assert_allclose(steps.output, ref["model_output"].numpy(), atol=1e-5)  # = the head's slice of the output
    assert (steps.mask_term == 0).all() and steps.max_abs_difference < 1e-6
    assert steps.head_size == bundle.capabilities.hidden_size // bundle.capabilities.num_heads
    table = steps.table(encode(bundle.tokenizer, SEED).tokens)
    assert table["softmax weight"].sum() == pytest.approx(1.0, abs=1e-5) and len(table) == 16
    # What each key adds to the output: ‖weight · value‖ from the layer's own value projection.
    contribution = (ref["weights"][:, None] * ref["values"]).norm(dim=1).numpy()
    np.testing.assert_allclose(table["‖weight · v‖"], contribution, atol=2e-5, rtol=1e-4)
    np.testing.assert_allclose(table["softmax weight"], ref["weights"].numpy(), atol=2e-5)
    vectors = steps.vectors(encode(bundle.tokenizer, SEED).tokens)
    assert vectors["vector"].value_counts().to_dict() == {"key": 16, "value": 16, "query": 1, "output": 1}


def test_layer_labels_say_which_encoder_layer():
    assert after_layer_label(0) == "embeddings output"
    assert after_layer_label(1) == "after encoder layer 0" and after_layer_label(12) == "after encoder layer 11"


@pytest.mark.parametrize(
    "text, mask_number", [("The capital of France is [MASK].", 1), ("The [MASK] sat on the [MASK].", 2)]
)
def test_guesses_at_every_layer_equal_the_mlm_head_on_each_hidden_state(tiny_bundle, masked_lm, text, mask_number):
    tokenizer = tiny_bundle.tokenizer
    paris = tokenizer.convert_tokens_to_ids("paris")
    analysis = analyze(tiny_bundle, text)
    ours = layer_guesses(tiny_bundle, analysis, 7, mask_number, paris)
    inputs = tokenizer(text, return_tensors="pt")
    position = (inputs["input_ids"][0] == tokenizer.mask_token_id).nonzero()[mask_number - 1].item()
    with torch.no_grad():
        states = masked_lm(**inputs, output_hidden_states=True).hidden_states
        probabilities = torch.stack([masked_lm.cls.predictions(s[0, position]) for s in states]).softmax(-1)
    assert len(ours.tokens) == tiny_bundle.capabilities.num_layers + 1
    top = probabilities.topk(7, dim=-1)
    np.testing.assert_array_equal(ours.token_ids, top.indices.numpy())
    np.testing.assert_allclose(ours.probabilities, top.values.numpy(), rtol=1e-4, atol=1e-8)
    np.testing.assert_array_equal(ours.true_ranks, 1 + (probabilities > probabilities[:, [paris]]).sum(-1).numpy())
    # The last row is the page's own top-k.
    page = mlm.top_k_guesses(analysis, tokenizer, 7)[mask_number - 1]
    assert tuple(ours.token_ids[-1]) == page.token_ids and ours.tokens[-1] == page.tokens
    np.testing.assert_allclose(ours.probabilities[-1], page.probabilities, rtol=1e-5)
    assert ours.tracked_ids[:7] == page.token_ids and ours.tracked_ids[-1] == paris
    # The tracked lines follow the same tokens through every layer: their probability at each hidden state.
    np.testing.assert_allclose(
        ours.tracked_probabilities, probabilities[:, list(ours.tracked_ids)].numpy(), rtol=1e-4, atol=1e-8
    )
    assert ours.tracked_tokens == tuple(tokenizer.convert_ids_to_tokens(list(ours.tracked_ids)))
    summary = ours.summary()
    assert summary["after"].tolist()[-1] == f"after encoder layer {tiny_bundle.capabilities.num_layers - 1}"
    assert summary["rank of paris"].tolist() == ours.true_ranks.tolist()


def test_guesses_at_every_layer_need_an_mlm_head(bundled):
    with pytest.raises(ValueError):
        layer_guesses(bundled, analyze(bundled, "The capital of France is [MASK]."), 5)
