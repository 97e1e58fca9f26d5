"""Attention, read from the one forward pass: the matrix of a head (or a layer's mean, or the
rollout), head statistics for every head, "find the head", token focus, thumbnails and presets.

Every function takes plain numpy (``attentions`` is (layers, heads, query, key), rows summing to 1)
and an ``Encoding``; nothing here runs the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from bertlens.analysis import Encoding
from bertlens.compare import SEED_FIRST

View = Literal["raw", "rollout"]
VIEWS: dict[str, str] = {"raw": "Raw attention", "rollout": "Rollout"}


# --- labels and segments -------------------------------------------------------------------------


def token_labels(encoding: Encoding) -> tuple[str, ...]:
    """Unique axis labels "position token" (the same token may occur twice)."""
    return tuple(f"{i} {token}" for i, token in enumerate(encoding.tokens))


def sentence_b_start(encoding: Encoding) -> int | None:
    """Position of the first token of sentence B, or None for a single sentence."""
    return next((i for i, segment in enumerate(encoding.token_type_ids) if segment == 1), None)


# --- the matrix on screen ------------------------------------------------------------------------


def rollout(attentions: np.ndarray) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020), after every layer: (layers, query, key).

    Per layer: average the heads, add the identity (the residual connection), renormalise the
    rows; then multiply through the layers: R_l = Â_l · R_(l-1), R_(-1) = I.
    """
    n = attentions.shape[-1]
    identity = np.eye(n)
    joint = identity
    out = np.empty(attentions.shape[:1] + (n, n), dtype=np.float32)
    for layer, heads in enumerate(attentions):
        mixed = heads.mean(axis=0, dtype=np.float64) + identity
        mixed /= mixed.sum(axis=-1, keepdims=True)
        joint = mixed @ joint
        out[layer] = joint
    return out


def layer_stack(attentions: np.ndarray, head: int | None, view: View = "raw") -> np.ndarray:
    """The matrix shown for each layer: (layers, query, key).

    ``raw``: head ``head`` of every layer, or the mean of each layer's heads when ``head`` is None.
    ``rollout``: the rollout up to and including each layer (always over all heads).
    """
    if view == "rollout":
        return rollout(attentions)
    shown: np.ndarray = attentions.mean(axis=1) if head is None else attentions[:, head]
    return shown


# --- head statistics -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Statistic:
    key: str
    label: str
    explanation: str


STATISTICS: tuple[Statistic, ...] = (
    Statistic("entropy", "Entropy (bits)", "how spread out a row is: 0 = all on one token"),
    Statistic("cls", "To [CLS]", "mean attention to [CLS]"),
    Statistic("sep", "To [SEP]", "mean attention to the [SEP] tokens"),
    Statistic("previous", "To previous token", "mean attention to the token just before"),
    Statistic("next", "To next token", "mean attention to the token just after"),
    Statistic("same_token", "To same token elsewhere", "mean attention to the identical token at other positions"),
    Statistic(
        "other_sentence",
        "To same token in other sentence",
        "mean attention to the identical token in the other sentence of a pair",
    ),
)
STATISTIC_BY_KEY = {s.key: s for s in STATISTICS}


