"""Two models side by side: the same sentence through BERT and one of its successors (issue 51, item 3).

``side_of`` reads one model's side from what the app already computes for it: the one forward pass of the sentence
(written with the model's own mask token), its tokens and its MLM head's top guesses at the first mask, the parameter
counts of ``bertlens.anatomy`` summed by part, and the pre-training heads its checkpoint has, with why it lacks the
others (``ModelDescription.missing``). ``default_partner`` picks the model set beside the active one. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from bertlens.analysis import Analysis
from bertlens.family import HEAD_NAMES, Family, Head, MissingPart, TokenizerScheme, pair_head
from bertlens.mlm import MaskGuesses, top_k_guesses, with_mask_token
from bertlens.models import HUB_MODELS, ModelBundle

GUESSES = 5  # the top guesses shown for the mask, per model
# Beside a BERT, its successors in this order (the one most courses meet next first); beside a successor, BERT.
SUCCESSORS = (
    "roberta-base",
    "distilbert-base-uncased",
    "albert-base-v2",
    "answerdotai/ModernBERT-base",
    "google/electra-base-discriminator",
    "xlm-roberta-base",
    "camembert-base",
)


def default_partner(active: str, family: Family, offered: Sequence[str]) -> str | None:
    """The model set beside ``active`` when none is chosen: a successor beside a BERT (``roberta-base`` first),
    BERT (``bert-base-uncased`` first) beside a successor, else the first other model offered; None when the server
    offers no other."""
    others = [name for name in offered if name != active]
    preferred = SUCCESSORS if family == "bert" else HUB_MODELS
    return next((name for name in preferred if name in others), others[0] if others else None)


@dataclass(frozen=True)
class Side:
    """One model's reading of the sentence, and what it is made of."""

    name: str  # the model actually loaded
    family_name: str
    scheme: TokenizerScheme
    text: str  # the sentence as this model reads it: its own mask token
    tokens: tuple[str, ...]  # as its tokenizer gives them, special tokens included (truncated to the token budget)
    parts: tuple[tuple[str, int], ...]  # parameters per part (embeddings, encoder, pooler, each head), in order
    total: int  # the checkpoint's parameters: the parts add up to it
    mask_token: str
    masks: int  # the masks it reads in the sentence
    guesses: tuple[tuple[str, float], ...] | None  # top guesses at the first mask with probabilities; None: no MLM head
    heads: tuple[Head, ...]  # pre-training heads whose weights the checkpoint has
    pair_head: Head | None  # the sentence-pair task it can predict (NSP or SOP), None when none
    missing: tuple[MissingPart, ...]  # the pre-training heads it lacks, each with why

    @property
    def first_guess(self) -> str | None:
        return self.guesses[0][0] if self.guesses else None


def in_own_mask(text: str, bundle: ModelBundle) -> str:
    """``text`` with its masks as ``bundle``'s own mask token ("[MASK]" as RoBERTa's "<mask>")."""
    return with_mask_token(text, bundle.description.mask_token)


def parts_of(counts: pd.DataFrame) -> tuple[tuple[str, int], ...]:
    """``bertlens.anatomy.parameter_counts``' rows that add up to the total, summed by part in the table's order."""
    leaves = counts[counts["adds up to total"]]
    return tuple((str(part), int(n)) for part, n in leaves.groupby("part", sort=False)["parameters"].sum().items())


def _ranked(guesses: MaskGuesses | None) -> tuple[tuple[str, float], ...]:
    """The guesses at one mask as (word, probability), words without the spaces decoding leaves (RoBERTa's "Ġ")."""
    if guesses is None:
        return ()
    return tuple((string.strip(), float(p)) for string, p in zip(guesses.strings, guesses.probabilities))


def side_of(bundle: ModelBundle, text: str, analysis: Analysis, counts: pd.DataFrame) -> Side:
    """``bundle``'s side: ``analysis`` is its forward pass of ``text`` (the sentence written ``in_own_mask``),
    ``counts`` its ``bertlens.anatomy.bundle_parameter_counts``."""
    described = bundle.description
    has_mlm = bundle.capabilities.has_mlm_head
    guesses = top_k_guesses(analysis, bundle.tokenizer, GUESSES) if has_mlm else []
    first = guesses[0] if guesses else None
    return Side(
        name=bundle.name,
        family_name=described.family_name,
        scheme=described.tokenizer,
        text=text,
        tokens=tuple(analysis.encoding.tokens),
        parts=parts_of(counts),
        total=int(counts["parameters"].iloc[-1]),
        mask_token=described.mask_token,
        masks=len(analysis.mask_positions),
        guesses=None if not has_mlm else _ranked(first),
        heads=described.heads,
        pair_head=pair_head(described),
        missing=tuple(m for m in described.missing if m.part in HEAD_NAMES),
    )
