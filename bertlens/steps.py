"""How BERT gets there, step by step, from the one cached forward pass (no extra forward pass).

* ``head_steps``: one attention head for one query token — its query and key vectors (the head's slice of
  the Q/K projections of the layer's input), q·k/√d for every key, the attention-mask term, the softmax
  and the weighted sum of the value vectors (the head's slice of the layer's attention output).
* ``layer_guesses``: the MLM head applied to a [MASK]'s hidden state after every encoder layer (a
  "logit lens" for BERT). The head was trained on the last layer only: earlier rows are an approximation.

Layers are numbered from 0 as on the Attention page: encoder layer ``L`` reads ``hidden_states[L]``
(0 = the embeddings output) and writes ``hidden_states[L + 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from bertlens.analysis import Analysis, token_of, tokens_of
from bertlens.family import attention_projections, mlm_logits
from bertlens.layers import after_layer_label
from bertlens.mlm import softmax
from bertlens.models import AnyBundle


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy()


# --- one head, step by step ----------------------------------------------------------------------


@dataclass(frozen=True)
class HeadSteps:
    """The numbers of every stage of one head's attention for one query token."""

    layer: int
    head: int
    query: int  # token position of the query
    head_size: int  # d: hidden_size / heads
    q: np.ndarray  # (d,) the query vector: the head's slice of query(hidden_states[layer])[query]
    keys: np.ndarray  # (tokens, d) the head's slice of key(hidden_states[layer])
    values: np.ndarray  # (tokens, d) the head's slice of value(hidden_states[layer])
    dot: np.ndarray  # (tokens,) q·k
    scaled: np.ndarray  # (tokens,) q·k / √d
    mask_term: np.ndarray  # (tokens,) 0 for a real token (padding would be a huge negative number)
    weights: np.ndarray  # (tokens,) softmax(scaled + mask_term)
    output: np.ndarray  # (d,) Σ weights · values: the head's slice of the attention output
    model_weights: np.ndarray  # (tokens,) the same row as the forward pass returned it (output_attentions)

    @property
    def max_abs_difference(self) -> float:
        """Largest |softmax by hand − the model's attention weight| over the row."""
        return float(np.abs(self.weights - self.model_weights).max())

    def table(self, tokens: tuple[str, ...]) -> pd.DataFrame:
        """One row per key token: the score, the mask term, the weight, and what that key adds to the output."""
        return pd.DataFrame(
            {
                "key position": range(len(tokens)),
                "key token": tokens,
                "q·k": self.dot,
                "q·k / √d": self.scaled,
                "mask term": self.mask_term,
                "softmax weight": self.weights,
                "model's attention weight": self.model_weights,
                "‖weight · v‖": np.linalg.norm(self.weights[:, None] * self.values, axis=1),
            }
        )

    def vectors(self, tokens: tuple[str, ...]) -> pd.DataFrame:
        """Every vector of the view, one row each (CSV): the query, each key and value, the output."""
        rows = [("query", self.query, tokens[self.query], self.q)]
        rows += [("key", i, t, k) for i, (t, k) in enumerate(zip(tokens, self.keys))]
        rows += [("value", i, t, v) for i, (t, v) in enumerate(zip(tokens, self.values))]
        rows.append(("output", self.query, tokens[self.query], self.output))
        return pd.DataFrame(
            [
                {"vector": kind, "position": i, "token": t, **{f"d{j}": float(x) for j, x in enumerate(v)}}
                for kind, i, t, v in rows
            ]
        )


def head_steps(bundle: AnyBundle, analysis: Analysis, layer: int, head: int, query: int) -> HeadSteps:
    """Recompute one row of ``analysis.attentions[layer, head]`` from the layer's weights and its input.

    Any family with separate query, key and value projections (ALBERT: the layer's shared weights);
    ``family.NotInThisFamily``, with the reason, for ModernBERT's fused and rotated ones."""
    self_attention = attention_projections(bundle.model, layer)
    d = self_attention.head_size
    part = slice(head * d, (head + 1) * d)
    hidden = torch.tensor(analysis.hidden_states[layer], device=bundle.device)  # a copy: the cache is read-only
    with torch.inference_mode():
        q = self_attention.query(hidden[query])[part]
        keys = self_attention.key(hidden)[:, part]
        values = self_attention.value(hidden)[:, part]
        dot = keys @ q
        scaled = dot / math.sqrt(d)
        # The eager attention adds the dtype's minimum (−∞-like) for a padding key and 0 for a real one;
        # one unpadded input has only real tokens.
        mask_term = torch.zeros_like(scaled)
        weights = torch.softmax(scaled + mask_term, dim=-1)
        output = weights @ values
    return HeadSteps(
        layer=layer,
        head=head,
        query=query,
        head_size=d,
        q=_numpy(q),
        keys=_numpy(keys),
        values=_numpy(values),
        dot=_numpy(dot),
        scaled=_numpy(scaled),
        mask_term=_numpy(mask_term),
        weights=_numpy(weights),
        output=_numpy(output),
        model_weights=np.asarray(analysis.attentions[layer, head, query]),
    )


