"""How BERT was taught to fill masks: the pre-training corruption and its loss on one sentence.

BERT's pre-training data (Google's ``create_pretraining_data.py``, Devlin et al. 2019 §3.1) chooses 15 % of a
sequence's length in tokens (rounded, at least one; [CLS] and [SEP] count but are never chosen) and corrupts
each chosen token: 80 % of the
time it becomes [MASK], 10 % a random token of the vocabulary, 10 % it stays as it is. The model must give back
the original token at every chosen position — the kept and random ones too, so it cannot learn that only
[MASK] needs predicting — and the masked-language-model loss is the mean −log p of those originals, over the
chosen positions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import torch

from bertlens.analysis import Encoding, model_engine, tokens_of
from bertlens.family import encoder_pass, mlm_logits
from bertlens.mlm import log_softmax
from bertlens.models import AnyBundle

CHOSEN_SHARE = 0.15
MASK_SHARE, RANDOM_SHARE = 0.8, 0.1  # the rest (10 %) is kept as it is
Action = Literal["[MASK]", "random token", "kept"]


@dataclass(frozen=True)
class Corruption:
    """One draw of the pre-training corruption of an encoded input."""

    positions: tuple[int, ...]  # the chosen token positions, in order
    actions: tuple[Action, ...]  # what happened to each
    input_ids: tuple[int, ...]  # the sequence BERT is given
    candidates: int  # how many tokens could have been chosen (the text's own tokens)


def corrupt(
    encoding: Encoding, mask_id: int, vocab_size: int, draw: int, special_ids: frozenset[int] = frozenset()
) -> Corruption:
    """Draw number ``draw`` (a seed: the same draw always gives the same corruption) of ``encoding``; random
    tokens are ids below ``vocab_size`` (the tokenizer's own vocabulary)."""
    rng = np.random.default_rng(draw)
    candidates = [  # the text's own tokens: not [CLS] or [SEP], nor a [MASK] (or [SEP], [PAD]…) the student typed
        i for i, (sentence, token) in enumerate(zip(encoding.sequence_ids, encoding.input_ids))
        if sentence is not None and token != mask_id and token not in special_ids
    ]  # fmt: skip
    if not candidates:
        return Corruption((), (), encoding.input_ids, 0)
    # as create_pretraining_data.py counts: 15 % of the whole sequence, [CLS] and [SEP] included (its further
    # cap, max_predictions_per_seq, is about 15 % of the longest sequence, so it changes nothing here)
    count = min(len(candidates), max(1, round(CHOSEN_SHARE * len(encoding))))
    positions = sorted(int(p) for p in rng.choice(candidates, size=count, replace=False))
    ids = list(encoding.input_ids)
    actions: list[Action] = []
    for position in positions:
        roll = rng.random()
        action: Action = (
            "[MASK]" if roll < MASK_SHARE else "random token" if roll < MASK_SHARE + RANDOM_SHARE else "kept"
        )
        if action == "[MASK]":
            ids[position] = mask_id
        elif action == "random token":
            ids[position] = int(rng.integers(vocab_size))  # any vocabulary entry, as the original does
        actions.append(action)
    return Corruption(tuple(positions), tuple(actions), tuple(ids), len(candidates))


@dataclass(frozen=True)
class PretrainingStep:
    """BERT's guesses at the chosen positions of one corrupted input, and the loss pre-training computes."""

    encoding: Encoding  # the input as tokenized (truncated to the cap)
    corruption: Corruption
    seen: tuple[str, ...]  # the corrupted sequence's tokens
    table: pd.DataFrame  # one row per chosen position

    @property
    def loss(self) -> float:
        """The masked-language-model loss of this draw: mean −log p(original token) over the chosen positions."""
        return float(self.table["loss −log p"].mean()) if len(self.table) else float("nan")


def pretraining_step(bundle: AnyBundle, encoding: Encoding, draw: int) -> PretrainingStep:
    """Corrupt ``encoding`` (draw ``draw``) and run the model with its MLM head at the chosen positions.

    One forward pass through the model's engine; needs the MLM head (ValueError otherwise)."""
    if not bundle.description.has("MLM"):
        raise ValueError(f"the pre-training view needs the MLM head. {bundle.description.why_missing('MLM')}")
    tokenizer = bundle.tokenizer
    # random tokens come from the tokenizer's vocabulary, as the original draws them from its vocab file
    # [CLS], [SEP] and [PAD] typed in the text are never chosen (the original skips [CLS] and [SEP]); [UNK] is
    special = frozenset(
        i for i in (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id) if i is not None
    )
    corruption = corrupt(encoding, int(tokenizer.mask_token_id), len(tokenizer), draw, special)
    chosen = list(corruption.positions)
    seen = tuple(tokens_of(tokenizer, list(corruption.input_ids)))
    if not chosen:  # nothing of the text to choose (e.g. only typed masks or special tokens)
        return PretrainingStep(encoding, corruption, seen, pd.DataFrame())

    def guesses() -> np.ndarray:
        batch = {
            "input_ids": torch.tensor([corruption.input_ids], device=bundle.device),
            "token_type_ids": torch.tensor([encoding.token_type_ids], device=bundle.device),
        }
        with torch.inference_mode():
            out = encoder_pass(bundle.model, bundle.description, batch, attentions=False, hidden_states=False)
            logits: np.ndarray = mlm_logits(bundle.model, out.last_hidden_state[0, chosen]).float().cpu().numpy()
            return logits

    key = ("pretraining", corruption.input_ids, encoding.token_type_ids, tuple(chosen))
    log_probs = log_softmax(model_engine(bundle).run(key, guesses, tokens=len(encoding)))
    top_guesses = tokens_of(tokenizer, [int(i) for i in np.argmax(log_probs, axis=-1)])
    rows = []
    for scores, position, action, top in zip(log_probs, chosen, corruption.actions, top_guesses):
        original = encoding.input_ids[position]
        rows.append(
            {
                "position": position,
                "original token": encoding.tokens[position],
                "what happened": action,
                "BERT is given": seen[position],
                "top guess": top,
                "P(original)": float(np.exp(scores[original])),
                "rank of the original": 1 + int(np.sum(scores > scores[original])),
                "loss −log p": -float(scores[original]),
            }
        )
    return PretrainingStep(encoding, corruption, seen, pd.DataFrame(rows))