def _mean_over_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Mean over the query positions ``rows`` of (layers, heads, query) values; NaN when none."""
    if not rows.any():
        return np.full(values.shape[:2], np.nan)
    means: np.ndarray = values[..., rows].mean(axis=-1, dtype=np.float64)
    return means


def _row_entropy_bits(attentions: np.ndarray) -> np.ndarray:
    """Entropy of every row, (layers, heads, query), one layer at a time in one reused buffer
    (a 150 MB temporary at 512 tokens would cost more than the arithmetic)."""
    entropy = np.empty(attentions.shape[:3], dtype=np.float64)
    log_p = np.empty(attentions.shape[1:], dtype=attentions.dtype)
    for layer, heads in enumerate(attentions):
        np.log(np.maximum(heads, 1e-12, out=log_p), out=log_p)  # natural log: the vectorised one
        entropy[layer] = -np.einsum("hqk,hqk->hq", heads, log_p)
    bits: np.ndarray = entropy / np.log(2)
    return bits


def head_statistics(
    attentions: np.ndarray, encoding: Encoding, cls_token: str = "[CLS]", sep_token: str = "[SEP]"
) -> dict[str, np.ndarray]:
    """Every statistic in ``STATISTICS`` for every head: ``{key: (layers, heads)}``; "To [CLS]" and "To [SEP]"
    read the model's own tokens (``description.cls_token``, ``sep_token``: ``<s>`` and ``</s>`` for RoBERTa).

    Averages run over the queries of the text itself ([CLS] and [SEP] rows are left out), and only
    over the queries the statistic applies to (a token with a next token, a token that recurs...).
    NaN means no query qualifies (e.g. no pair for "other sentence").
    """
    n = attentions.shape[-1]
    tokens = np.array(encoding.tokens)
    ids = np.array(encoding.input_ids)
    segment = np.array([-1 if s is None else s for s in encoding.sequence_ids])
    text_rows = segment >= 0
    positions = np.arange(n)

    dtype = attentions.dtype
    row_entropy = _row_entropy_bits(attentions)
    to_cls = attentions @ (tokens == cls_token).astype(dtype)
    to_sep = attentions @ (tokens == sep_token).astype(dtype)
    # diagonal(offset=±1) pairs query i with key i∓1 / i±1.
    previous = np.pad(np.diagonal(attentions, offset=-1, axis1=2, axis2=3), ((0, 0), (0, 0), (1, 0)))
    following = np.pad(np.diagonal(attentions, offset=1, axis1=2, axis2=3), ((0, 0), (0, 0), (0, 1)))

    same = (ids[:, None] == ids[None, :]) & text_rows[None, :] & (positions[:, None] != positions[None, :])
    other = same & (segment[:, None] != segment[None, :])
    to_same = np.einsum("lhqk,qk->lhq", attentions, same.astype(dtype))
    to_other = np.einsum("lhqk,qk->lhq", attentions, other.astype(dtype))

    return {
        "entropy": _mean_over_rows(row_entropy, text_rows),
        "cls": _mean_over_rows(to_cls, text_rows),
        "sep": _mean_over_rows(to_sep, text_rows),
        "previous": _mean_over_rows(previous, text_rows & (positions > 0)),
        "next": _mean_over_rows(following, text_rows & (positions < n - 1)),
        "same_token": _mean_over_rows(to_same, text_rows & same.any(axis=1)),
        "other_sentence": _mean_over_rows(to_other, text_rows & other.any(axis=1)),
    }


def statistics_table(stats: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per (layer, head), one column per statistic."""
    layers, heads = next(iter(stats.values())).shape
    layer, head = np.divmod(np.arange(layers * heads), heads)
    columns = {STATISTIC_BY_KEY[key].label: values.ravel() for key, values in stats.items()}
    return pd.DataFrame({"layer": layer, "head": head, **columns})


@dataclass(frozen=True)
class Pattern:
    name: str
    statistic: str  # key into STATISTICS; the strongest head maximises it
    # What the course notebooks (seed 002, and seed 000 for [SEP]) and the literature report for bert-base-uncased,
    # shown as a button's help after "For comparison, ": so named as students know them, never by seed number.
    seed_note: str


PRETRAINING_NOTEBOOK = "the BERT pre-training notebook"  # seed 002, as its lesson (curriculum.PATTERNS) names it
PATTERNS: tuple[Pattern, ...] = (
    Pattern("Next word", "next", f"{PRETRAINING_NOTEBOOK} finds it in encoder layer 2, head 0 of bert-base-uncased"),
    Pattern(
        "Previous word", "previous", f"{PRETRAINING_NOTEBOOK} finds it in encoder layer 6, head 11 of bert-base-uncased"
    ),
    Pattern(
        "[SEP] sink",
        "sep",
        "the Discover BERT notebook sees later layers often focus on [SEP]; Clark et al. (2019) find it most in "
        "bert-base's encoder layers 5 to 9 (their 6 to 10: they count from 1)",
    ),
    Pattern(
        "Same word", "same_token", f"{PRETRAINING_NOTEBOOK} finds it in encoder layer 2, head 6 of bert-base-uncased"
    ),
    Pattern(
        "Same word in the other sentence",
        "other_sentence",
        f"{PRETRAINING_NOTEBOOK} finds it in encoder layer 10, head 10 of bert-base-uncased",
    ),
)


def find_head(stats: dict[str, np.ndarray], statistic: str) -> tuple[int, int] | None:
    """(layer, head) with the largest value of ``statistic``; None when it is undefined (all NaN)."""
    values = stats[statistic]
    if np.isnan(values).all():
        return None
    layer, head = np.unravel_index(np.nanargmax(values), values.shape)
    return int(layer), int(head)


# --- token focus ---------------------------------------------------------------------------------


def focus_across_layers(stack: np.ndarray, token: int, targets: list[int] | tuple[int, ...]) -> np.ndarray:
    """Attention of ``token`` to each target, layer by layer: (layers, targets)."""
    return stack[:, token][:, list(targets)]


def find_token(encoding: Encoding, word: str, last: bool = False) -> int | None:
    """Position of the first (or last) token spelled ``word`` (case-insensitive), if any."""
    hits = [i for i, token in enumerate(encoding.tokens) if token.lower() == word.lower()]
    return (hits[-1] if last else hits[0]) if hits else None


def strongest_targets(row: np.ndarray, token: int, encoding: Encoding, count: int = 2) -> list[int]:
    """The ``count`` text tokens (not special, not ``token`` itself) ``row`` attends to most."""
    candidates = [i for i, s in enumerate(encoding.sequence_ids) if s is not None and i != token]
    return sorted(sorted(candidates, key=lambda i: -row[i])[:count])


# --- thumbnails ----------------------------------------------------------------------------------


def _bin_starts(n: int, size: int) -> np.ndarray:
    return np.unique(np.linspace(0, n, min(n, size) + 1).astype(int))[:-1]