# --- guesses at every layer ----------------------------------------------------------------------


@dataclass(frozen=True)
class LayerGuesses:
    """The MLM head's guesses at one [MASK] from every hidden state (row 0 = the embeddings output)."""

    mask_number: int
    position: int
    token_ids: np.ndarray  # (rows, k) top-k ids per row, best first
    tokens: tuple[tuple[str, ...], ...]
    probabilities: np.ndarray  # (rows, k)
    true_token: str | None  # the true word's first WordPiece, if given
    true_ranks: np.ndarray | None  # (rows,) its rank (1 = top guess) in each row
    true_probabilities: np.ndarray | None  # (rows,)
    true_token_id: int | None
    tracked_ids: tuple[int, ...]  # the last row's top-k (and the true token): followed through every row
    tracked_tokens: tuple[str, ...]
    tracked_probabilities: np.ndarray  # (rows, tracked)

    @property
    def labels(self) -> list[str]:
        return [after_layer_label(row) for row in range(len(self.tokens))]

    def summary(self) -> pd.DataFrame:
        """One row per hidden state: the top guess, its probability, and the true word's rank and probability."""
        table = pd.DataFrame(
            {
                "hidden state": range(len(self.tokens)),
                "after": self.labels,
                "top guess": [row[0] for row in self.tokens],
                "P(top guess)": self.probabilities[:, 0],
                "top guesses": [" · ".join(row) for row in self.tokens],
            }
        )
        if self.true_ranks is not None:
            table[f"rank of {self.true_token}"] = self.true_ranks
            table[f"P({self.true_token})"] = self.true_probabilities
        return table

    def long_table(self) -> pd.DataFrame:
        """Every top-k guess of every row: hidden state, after, rank, token, token_id, probability."""
        rows, k = self.token_ids.shape
        return pd.DataFrame(
            {
                "hidden state": np.repeat(np.arange(rows), k),
                "after": np.repeat(self.labels, k),
                "rank": np.tile(np.arange(1, k + 1), rows),
                "token": [t for row in self.tokens for t in row],
                "token_id": self.token_ids.ravel(),
                "probability": self.probabilities.ravel(),
            }
        )


def layer_guesses(
    bundle: AnyBundle, analysis: Analysis, k: int, mask_number: int = 1, true_token_id: int | None = None
) -> LayerGuesses:
    """The MLM head (``family.mlm_logits``) on the mask's hidden state after every layer: one batched head call.

    Needs the MLM head and a [MASK] (ValueError otherwise). The last row is the page's own top-k.
    """
    if not bundle.description.has("MLM") or not 1 <= mask_number <= len(analysis.mask_positions):
        raise ValueError("layer guesses need an MLM head and that [MASK]")
    position = analysis.mask_positions[mask_number - 1]
    states = torch.tensor(analysis.hidden_states[:, position], device=bundle.device)
    with torch.inference_mode():
        logits = _numpy(mlm_logits(bundle.model, states))
    probabilities = softmax(logits)
    k = max(1, min(k, probabilities.shape[-1]))
    top = np.argpartition(-probabilities, k - 1, axis=-1)[:, :k]
    order = np.argsort(-np.take_along_axis(probabilities, top, axis=-1), axis=-1, kind="stable")
    ids = np.take_along_axis(top, order, axis=-1)
    true_ranks = true_probabilities = None
    true_token = None
    if true_token_id is not None:
        true_token = token_of(bundle.tokenizer, int(true_token_id))
        true_probabilities = probabilities[:, true_token_id]
        true_ranks = 1 + (probabilities > true_probabilities[:, None]).sum(axis=-1)
    tracked = list(
        dict.fromkeys([*(int(i) for i in ids[-1]), *([int(true_token_id)] if true_token_id is not None else [])])
    )
    return LayerGuesses(
        mask_number=mask_number,
        position=position,
        token_ids=ids,
        tokens=tuple(tuple(tokens_of(bundle.tokenizer, [int(i) for i in row])) for row in ids),
        probabilities=np.take_along_axis(probabilities, ids, axis=-1),
        true_token=true_token,
        true_ranks=true_ranks,
        true_probabilities=true_probabilities,
        true_token_id=None if true_token_id is None else int(true_token_id),
        tracked_ids=tuple(tracked),
        tracked_tokens=tuple(tokens_of(bundle.tokenizer, tracked)),
        tracked_probabilities=probabilities[:, tracked],
    )
