"""Masked language modelling: BERT's guesses at each [MASK], from the one forward pass.

All masks of a sentence are predicted independently, in one pass: each mask gets its own softmax
over the vocabulary, computed from the sentence with every mask still hidden; no guess sees another
mask's guess, and the guesses of two masks are not a joint prediction of the pair.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import regex

from bertlens.analysis import Analysis, Encoding, ids_of, no_token, text_of, tokens_of
from bertlens.family import scheme_of
from bertlens.wording import plural

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

BERT_MASK = "[MASK]"  # the default of the functions below; pass a model's own, ``description.mask_token``
FAMILY_MASKS = (BERT_MASK, "<mask>")  # the mask tokens of BERT's family, as written (RoBERTa's family: <mask>)


def with_mask_token(text: str, mask_token: str) -> str:
    """``text`` with every other family member's mask token written as ``mask_token`` (a lesson's or a link's
    "[MASK]" read by RoBERTa as its "<mask>")."""
    for other in FAMILY_MASKS:
        if other != mask_token:
            text = text.replace(other, mask_token)
    return text


MANY_MASKS = 5  # above this, most of the context is hidden: say so (all masks are still predicted)
MAX_K = 50
DEFAULT_K = 10  # the fill-mask page's top-k

# A word: letters and digits with their marks (accents, Hindi's vowel signs) and joiners, with inner apostrophes
# or hyphens ("didn't", "well-known"); a Chinese character is a word of its own, as BERT's tokenizer splits them.
_LETTER = r"(?:(?!\p{Han})[\p{L}\p{N}\p{M}\u200c\u200d])"
_WORD = regex.compile(rf"\p{{Han}}|{_LETTER}+(?:['’\-]{_LETTER}+)*")


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities over the last axis, computed stably in float64."""
    shifted = np.asarray(logits, dtype=np.float64) - np.max(logits, axis=-1, keepdims=True)
    exp = np.exp(shifted)
    probabilities: np.ndarray = exp / exp.sum(axis=-1, keepdims=True)
    return probabilities


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.asarray(logits, dtype=np.float64) - np.max(logits, axis=-1, keepdims=True)
    log_probabilities: np.ndarray = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return log_probabilities


@dataclass(frozen=True)
class MaskGuesses:
    """The top-k guesses at one [MASK]."""

    mask_number: int  # 1 = the first [MASK] in the sentence
    position: int  # its token position (0 = [CLS])
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]  # vocabulary form, e.g. "##s"
    strings: tuple[str, ...]  # decoded, as transformers' fill-mask pipeline shows them
    probabilities: tuple[float, ...]
    logits: tuple[float, ...]  # the MLM head's raw scores; softmax over the whole vocabulary gives the probabilities

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "rank": range(1, len(self.tokens) + 1),
                "token": self.tokens,
                "logit": self.logits,
                "probability": self.probabilities,
                LOSS_IF_RIGHT: -np.log(self.probabilities),  # seed 003's "loss if correct" column
                "token_id": self.token_ids,
                "decoded": self.strings,
            }
        )


LOSS_IF_RIGHT = "loss if right (−log p)"  # the MLM loss at this mask, were this guess the true word


def top_k_guesses(analysis: Analysis, tokenizer: PreTrainedTokenizerBase, k: int) -> list[MaskGuesses]:
    """Top-``k`` tokens and softmax probabilities at every [MASK] (empty without masks or MLM head)."""
    if analysis.mlm_logits is None:
        return []
    k = max(1, min(k, analysis.mlm_logits.shape[-1]))
    probabilities = softmax(analysis.mlm_logits)
    guesses = []
    for number, (position, logits, probs) in enumerate(
        zip(analysis.mask_positions, analysis.mlm_logits, probabilities), start=1
    ):
        top = np.argpartition(-probs, k - 1)[:k]  # O(vocab), then sort only the k best
        ids = [int(i) for i in top[np.argsort(-probs[top], kind="stable")]]
        tokens = tokens_of(tokenizer, ids)
        guesses.append(
            MaskGuesses(
                mask_number=number,
                position=position,
                token_ids=tuple(ids),
                tokens=tuple(tokens),
                # an id past the vocabulary decodes to "" in the pipeline; here it keeps its name
                strings=tuple(t if t == no_token(i) else text_of(tokenizer, [i]) for i, t in zip(ids, tokens)),
                probabilities=tuple(float(probs[i]) for i in ids),
                logits=tuple(float(logits[i]) for i in ids),
            )
        )
    return guesses


@dataclass(frozen=True)
class TrueWordCheck:
    """How likely BERT found the original word at one mask."""

    word: str
    pieces: tuple[str, ...]  # the word's tokens (WordPiece for BERT); only the first is scored
    token: str
    token_id: int
    probability: float
    rank: int  # 1 = BERT's top guess
    loss: float  # cross-entropy −log p: the MLM loss at this mask (pre-training minimised it plus the NSP loss)
    mask_token: str = BERT_MASK  # the model's own (``description.mask_token``), for the note
    tokenizer_kind: str = "WordPiece"

    @property
    def note(self) -> str | None:
        if len(self.pieces) > 1:
            return (
                f"The word is {len(self.pieces)} {self.tokenizer_kind} tokens ({' '.join(self.pieces)}); one "
                f"{self.mask_token} hides "
                f"one token, so only the first piece, {self.pieces[0]}, is scored."
            )
        return None


