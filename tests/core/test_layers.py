"""One numbering of the layers: the labels say what the model's own outputs are."""

import re

import torch

from bertlens.layers import after_layer_label, encoder_layer_label, hidden_state_label


def test_labels_by_hand():
    assert hidden_state_label(0) == "hidden state 0 (embeddings output)"
    assert hidden_state_label(4) == "hidden state 4 (after encoder layer 3)"
    assert after_layer_label(0) == "embeddings output" and after_layer_label(4) == "after encoder layer 3"
    assert encoder_layer_label(3) == "encoder layer 3 (reads hidden state 3, writes hidden state 4)"
    assert encoder_layer_label(0) == "encoder layer 0 (reads hidden state 0, writes hidden state 1)"


def test_the_numbering_is_the_models(tiny_bundle):
    """Encoder layer L reads hidden state L and writes hidden state L + 1, as ``output_hidden_states`` orders them."""
    model = tiny_bundle.model.bert
    inputs = tiny_bundle.tokenizer("The river bank was muddy.", return_tensors="pt")
    seen: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    hooks = [
        layer.register_forward_hook(
            lambda module, args, out, i=i: seen.__setitem__(i, (args[0], out[0] if isinstance(out, tuple) else out))
        )
        for i, layer in enumerate(model.encoder.layer)
    ]
    try:
        with torch.no_grad():
            hidden = model(**inputs, output_hidden_states=True).hidden_states
    finally:
        for hook in hooks:
            hook.remove()
    with torch.no_grad():
        embeddings = model.embeddings(input_ids=inputs["input_ids"], token_type_ids=inputs["token_type_ids"])
    torch.testing.assert_close(hidden[0], embeddings)  # hidden state 0: the embeddings output
    assert sorted(seen) == list(range(len(hidden) - 1))
    for layer, (read, written) in seen.items():
        label = encoder_layer_label(layer)
        named, h_in, h_out = map(
            int,
            re.fullmatch(
                r"encoder layer (\d+) \(reads hidden state (\d+), writes hidden state (\d+)\)", label
            ).groups(),
        )
        assert named == layer
        torch.testing.assert_close(read, hidden[h_in], msg=label)
        torch.testing.assert_close(written, hidden[h_out], msg=label)
        assert hidden_state_label(h_out).endswith(f"(after encoder layer {layer})")
