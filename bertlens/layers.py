"""One numbering of BERT's layers, used by every page.

* **Encoder layers** are numbered from 0, as in bertviz and ``model.encoder.layer[L]``.
* **Hidden states** are numbered from 0: hidden state 0 is the embeddings output, hidden state h (h ≥ 1)
  is the output of encoder layer h − 1 (``output_hidden_states``' order).

So encoder layer L reads hidden state L and writes hidden state L + 1; its attention weights are
``output_attentions[L]``. A page that speaks of attention names encoder layers; a page that reads vectors
names hidden states; each label says the other number too.
"""

from __future__ import annotations


def hidden_state_label(h: int) -> str:
    """ "hidden state 0 (embeddings output)", "hidden state 4 (after encoder layer 3)"."""
    return "hidden state 0 (embeddings output)" if h == 0 else f"hidden state {h} (after encoder layer {h - 1})"


def after_layer_label(h: int) -> str:
    """Short form of ``hidden_state_label`` for axes: "embeddings output", "after encoder layer 3"."""
    return "embeddings output" if h == 0 else f"after encoder layer {h - 1}"


def encoder_layer_label(layer: int) -> str:
    """ "encoder layer 3 (reads hidden state 3, writes hidden state 4)"."""
    return f"encoder layer {layer} (reads hidden state {layer}, writes hidden state {layer + 1})"