IGNORED = -100  # the label PyTorch's cross-entropy skips (its ignore_index)


def loss_labels(encoding: Encoding, position: int, token_id: int) -> pd.DataFrame:
    """Pre-training's labels for one mask (seed 003): the true token's id at the mask's ``position``, -100 at every
    other position, so the loss, an average over the labelled positions, is −log p of that token alone."""
    return pd.DataFrame(
        {
            "position": range(len(encoding)),
            "token": encoding.tokens,
            "input_id": encoding.input_ids,
            "label": [token_id if i == position else IGNORED for i in range(len(encoding))],
        }
    )


def true_word_problem(tokenizer: PreTrainedTokenizerBase, word: str) -> str | None:
    """Why ``word`` cannot be scored, or None."""
    if not word.strip():
        return "Type the word that the mask hides."
    pieces = tokenizer.tokenize(word.strip())
    if not pieces:
        return "That word has no tokens in this vocabulary."
    if pieces[0] == tokenizer.unk_token:
        return "That word is unknown to this vocabulary ([UNK]): BERT cannot predict it."
    return None


def check_true_word(
    analysis: Analysis, tokenizer: PreTrainedTokenizerBase, word: str, mask_number: int = 1
) -> TrueWordCheck:
    """Probability, rank and loss −log p of ``word`` (its first token: a WordPiece for BERT) at one mask.

    Byte-level BPE (RoBERTa, ModernBERT) spells a word after a space with ``Ġ``, as the model predicts it at a mask
    that follows a space: the word is read so."""
    if analysis.mlm_logits is None or not 1 <= mask_number <= len(analysis.mask_positions):
        raise ValueError("no such mask with MLM logits")
    scheme = scheme_of(tokenizer)
    after_space = " " if scheme.kind == "byte-level BPE" else ""
    pieces = tuple(tokenizer.tokenize(after_space + word.strip()))
    token_id = ids_of(tokenizer, pieces[:1])[0]
    log_probs = log_softmax(analysis.mlm_logits[mask_number - 1])
    return TrueWordCheck(
        word=word.strip(),
        pieces=pieces,
        token=pieces[0],
        token_id=token_id,
        probability=math.exp(log_probs[token_id]),
        rank=1 + int(np.sum(log_probs > log_probs[token_id])),
        loss=-float(log_probs[token_id]),
        mask_token=str(tokenizer.mask_token),
        tokenizer_kind=scheme.kind,
    )


def true_words(typed: str, masks: int, at_mask: int) -> tuple[dict[int, str], str | None]:
    """The true word of each mask (from 1) as typed in the one field: a single word is the true word of mask
    ``at_mask``; several, separated by commas, are one per mask in order ("quick, jumps, lazy"; a blank entry
    skips a mask). Returns the words and a message when the count does not fit the masks."""
    parts = [part.strip() for part in typed.split(",")]
    if len(parts) == 1:
        return ({at_mask: parts[0]} if parts[0] else {}), None
    if len(parts) != masks:
        return {}, (
            f"{plural(len(parts), 'word')} for {plural(masks, 'mask')}: type one word per mask, separated by commas "
            "(leave an entry blank to skip its mask), or a single word for the mask chosen under At mask."
        )
    return {number: word for number, word in enumerate(parts, start=1) if word}, None


def mask_overview(
    guesses: Sequence[MaskGuesses], words: Mapping[int, str], checks: Mapping[int, TrueWordCheck | str]
) -> pd.DataFrame:
    """One row per mask: BERT's top guess and its probability; where a true word was given (``words``, checked
    in ``checks``: the check, or why the word cannot be scored), its probability and rank and whether the
    top guess is it (seed 003's exercise 4)."""
    rows = []
    for g in guesses:
        row: dict[str, object] = {
            "mask": g.mask_number,
            "token position": g.position,
            "top guess": g.tokens[0],
            "P(top guess)": g.probabilities[0],
        }
        if words:
            check = checks.get(g.mask_number)
            scored = check if isinstance(check, TrueWordCheck) else None
            row |= {
                "true word": _scored_as(words.get(g.mask_number, ""), scored),
                "P(true word)": scored.probability if scored else None,
                "rank of the true word": scored.rank if scored else None,
                "top guess is the true word": ("yes ✓" if scored.rank == 1 else "no") if scored else (check or ""),
            }
        rows.append(row)
    overview = pd.DataFrame(rows)
    if words:  # whole ranks, blank where no word was scored
        overview["rank of the true word"] = overview["rank of the true word"].astype("Int64")
    return overview


