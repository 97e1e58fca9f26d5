"""Two sentences side by side: tokens aligned (difflib), where attention moved, where the guesses moved.

Each sentence is its own cached forward pass; nothing here runs the model.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from bertlens.analysis import Analysis, tokens_of
from bertlens.mlm import softmax

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

Status = Literal["same", "changed", "only in first", "only in second"]

# The seed's pair (seed 000): one word changed, and "it" refers to something else.
SEED_FIRST = "The animal didn't cross the street because it was too tired."
SEED_SECOND = "The animal didn't cross the street because it was too wide."


def default_second(first: str) -> str:
    """Compare's second sentence until the student types one: the first with seed 000's one change (tired → wide),
    so a lesson's "couldn't … tired" is compared with "couldn't … wide"; the seed's pair when it has no "tired"."""
    changed = re.sub(r"\btired\b", "wide", first, count=1)
    return changed if changed != first else SEED_SECOND


@dataclass(frozen=True)
class Aligned:
    first: int | None  # token position in the first sentence
    second: int | None  # token position in the second
    status: Status


def align_tokens(first: tuple[str, ...], second: tuple[str, ...]) -> list[Aligned]:
    """Token positions paired across the two tokenizations (difflib on the token sequences).

    Equal runs pair as "same"; a replaced run of equal length pairs token by token as "changed";
    anything else (insertions, deletions, runs of different length) stays unpaired.
    """
    rows: list[Aligned] = []
    matcher = difflib.SequenceMatcher(None, list(first), list(second), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            status: Status = "same" if tag == "equal" else "changed"
            rows += [Aligned(a, b, status) for a, b in zip(range(a0, a1), range(b0, b1))]
        else:
            rows += [Aligned(a, None, "only in first") for a in range(a0, a1)]
            rows += [Aligned(None, b, "only in second") for b in range(b0, b1)]
    return rows


def paired(alignment: list[Aligned]) -> list[Aligned]:
    return [row for row in alignment if row.first is not None and row.second is not None]


def paired_rows(alignment: list[Aligned]) -> tuple[list[int], list[int]]:
    """The positions of the paired tokens: in the first sentence, and in the second (same order)."""
    pairs = [(row.first, row.second) for row in alignment if row.first is not None and row.second is not None]
    return [a for a, _ in pairs], [b for _, b in pairs]


def alignment_table(alignment: list[Aligned], first: tuple[str, ...], second: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "position (first)": pd.array([r.first for r in alignment], dtype="Int64"),
            "token (first)": [first[r.first] if r.first is not None else "" for r in alignment],
            "position (second)": pd.array([r.second for r in alignment], dtype="Int64"),
            "token (second)": [second[r.second] if r.second is not None else "" for r in alignment],
            "status": [r.status for r in alignment],
        }
    )


def pair_label(row: Aligned, first: tuple[str, ...], second: tuple[str, ...]) -> str:
    """ "3 it" for a shared token, "12 tired→wide" for a changed one (positions of the first sentence)."""
    assert row.first is not None and row.second is not None, "a paired row"
    a, b = first[row.first], second[row.second]
    return f"{row.first} {a}" if a == b else f"{row.first} {a}→{b}"


def attention_difference(first: np.ndarray, second: np.ndarray, alignment: list[Aligned]) -> np.ndarray:
    """second − first, for one (query, key) matrix each, over the paired tokens only: (pairs, pairs)."""
    rows_a, rows_b = paired_rows(alignment)
    difference: np.ndarray = second[np.ix_(rows_b, rows_b)] - first[np.ix_(rows_a, rows_a)]
    return difference


def unaligned_note(alignment: list[Aligned], first: tuple[str, ...], second: tuple[str, ...]) -> str | None:
    """A sentence naming the tokens that could not be paired, or None when all are paired."""
    only_first = [f"{r.first} {first[r.first]}" for r in alignment if r.second is None and r.first is not None]
    only_second = [f"{r.second} {second[r.second]}" for r in alignment if r.first is None and r.second is not None]
    if not only_first and not only_second:
        return None
    parts = []
    if only_first:
        parts.append("only in the first sentence: " + ", ".join(only_first))
    if only_second:
        parts.append("only in the second: " + ", ".join(only_second))
    return (
        "Some tokens have no partner (the tokenizations differ in length there), so the difference leaves them out — "
        + "; ".join(parts)
        + "."
    )


def partner_mask(first: Analysis, second: Analysis, mask_number: int) -> int | None:
    """The second sentence's mask (its number, from 1) in the place of the first's mask ``mask_number``: the token
    ``align_tokens`` pairs with it, when that is a [MASK] too; None when there is none ("The capital of France is
    [MASK]." beside "[MASK] capital of Germany is [MASK]." pairs mask 1 of the first with mask 2 of the second)."""
    position = first.mask_positions[mask_number - 1]
    for row in align_tokens(first.encoding.tokens, second.encoding.tokens):
        if row.first == position:
            return second.mask_positions.index(row.second) + 1 if row.second in second.mask_positions else None
    return None


def guess_difference(
    first: Analysis,
    second: Analysis,
    mask_number: int,
    tokenizer: PreTrainedTokenizerBase,
    k: int,
    second_mask_number: int | None = None,
) -> pd.DataFrame:
    """Where the guesses at one [MASK] moved: every token in either sentence's top-k, with both probabilities; the
    first sentence's mask ``mask_number`` beside the second's ``second_mask_number`` (by default the same number).

    Rows are sorted by |change|, the largest move first; ranks are among the whole vocabulary.
    """
    if first.mlm_logits is None or second.mlm_logits is None:
        raise ValueError("both sentences need MLM logits")
    p_first = softmax(first.mlm_logits[mask_number - 1])
    p_second = softmax(second.mlm_logits[(second_mask_number or mask_number) - 1])
    k = max(1, min(k, len(p_first)))

    def top(p: np.ndarray) -> np.ndarray:
        return np.argsort(-p, kind="stable")[:k]

    ids: list[int] = list(dict.fromkeys([*top(p_first).tolist(), *top(p_second).tolist()]))

    def rank(p: np.ndarray, i: int) -> int:
        return 1 + int((p > p[i]).sum())

    table = pd.DataFrame(
        {
            "token": tokens_of(tokenizer, ids),
            "token_id": ids,
            "P (first)": p_first[ids],
            "P (second)": p_second[ids],
            "change (second − first)": p_second[ids] - p_first[ids],
            "rank (first)": [rank(p_first, i) for i in ids],
            "rank (second)": [rank(p_second, i) for i in ids],
        }
    )
    order = np.argsort(-np.abs(table["change (second − first)"].to_numpy()), kind="stable")
    return table.iloc[order].reset_index(drop=True)