def downsample(matrices: np.ndarray, size: int) -> np.ndarray:
    """Shrink the last two axes (query, key) to at most ``size`` × ``size`` by contiguous blocks.

    Rows are averaged within a block and columns summed, so every row still sums to 1.
    """
    n = matrices.shape[-1]
    starts = _bin_starts(n, size)
    counts = np.diff(np.append(starts, n))
    columns = np.add.reduceat(matrices, starts, axis=-1)  # the contiguous axis first: 512 tokens stay fast
    return (np.add.reduceat(columns, starts, axis=-2) / counts[:, None]).astype(np.float32)


def thumbnail_size(n: int, layers: int, heads: int, max_size: int = 48, budget: int = 160_000) -> int:
    """Thumbnail side: ≤ ``max_size``, ≤ n, and all thumbnails together ≤ ``budget`` cells."""
    return max(1, min(n, max_size, int((budget / (layers * heads)) ** 0.5)))


def mosaic(attentions: np.ndarray, size: int, gap: int = 1) -> np.ndarray:
    """All heads as one image: a layers × heads grid of downsampled matrices with NaN gaps."""
    thumbs = downsample(attentions, size)
    layers, heads, side, _ = thumbs.shape
    step = side + gap
    grid = np.full((layers * step - gap, heads * step - gap), np.nan, dtype=np.float32)
    for layer in range(layers):
        for head in range(heads):
            grid[layer * step : layer * step + side, head * step : head * step + side] = thumbs[layer, head]
    return grid


# --- presets -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Preset:
    name: str
    text: str
    text_b: str = ""
    focus: str = ""  # the token to focus (its last occurrence)
    targets: tuple[str, ...] = ()  # tokens whose attention from ``focus`` is followed (first occurrences)
    # The encoder layer seed 000 points to, in bert-base-uncased (opened when the model has it).
    layer: int | None = None
    questions: str = ""  # what seed 000 asks about it
    also: tuple[str, ...] = ()  # other wordings of ``text`` in the seeds and lessons (the same tokens to follow)


# The sentence seed 000 gives to explore on your own (a preset here, a lesson step too).
CALCULATORS = "modern electronic calculators contain a keyboard with buttons for digit and arithmetical operations."
# Seed 000's section on "it" writes "couldn't" (its first cell "didn't"): the lessons' sentences, the presets' other wording.
ANIMAL_TIRED = "The animal couldn't cross the street because it was too tired."
ANIMAL_WIDE = "The animal couldn't cross the street because it was too wide."

PRESETS: tuple[Preset, ...] = (
    Preset("Cat on the mat", "The cat sat on the mat", focus="sat", targets=("cat", "mat")),
    Preset(
        "Store pair",
        "I went to the store.",
        "At the store, I bought fresh strawberries.",
        focus="store",
        targets=("store", "[SEP]"),
    ),
    Preset(
        "… it was too tired",
        SEED_FIRST,
        focus="it",
        targets=("animal", "street"),
        also=(ANIMAL_TIRED,),
    ),
    Preset(
        "… it was too wide",
        "The animal didn't cross the street because it was too wide.",
        focus="it",
        targets=("animal", "street"),
        also=(ANIMAL_WIDE,),
        layer=9,
        questions="With “too wide”, does “it” now attend to street more than to animal?",
    ),
    Preset(
        "France [MASK]",
        "The capital of France is [MASK].",
        focus="[MASK]",
        targets=("capital", "france"),
        layer=10,
        questions="Which words does [MASK] attend to, and does France stand out?",
    ),
    Preset(
        "Calculators",
        CALCULATORS,
        focus="digit",
        targets=("arithmetic", "keyboard", "electronic"),
        questions=(
            "Does “digit” attend to arithmetical, keyboard or electronic in early layers? Do higher layers "
            "concentrate on [SEP] or spread evenly? Which layer seems to highlight meaningful connections?"
        ),
    ),
)


def matching_preset(text: str, text_b: str = "") -> Preset | None:
    """The preset whose sentences these are (in any of its wordings), if any."""
    return next((p for p in PRESETS if text in (p.text, *p.also) and text_b == p.text_b), None)


def preset_hint(preset: Preset, num_layers: int) -> str:
    """Seed 000's questions about a preset sentence, and the layer it points to (in bert-base-uncased's 12)."""
    if preset.layer is None:
        return preset.questions
    where = (
        f"The Discover BERT notebook's hint: look at encoder layer {preset.layer} (in bert-base-uncased)."
        if preset.layer < num_layers
        else f"The Discover BERT notebook's hint is encoder layer {preset.layer} of bert-base-uncased's 12; this model "
        f"has {num_layers}."
    )
    return f"{preset.questions} {where}"


def preset_focus(preset: Preset, encoding: Encoding) -> tuple[int | None, list[int]]:
    """The preset's focus token and target positions in ``encoding`` (missing ones are skipped)."""
    focus = find_token(encoding, preset.focus, last=True) if preset.focus else None
    targets = [t for t in (find_token(encoding, word) for word in preset.targets) if t is not None and t != focus]
    return focus, targets
