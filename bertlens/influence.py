"""Mask and see: hide a token and measure how much the model's output changes.

Attention says where a token looks; this says what the output depends on. The hidden token is
replaced by the model's mask token (or deleted) and the variant runs through the model: one extra pass for one
token. Hiding every token in turn runs all the variants in one batched pass
(``perturbation_pass``), bounded by a token budget. What is measured depends on the heads the
checkpoint has:

* ``guess`` (an MLM head and a [MASK] in the text): the guess distribution at the first [MASK];
  effect = total variation distance ½ Σ |p − p′| (0 = unchanged, 1 = completely different).
* ``verdict`` (an NSP head and a sentence pair): effect = |ΔP(IsNext)|.
* ``order`` (ALBERT's SOP head and a sentence pair): effect = |ΔP(in order)|.
* ``vectors`` (otherwise, e.g. an encoder without heads): effect = the mean cosine distance
  1 − cos(h, h′) of every other token's last hidden state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import torch

from bertlens.analysis import Analysis, Encoding, model_engine, token_of
from bertlens.family import encoder_pass, mlm_logits, sentence_logits
from bertlens.mlm import softmax
from bertlens.models import AnyBundle

if TYPE_CHECKING:
    from transformers.modeling_outputs import BaseModelOutputWithPoolingAndCrossAttentions

Mode = Literal["mask", "delete"]
Measure = Literal["guess", "verdict", "order", "vectors"]
TOKEN_BUDGET = 1024  # token positions per batched pass (variants × their length): about two passes at 512 tokens

EFFECT_LABELS: dict[Measure, str] = {
    "guess": "change of the guesses (total variation)",
    "verdict": "|change of P(IsNext)|",
    "order": "|change of P(in order)|",
    "vectors": "mean cosine distance of the other tokens",
}
AFTER_LABELS: dict[Measure, str] = {
    "guess": "top guess after (p)",
    "verdict": "P(IsNext) after",
    "order": "P(in order) after",
    "vectors": "token that moved most (1 − cos)",
}


def measure_for(bundle: AnyBundle, analysis: Analysis) -> tuple[Measure, int | None]:
    """What to watch, and the position whose output is watched (None: every other token)."""
    described = bundle.description
    if described.has("MLM") and analysis.mlm_logits is not None and analysis.mask_positions:
        return "guess", analysis.mask_positions[0]
    encoding = analysis.encoding
    if 1 in encoding.token_type_ids or 1 in encoding.sequence_ids:  # a pair (a model may have no token types)
        if described.has("NSP") and analysis.nsp_logits is not None:
            return "verdict", 0
        if described.has("SOP") and analysis.sop_logits is not None:
            return "order", 0
    return "vectors", None


def _pair_logits(analysis: Analysis, measure: Measure) -> np.ndarray:
    """The pair head's logits of the unhidden input: NSP's for ``verdict``, SOP's for ``order``."""
    logits = analysis.nsp_logits if measure == "verdict" else analysis.sop_logits
    assert logits is not None  # measure_for watches the pair head only then
    return logits


def testable_positions(encoding: Encoding, observer: int | None, mode: Mode, mask_id: int) -> list[int]:
    """The text tokens (not [CLS]/[SEP], not the watched token; not a [MASK] already, when masking)."""
    return [
        i
        for i, (segment, token_id) in enumerate(zip(encoding.sequence_ids, encoding.input_ids))
        if segment is not None and i != observer and not (mode == "mask" and token_id == mask_id)
    ]