def _scored_as(word: str, check: TrueWordCheck | None) -> str:
    """The true word as typed, and the piece scored when one [MASK] cannot hide all of it."""
    return f"{word} (scored: {check.token})" if check is not None and len(check.pieces) > 1 else word


def average_top_confidence(guesses: Sequence[MaskGuesses]) -> float:
    """The mean probability of the top guess over the masks."""
    return float(np.mean([g.probabilities[0] for g in guesses]))


@dataclass(frozen=True)
class WordSpan:
    word: str
    start: int
    end: int
    occurrence: int  # 1 = the first time this word (case-insensitive) appears

    @property
    def label(self) -> str:
        return self.word if self.occurrence == 1 else f"{self.word} (occurrence {self.occurrence})"


def word_spans(text: str, mask_token: str = BERT_MASK) -> list[WordSpan]:
    """The words of ``text`` that could be masked (the mask tokens themselves excluded)."""
    hidden = [(m.start(), m.end()) for m in re.finditer(re.escape(mask_token), text)]
    seen: dict[str, int] = {}
    spans = []
    for match in _WORD.finditer(text):
        if any(s <= match.start() < e for s, e in hidden):
            continue
        key = match.group().casefold()
        seen[key] = seen.get(key, 0) + 1
        spans.append(WordSpan(match.group(), match.start(), match.end(), seen[key]))
    return spans


def mask_spans(
    text: str, spans: Sequence[WordSpan], known: Mapping[int, str] | None = None, mask_token: str = BERT_MASK
) -> tuple[str, str]:
    """``text`` with every span masked, and the true-word field that goes with it: one entry per mask of the
    result, in order (just the word when the result has one mask). A mask that was there before keeps its true word
    from ``known`` (by its number in ``text``, from 1: ``true_words``), blank when none was typed."""
    known = known or {}
    pieces: list[str] = []
    hidden: list[str] = []
    masks_before = 0

    def kept(count: int) -> list[str]:
        """The true words of the next ``count`` masks already in ``text``."""
        nonlocal masks_before
        masks_before += count
        return [known.get(number, "") for number in range(masks_before - count + 1, masks_before + 1)]

    end = 0
    for span in sorted(spans, key=lambda s: s.start):
        before = text[end : span.start]
        pieces += [before, mask_token]
        hidden += kept(before.count(mask_token)) + [span.word]
        end = span.end
    hidden += kept(text[end:].count(mask_token))
    return "".join(pieces) + text[end:], ", ".join(hidden) if len(hidden) > 1 else "".join(hidden)


def mask_notices(text: str, analysis: Analysis, mask_token: str = BERT_MASK) -> list[str]:
    """What the reader should know about the masks before reading the guesses."""
    in_text, analysed = text.count(mask_token), len(analysis.mask_positions)
    notes = []
    if in_text > analysed:
        notes.append(
            f"{in_text - analysed} of {in_text} {mask_token} tokens lie beyond the {len(analysis.encoding)}-token cut: "
            "the model never sees them, so they get no guesses."
        )
    if analysed > MANY_MASKS:
        notes.append(
            f"{analysed} masks: with this much of the sentence hidden, each guess has little context. "
            "Each mask is still predicted independently, in one pass (its own softmax); no guess sees another mask's guess."
        )
    if analysed and analysed == len(analysis.encoding) - 2 and len(analysis.encoding) > 2:
        notes.append("There is nothing but masks: with no context, BERT's guesses show only its prior.")
    return notes


def missing_mask_message(
    text: str, typed: str | None = None, mask_token: str = BERT_MASK, other_way: str = ", or mask a word below"
) -> str | None:
    """A message when ``text`` (what the page reads) has no mask; None when it has one. ``typed``: the text as
    typed, of which the page reads only the start when it is over the characters budget; ``other_way``: how
    else the page can put one in ("" when it has none)."""
    if mask_token in text:
        return None
    if typed is not None and mask_token in typed:
        return (
            f"Your {mask_token} lies beyond the first {len(text):,} characters, which is all the page reads of this "
            f"text (see the warning above): move it nearer the start, or shorten the text."
        )
    hint = ""
    if mask_token.casefold() in text.casefold():
        hint = f" It must be written exactly {mask_token}, in capitals."
    return f"A {mask_token} is needed: put {mask_token} where BERT should guess a word{other_way}.{hint}"


def replaced_tokens(analysis: Analysis) -> pd.DataFrame:
    """ELECTRA's replaced-token detection on one input: each token, the discriminator's logit and P(replaced), its
    sigmoid. ValueError without an RTD head."""
    if analysis.rtd_logits is None:
        raise ValueError("This model has no replaced-token detection head.")
    logits = analysis.rtd_logits.astype(np.float64)
    return pd.DataFrame(
        {
            "position": range(len(logits)),
            "token": list(analysis.encoding.tokens),
            "logit": logits,
            "P(replaced)": 1.0 / (1.0 + np.exp(-logits)),
        }
    )