def within_budget(positions: list[int], observer: int | None, length: int, budget: int) -> list[int]:
    """At most ``budget // length`` positions: those nearest the watched token (or the first ones), in order."""
    room = max(1, budget // max(length, 1))
    if len(positions) <= room:
        return positions
    anchor = observer if observer is not None else 0
    return sorted(sorted(positions, key=lambda i: (abs(i - anchor), i))[:room])


def shifted(position: int, removed: int, mode: Mode) -> int:
    """Where ``position`` sits once ``removed`` is deleted (masking moves nothing)."""
    return position - 1 if mode == "delete" and position > removed else position


def variant_batch(encoding: Encoding, tested: list[int], mode: Mode, mask_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, token_type_ids), one row per tested token: that token masked or deleted."""
    ids = torch.tensor(encoding.input_ids).repeat(len(tested), 1)
    types = torch.tensor(encoding.token_type_ids).repeat(len(tested), 1)
    rows = torch.arange(len(tested))
    columns = torch.tensor(tested)
    if mode == "mask":
        ids[rows, columns] = mask_id
        return ids, types
    keep = torch.ones_like(ids, dtype=torch.bool)
    keep[rows, columns] = False
    width = len(encoding) - 1
    return ids[keep].view(len(tested), width), types[keep].view(len(tested), width)


def perturbation_pass(
    bundle: AnyBundle, input_ids: torch.Tensor, token_type_ids: torch.Tensor
) -> BaseModelOutputWithPoolingAndCrossAttentions:
    """The one extra (batched) forward pass: every variant at once, no padding (all rows have one length).
    Queued through the model's engine like every other pass."""
    device = bundle.device

    def variants_pass() -> BaseModelOutputWithPoolingAndCrossAttentions:
        with torch.inference_mode():
            batch = {
                "input_ids": input_ids.to(device),
                "token_type_ids": token_type_ids.to(device),
                "attention_mask": torch.ones_like(input_ids, device=device),
            }
            output: BaseModelOutputWithPoolingAndCrossAttentions = encoder_pass(
                bundle.model, bundle.description, batch, attentions=False, hidden_states=False
            )
            return output

    key = ("perturbation", tuple(input_ids.shape), input_ids.numpy().tobytes(), token_type_ids.numpy().tobytes())
    output: BaseModelOutputWithPoolingAndCrossAttentions = model_engine(bundle).run(
        key, variants_pass, tokens=input_ids.numel()
    )
    return output


@dataclass(frozen=True)
class Influence:
    measure: Measure
    mode: Mode
    observer: int | None  # the watched position (None: every other token)
    tested: tuple[int, ...]  # positions masked or deleted, one variant each
    effect: np.ndarray  # (tested,) see EFFECT_LABELS
    after: tuple[str, ...]  # per variant: the new top guess, the new P(IsNext), or the token that moved most
    candidates: int  # how many tokens could have been tested (more than ``tested`` when over budget)
    before: str = ""  # the watched output before hiding: the top guess (p) or P(IsNext); "" for vectors

    @property
    def effect_label(self) -> str:
        return EFFECT_LABELS[self.measure]


@dataclass(frozen=True)
class Watch:
    """What mask and see watches in this input, and the tokens it can hide there."""

    measure: Measure
    observer: int | None  # the watched position (None: every other token)
    hideable: tuple[int, ...]

    def attention_received(self, matrix: np.ndarray, positions: Sequence[int] | None = None) -> np.ndarray:
        """The attention each of ``positions`` (default: every hideable token) received in ``matrix``
        (query, key): from the watched token or, with none watched, the mean over every other query."""
        keys = list(self.hideable if positions is None else positions)
        if self.observer is not None:
            return np.asarray(matrix[self.observer, keys], dtype=np.float64)
        n = matrix.shape[0]
        return np.array([(matrix[:, j].sum() - matrix[j, j]) / (n - 1) for j in keys], dtype=np.float64)


def watch(bundle: AnyBundle, analysis: Analysis, mode: Mode) -> Watch:
    """What ``mask_and_see`` would watch in this input, and which tokens it can hide (no pass run)."""
    measure, observer = measure_for(bundle, analysis)
    positions = testable_positions(analysis.encoding, observer, mode, bundle.tokenizer.mask_token_id)
    return Watch(measure, observer, tuple(positions))


def mask_and_see(
    bundle: AnyBundle,
    analysis: Analysis,
    mode: Mode = "mask",
    budget: int = TOKEN_BUDGET,
    hide: int | None = None,
) -> Influence:
    """Mask (or delete) the token at ``hide`` (one extra pass) or, with ``hide=None``, each hideable
    token in turn (one batched pass within ``budget``), and measure the change."""
    encoding = analysis.encoding
    mask_id = bundle.tokenizer.mask_token_id
    measure, observer = measure_for(bundle, analysis)
    candidates = testable_positions(encoding, observer, mode, mask_id)
    width = len(encoding) - (mode == "delete")
    if hide is None:
        tested = within_budget(candidates, observer, width, budget)
    else:
        tested = [hide] if hide in candidates else []
        candidates = tested  # nothing left out for the budget: one token asked, one tested
    tokenizer = bundle.tokenizer
    before_label = ""
    if measure == "guess":
        assert analysis.mlm_logits is not None  # measure_for watches a [MASK] only then
        first = softmax(analysis.mlm_logits[0])
        before_label = f"{token_of(tokenizer, int(first.argmax()))} ({first.max():.3g})"
    elif measure in ("verdict", "order"):
        before_label = f"{softmax(_pair_logits(analysis, measure))[0]:.4f}"
    if not tested:
        return Influence(measure, mode, observer, (), np.zeros(0), (), len(candidates), before_label)
    out = perturbation_pass(bundle, *variant_batch(encoding, tested, mode, mask_id))
    hidden = out.last_hidden_state
    assert hidden is not None
    rows = torch.arange(len(tested))
    with torch.inference_mode():
        if measure == "guess":
            assert observer is not None and analysis.mlm_logits is not None  # measure_for watches a [MASK]
            watched = torch.tensor([shifted(observer, j, mode) for j in tested])
            logits = mlm_logits(bundle.model, hidden[rows, watched]).float().cpu().numpy()
            before, after = softmax(analysis.mlm_logits[0]), softmax(logits)
            effect = 0.5 * np.abs(after - before).sum(axis=-1)
            best = after.argmax(axis=-1)
            labels = tuple(f"{token_of(tokenizer, int(i))} ({p[i]:.3g})" for i, p in zip(best, after))
        elif measure in ("verdict", "order"):
            assert out.pooler_output is not None  # a pair head reads the pooler: the checkpoint has one
            logits = sentence_logits(bundle.model, out.pooler_output).float().cpu().numpy()
            before, after = softmax(_pair_logits(analysis, measure))[0], softmax(logits)[:, 0]
            effect = np.abs(after - before)
            labels = tuple(f"{p:.4f}" for p in after)
        else:
            effect, labels = _vector_moves(analysis, hidden.float().cpu().numpy(), tested, mode)
    return Influence(
        measure,
        mode,
        observer,
        tuple(tested),
        np.asarray(effect, dtype=np.float64),
        labels,
        len(candidates),
        before_label,
    )


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cosine: np.ndarray = (a64 * b64).sum(-1) / (np.linalg.norm(a64, axis=-1) * np.linalg.norm(b64, axis=-1))
    return cosine


def _vector_moves(
    analysis: Analysis, states: np.ndarray, tested: list[int], mode: Mode
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Mean 1 − cos of every other token's last hidden state, and the token that moved most."""
    before = np.asarray(analysis.hidden_states[-1])
    tokens = analysis.encoding.tokens
    effects, labels = [], []
    for row, removed in enumerate(tested):
        others = [i for i in range(len(tokens)) if i != removed]
        distance = 1 - _cosine(before[others], states[row, [shifted(i, removed, mode) for i in others]])
        effects.append(float(distance.mean()))
        most = others[int(distance.argmax())]
        labels.append(f"{most} {tokens[most]} ({distance.max():.3g})")
    return np.array(effects), tuple(labels)


def attention_received(matrix: np.ndarray, influence: Influence) -> np.ndarray:
    """The attention each tested token received in ``matrix`` (see ``Watch.attention_received``)."""
    return Watch(influence.measure, influence.observer, influence.tested).attention_received(matrix)


def influence_table(influence: Influence, tokens: tuple[str, ...], received: np.ndarray) -> pd.DataFrame:
    """One row per hidden token. Ranks (1 = the most) only when several tokens were hidden: one token ranked
    among itself is always 1 (the page says where its attention stands among every hideable token)."""
    table = pd.DataFrame(
        {
            "position": influence.tested,
            "token": [tokens[i] for i in influence.tested],
            "attention received": received,
            influence.effect_label: influence.effect,
            AFTER_LABELS[influence.measure]: influence.after,
        }
    )
    if len(influence.tested) > 1:
        table["attention rank"] = pd.Series(received).rank(ascending=False, method="min").astype(int).to_numpy()
        table["influence rank"] = pd.Series(influence.effect).rank(ascending=False, method="min").astype(int).to_numpy()
    return table


def rank_correlation(received: np.ndarray, effect: np.ndarray) -> float | None:
    """Spearman's rank correlation between attention received and influence (None below 3 tokens or if constant)."""
    if len(received) < 3 or np.ptp(received) == 0 or np.ptp(effect) == 0:
        return None
    return float(pd.Series(received).corr(pd.Series(effect), method="spearman"))
