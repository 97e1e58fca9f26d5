"""What the tokenizer does to text: tokens and words, the vocabulary, padding and the attention mask.

Pieces are read with the tokenizer's own marker (``family.TokenizerScheme``): WordPiece's ``##`` marks a piece
that continues a word; byte-level BPE's ``Ġ`` and SentencePiece's ``▁`` mark a piece that starts one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import torch

from bertlens.analysis import Encoding, model_engine, normalizer_of, text_of, through_marks, tokens_of
from bertlens.budgets import MAX_TEXT_CHARS
from bertlens.family import TokenizerScheme, encoder_pass, scheme_of
from bertlens.models import AnyBundle, is_cased
from bertlens.wording import blank

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

SPECIAL_ROLES = {
    "cls": "starts every input; its final vector summarises the input (pooler, NSP)",
    "sep": "ends each sentence",
    "pad": "fills short inputs up to the batch length (masked out)",
    "unk": "stands for anything the vocabulary cannot spell",
    "mask": "the hidden word the MLM head guesses",
}
UNUSED = re.compile(r"^\[unused(\d+)\]$")
PaddingStrategy = Literal["longest", "max_length", "none"]
STRATEGIES: tuple[PaddingStrategy, ...] = ("longest", "max_length", "none")
# Seed 003, exercise 2.
SEED_BATCH = (
    "Great!",
    "This is a medium length sentence about machine learning.",
    "Short one.",
    "This is the longest sentence in our batch and it talks about natural language processing and transformers.",
)


MAX_LOOKUP_CHARS = 200  # the Vocabulary lookup box takes at most this many characters
WORDPIECE = TokenizerScheme("WordPiece", "##", False)  # BERT's


def is_continuation_entry(entry: str, scheme: TokenizerScheme = WORDPIECE) -> bool:
    """Whether a vocabulary entry is a piece that continues a word: ``##s``; under ``Ġ`` or ``▁``, an entry
    without the marker (it never follows a space)."""
    marker = scheme.marker
    if marker is None:
        return False
    if scheme.marker_starts_word:
        return not entry.startswith(marker)
    return entry.startswith(marker) and len(entry) > len(marker)


def longest_spelled_word(tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The longest word WordPiece tries to spell (its ``max_input_chars_per_word``: 100 for BERT); a longer word
    becomes [UNK] whatever its letters. None when the tokenizer does not say."""
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    return getattr(model, "max_input_chars_per_word", None)


# --- The token table -------------------------------------------------------------------------


def continuation_column(scheme: TokenizerScheme = WORDPIECE) -> str:
    """The token table's continuation column, named by the scheme's marker: "continuation (##)" (``##`` continues a
    word), "continuation (no Ġ)" / "continuation (no ▁)" (the marker starts one)."""
    marker = scheme.marker or "##"
    return f"continuation (no {marker})" if scheme.marker_starts_word else f"continuation ({marker})"


def scheme_name(scheme: TokenizerScheme = WORDPIECE) -> str:
    """What the page calls the tokenizer's cutting step: "WordPiece", "byte-level BPE", "SentencePiece"."""
    return "SentencePiece" if scheme.kind.startswith("SentencePiece") else scheme.kind


def pieces_rule(scheme: TokenizerScheme = WORDPIECE) -> str:
    """One sentence on how the scheme marks its pieces, with its own marker."""
    marker = scheme.marker
    match scheme.kind:
        case "WordPiece":
            return f"WordPiece cuts a word it cannot spell whole into pieces: {marker} marks a piece that continues a word."
        case "byte-level BPE":
            return (
                "Byte-level BPE reads the text as bytes and merges frequent neighbours into pieces; a space belongs to "
                f"the piece after it, written {marker}: {marker} marks a piece that starts a word, and a piece without "
                "it continues one (or starts the text)."
            )
        case "SentencePiece Unigram" | "SentencePiece BPE":
            how = "the likeliest pieces of its vocabulary (Unigram)" if scheme.kind.endswith("Unigram") else "pieces"
            return (
                f"SentencePiece writes each space as {marker} and cuts the text into {how}: {marker} marks a piece "
                "that starts a word, and a piece without it continues one."
            )
    return "This tokenizer marks its pieces in a way BERT Lens does not read: the continuation column is a guess."


def token_table(
    encoding: Encoding, text: str, text_b: str | None = None, scheme: TokenizerScheme = WORDPIECE
) -> pd.DataFrame:
    """One row per token: position, token, id, its word, continuation piece, special, segment, mask.

    A continuation is a ``##`` piece under WordPiece; under ``Ġ`` or ``▁`` (a marker of word starts, which a text's
    first word or a punctuation mark may lack) a piece of the same word as the token before it. The column is named
    by the marker (``continuation_column``)."""
    sentences = (text[:MAX_TEXT_CHARS], (text_b or "")[:MAX_TEXT_CHARS])
    spans: dict[tuple[int | None, int | None], tuple[int, int]] = {}  # (sentence, word) -> character span
    for seq, word, (start, end) in zip(encoding.sequence_ids, encoding.word_ids, encoding.offsets):
        if word is not None:
            lo, hi = spans.get((seq, word), (start, end))
            spans[(seq, word)] = (min(lo, start), max(hi, end))
    pieces_per_word = pd.Series(list(zip(encoding.sequence_ids, encoding.word_ids))).value_counts()
    rows: list[dict[str, object]] = []
    for position, (token, token_id, seq, word, type_id) in enumerate(
        zip(encoding.tokens, encoding.input_ids, encoding.sequence_ids, encoding.word_ids, encoding.token_type_ids)
    ):
        special = word is None
        start, end = spans.get((seq, word), (0, 0))
        rows.append(
            {
                "position": position,
                "token": token,
                "id": int(token_id),
                "word": "" if special or seq is None else sentences[seq][start : through_marks(sentences[seq], end)],
                "word index": None if special else word,
                "sentence": "—" if seq is None else "AB"[seq],
                continuation_column(scheme): (
                    not special
                    and position > 0
                    and (encoding.sequence_ids[position - 1], encoding.word_ids[position - 1]) == (seq, word)
                    if scheme.marker_starts_word
                    else token.startswith(scheme.marker or "##")
                ),
                "split word": not special and pieces_per_word[(seq, word)] > 1,
                "special": special,
                "token_type_ids": int(type_id),
                "attention_mask": 1,  # one unpadded input: every token is real
            }
        )
    table = pd.DataFrame(rows)
    table["word index"] = table["word index"].astype("Int64")
    return table


def unknown_words(table: pd.DataFrame, unk_token: str) -> pd.Series:
    """The words of ``table`` (``token_table``) that became ``unk_token``: not an "[UNK]" typed as such, which is
    the special token itself."""
    return table.loc[(table["token"] == unk_token) & (table["word"] != unk_token), "word"]


def typed_special_tokens(table: pd.DataFrame, special_tokens: Collection[str]) -> list[str]:
    """The special tokens typed in the text of ``table`` (``token_table``), each once, in order: the tokenizer reads
    "[SEP]" typed as the token itself, with the id of the one it adds. Not a word that became [UNK] (an emoji): its
    text is not the token's."""
    typed = ~table["special"] & table["token"].isin(list(special_tokens)) & (table["word"] == table["token"])
    return list(dict.fromkeys(table.loc[typed, "token"]))


def lacking_characters(tokenizer: PreTrainedTokenizerBase, words: Sequence[str]) -> list[str]:
    """The characters of ``words`` (as typed, each once, in order) that the vocabulary has neither as an entry nor as
    a ## continuation, as the tokenizer reads them (an uncased one lowercases and strips accents first): any one of
    them makes its whole word [UNK]. (With ``Ġ`` or ``▁`` the character may also start a word: ``▁c``.)"""
    vocabulary, read, scheme = tokenizer.get_vocab(), normalizer_of(tokenizer), scheme_of(tokenizer)
    marker = scheme.marker or "##"
    return [
        character
        for character in dict.fromkeys("".join(words))
        if any(c not in vocabulary and f"{marker}{c}" not in vocabulary for c in read(character) if not c.isspace())
    ]


def split_words(table: pd.DataFrame) -> pd.DataFrame:
    """The words WordPiece cut into several pieces, with their pieces."""
    words = table[table["split word"]].groupby(["sentence", "word index"], sort=False)
    return pd.DataFrame(
        [
            {"sentence": seq, "word": group["word"].iloc[0], "pieces": " ".join(group["token"]), "count": len(group)}
            for (seq, _), group in words
        ],
        columns=["sentence", "word", "pieces", "count"],
    )


def spaced_words(encoding: Encoding, text: str, text_b: str | None = None) -> int:
    """Words as a reader counts them: runs of text between spaces ("didn't" and "30,522," are one word each).

    Counted over the tokens the model reads (a truncated input counts only its analysed part).
    """
    sentences = (text[:MAX_TEXT_CHARS], (text_b or "")[:MAX_TEXT_CHARS])
    words, previous = 0, None  # previous: (sentence, end offset) of the last real token
    for seq, word, (start, end) in zip(encoding.sequence_ids, encoding.word_ids, encoding.offsets):
        if word is None or seq is None:  # a special token
            continue
        if previous is None or previous[0] != seq or any(c.isspace() for c in sentences[seq][previous[1] : start]):
            words += 1
        previous = (seq, end)
    return words


@dataclass(frozen=True)
class TokenCounts:
    words: int  # separated by spaces, as a reader counts them
    tokens: int  # including the special tokens
    special: int
    split_words: int  # words WordPiece cut into ## pieces (after the pre-tokenizer split off punctuation)
    unknown: int  # [UNK] tokens: characters the vocabulary cannot spell (emoji, rare scripts)

    @property
    def tokens_per_word(self) -> float:
        """Tokens (without the special ones) per word separated by spaces."""
        return (self.tokens - self.special) / self.words if self.words else 0.0


def token_counts(table: pd.DataFrame, unk_token: str, words: int) -> TokenCounts:
    """The table's counts; ``words`` is ``spaced_words`` of the same encoding."""
    return TokenCounts(
        words=words,
        tokens=len(table),
        special=int(table["special"].sum()),
        split_words=len(split_words(table)),
        unknown=len(unknown_words(table, unk_token)),
    )


HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)


@dataclass(frozen=True)
class BeforeWordPiece:
    """What the tokenizer does to this text before WordPiece, with the text's own examples."""

    stripped: tuple[str, str] | None  # the first word that loses a mark, and the word as the tokenizer reads it
    syllable: tuple[str, str] | None  # the first Korean syllable, and the letters it comes apart into
    chinese: bool  # a character the tokenizer makes a word of its own (a space each side of it)


def _marks(text: str) -> list[str]:
    """The marks written over or under a letter (Unicode's non-spacing marks, once each character is split)."""
    return [c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) == "Mn"]


def before_wordpiece(tokenizer: PreTrainedTokenizerBase, text: str) -> BeforeWordPiece:
    """Read from the tokenizer's own normalizer: each distinct character once, and the words with marks until one
    loses a mark (``text`` is within the characters budget)."""
    read = normalizer_of(tokenizer)
    stripped = None
    for word in text.split():
        if (marks := _marks(word)) and _marks(reading := read(word)) != marks:
            stripped = (word, "".join(reading.split()))
            break
    reads = {c: read(c) for c in dict.fromkeys(text)}
    syllable = next((c for c, r in reads.items() if ord(c) in HANGUL_SYLLABLES and r != c), None)
    return BeforeWordPiece(
        stripped=stripped,
        syllable=None if syllable is None else (syllable, reads[syllable]),
        chinese=any(not c.isspace() and r.strip() != r for c, r in reads.items()),
    )


def round_trip(tokenizer: PreTrainedTokenizerBase, encoding: Encoding) -> tuple[str, str]:
    """The ids decoded back to text: with the special tokens the tokenizer added, and without."""
    ids = list(encoding.input_ids)
    return text_of(tokenizer, ids), text_of(tokenizer, ids, skip_special_tokens=True)


# --- The vocabulary --------------------------------------------------------------------------


@dataclass(frozen=True)
class VocabularyFacts:
    size: int
    special: pd.DataFrame  # token, id, role
    unused: tuple[str, ...]  # the [unused…] tokens in number order
    kinds: pd.DataFrame  # kind of entry -> how many
    cased: bool


def vocabulary_facts(tokenizer: PreTrainedTokenizerBase) -> VocabularyFacts:
    vocab: dict[str, int] = tokenizer.get_vocab()
    special = pd.DataFrame(
        [
            {"token": getattr(tokenizer, f"{role}_token"), "id": getattr(tokenizer, f"{role}_token_id"), "role": what}
            for role, what in SPECIAL_ROLES.items()
            if getattr(tokenizer, f"{role}_token", None) is not None
        ]
    )
    unused = sorted((t for t in vocab if UNUSED.match(t)), key=lambda t: int(t[len("[unused") : -1]))
    special_tokens = set(special["token"])
    scheme = scheme_of(tokenizer)
    marker = scheme.marker or "##"
    starts = scheme.marker_starts_word
    continuation = f"continuation piece (no {marker})" if starts else f"continuation piece ({marker}…)"

    def continues(entry: str) -> bool:
        return is_continuation_entry(entry, scheme) and len(entry) > 1 if starts else entry.startswith(marker)

    kinds = pd.Series(
        [
            "special"
            if t in special_tokens
            else "[unused…] (reserved: no text maps to them)"
            if UNUSED.match(t)
            else continuation
            if continues(t)
            else "single character"
            if len(t) == 1
            else "word or word start"
            for t in vocab
        ]
    ).value_counts()
    return VocabularyFacts(
        size=tokenizer.vocab_size,
        special=special,
        unused=tuple(unused),
        kinds=kinds.rename_axis("kind of entry").reset_index(name="entries"),
        cased=is_cased(tokenizer),
    )


EntryKind = Literal["special", "reserved", "continuation", "word"]


@dataclass(frozen=True)
class WordLookup:
    word: str
    normalized: str  # what the tokenizer looks up (lowercased and so on, for uncased models)
    entry: str | None  # the vocabulary entry the word is, if it is one (a special token as typed)
    entry_id: int | None
    kind: EntryKind | None  # what sort of entry: special token, [unused…] slot, ## continuation piece or word
    pieces: tuple[str, ...]  # what tokenizing the word as text gives
    ids: tuple[int, ...]
    parts: tuple[str, ...]  # what the tokenizer splits it into (at spaces and punctuation) before WordPiece

    @property
    def in_vocab(self) -> bool:
        return self.entry is not None

    @property
    def typed_gives_entry(self) -> bool:
        """Does typing the word in a text give this one entry? Not for ##s or [unused5]: WordPiece spells those out."""
        return self.entry is not None and self.pieces == (self.entry,)


def entry_kind(entry: str, special: Collection[str], scheme: TokenizerScheme = WORDPIECE) -> EntryKind:
    if entry in special:
        return "special"
    if UNUSED.match(entry):
        return "reserved"
    return "continuation" if is_continuation_entry(entry, scheme) else "word"


def look_up(tokenizer: PreTrainedTokenizerBase, word: str) -> WordLookup:
    """Is ``word`` one vocabulary entry (its id), and the pieces WordPiece makes of it as text.

    Special tokens match as typed (``[MASK]``; an uncased model does not lowercase them); other words
    after normalisation (lowercasing, accents). A continuation piece such as ``##s`` is an entry of its
    own even though typing it gives ``#`` ``#`` ``s``.
    """
    word = word.strip()[:MAX_LOOKUP_CHARS]
    normalized = normalizer_of(tokenizer)(word)
    vocab = tokenizer.get_vocab()
    special = {str(token) for token in tokenizer.added_tokens_decoder.values()}
    entry = word if word in special else normalized if normalized in vocab else None
    encoded = tokenizer(word, add_special_tokens=False, return_offsets_mapping=True)
    pieces = tuple(encoded.tokens())
    spans: dict[int, tuple[int, int]] = {}  # each part's characters, from its pieces (as the pieces were split)
    for part, (start, end) in zip(encoded.word_ids(), encoded["offset_mapping"]):
        if part is not None:
            spans[part] = (min(spans.get(part, (start, end))[0], start), end)
    return WordLookup(
        word=word,
        normalized=normalized,
        entry=entry,
        entry_id=None if entry is None else int(vocab[entry]),
        kind=None if entry is None else entry_kind(entry, special, scheme_of(tokenizer)),
        pieces=pieces,
        ids=tuple(encoded["input_ids"]),
        parts=tuple(word[start : through_marks(word, end)] for start, end in spans.values()),
    )


def case_variants(tokenizer: PreTrainedTokenizerBase, word: str) -> pd.DataFrame:
    """How the word tokenizes as typed, lowercase, Capitalized and UPPERCASE."""
    variants = dict.fromkeys([word, word.lower(), word.capitalize(), word.upper()])
    rows = []
    for variant in variants:
        found = look_up(tokenizer, variant)
        rows.append({"as typed": variant, "pieces": " ".join(found.pieces), "ids": " ".join(map(str, found.ids))})
    return pd.DataFrame(rows)


# --- Padding lab -----------------------------------------------------------------------------


def batch_lines(text: str) -> list[str]:
    """The lines of ``text`` that show something (``blank``): one sentence per line (the page cuts each to the
    characters budget, and says so)."""
    return [line.strip() for line in text.splitlines() if not blank(line)]


@dataclass(frozen=True)
class PaddedBatch:
    strategy: PaddingStrategy
    sentences: tuple[str, ...]
    input_ids: tuple[tuple[int, ...], ...]  # one row per sentence; rows differ in length without padding
    attention_mask: tuple[tuple[int, ...], ...]
    tokens: tuple[tuple[str, ...], ...]
    full_lengths: tuple[int, ...]  # each sentence's length before truncation

    @property
    def width(self) -> int:
        return max((len(row) for row in self.input_ids), default=0)

    @property
    def lengths(self) -> tuple[int, ...]:
        """Each row's real tokens (its [PAD] left out): a short sentence padded to a long row is still short."""
        return tuple(sum(row) for row in self.attention_mask)

    @property
    def cut(self) -> list[int]:
        """The sentences truncation cut (their rows hold fewer tokens than the sentence has)."""
        return [i for i, (kept, full) in enumerate(zip(self.lengths, self.full_lengths)) if kept < full]

    @property
    def rectangular(self) -> bool:
        return len({len(row) for row in self.input_ids}) <= 1

    @property
    def total(self) -> int:
        return sum(len(row) for row in self.input_ids)

    @property
    def padding(self) -> int:
        return sum(row.count(0) for row in self.attention_mask)

    @property
    def padding_share(self) -> float:
        """Share of padding among all positions of the batch, in percent."""
        return 100 * self.padding / self.total if self.total else 0.0

    def table(self) -> pd.DataFrame:
        """One row per position of every sentence (seed 003's token / id / mask table, for the whole batch)."""
        return pd.DataFrame(
            [
                {"sentence": row, "position": i, "token": token, "input_id": token_id, "attention_mask": mask}
                for row, (tokens, ids, masks) in enumerate(zip(self.tokens, self.input_ids, self.attention_mask))
                for i, (token, token_id, mask) in enumerate(zip(tokens, ids, masks))
            ],
            columns=["sentence", "position", "token", "input_id", "attention_mask"],
        )

    def matrix(self, values: str) -> np.ndarray:
        """``input_ids`` or ``attention_mask`` as a (sentences, width) float array; NaN where a row has ended."""
        rows = getattr(self, values)
        out = np.full((len(rows), self.width), np.nan)
        for i, row in enumerate(rows):
            out[i, : len(row)] = row
        return out


def padded_batches(
    tokenizer: PreTrainedTokenizerBase, sentences: Sequence[str], max_length: int, truncation: bool
) -> dict[PaddingStrategy, PaddedBatch]:
    """The batch under every padding strategy, as ``tokenizer(sentences, padding=..., truncation=...,
    max_length=...)`` gives it. The sentences are tokenized once (and once more untruncated, for their full
    lengths); each strategy then pads those rows with the tokenizer's own ``pad`` (no second tokenization)."""
    sentences = [sentence[:MAX_TEXT_CHARS] for sentence in sentences]  # the page has cut them to its budget already
    full = tokenizer(sentences, truncation=False)["input_ids"] if sentences else []
    rows = (
        tokenizer(sentences, truncation=True, max_length=max_length)["input_ids"] if truncation and sentences else full
    )
    tokens = [tokens_of(tokenizer, row) for row in rows]
    batches = {}
    for strategy in STRATEGIES:
        padding: str | bool = False if strategy == "none" else strategy  # the tokenizer's own names otherwise
        enc = tokenizer.pad({"input_ids": rows}, padding=padding, max_length=max_length) if rows else {}
        ids = [tuple(row) for row in enc.get("input_ids", [])]
        batches[strategy] = PaddedBatch(
            strategy=strategy,
            sentences=tuple(sentences),
            input_ids=tuple(ids),
            attention_mask=tuple(tuple(row) for row in enc.get("attention_mask", [])),
            tokens=tuple(_padded_tokens(t, len(row), tokenizer) for t, row in zip(tokens, ids)),
            full_lengths=tuple(len(row) for row in full),
        )
    return batches


def _padded_tokens(tokens: list[str], width: int, tokenizer: PreTrainedTokenizerBase) -> tuple[str, ...]:
    """A row's tokens after padding to ``width``: [PAD] on the tokenizer's padding side (BERT's: the right)."""
    pads = [str(tokenizer.pad_token)] * (width - len(tokens))
    return tuple([*pads, *tokens] if tokenizer.padding_side == "left" else [*tokens, *pads])


def pad_batch(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[str],
    strategy: PaddingStrategy,
    max_length: int,
    truncation: bool,
) -> PaddedBatch:
    """Encode the sentences as one batch, as ``tokenizer(..., padding=..., truncation=...)`` does."""
    return padded_batches(tokenizer, sentences, max_length, truncation)[strategy]


def strategy_label(strategy: PaddingStrategy, max_length: int) -> str:
    """A strategy as the comparison table names it: "longest", "none", "max_length=64"."""
    return f"max_length={max_length}" if strategy == "max_length" else strategy


def padding_comparison(batches: Mapping[PaddingStrategy, PaddedBatch], max_length: int) -> pd.DataFrame:
    """Each strategy's batch (``padded_batches``) side by side: shape, real and padding tokens, share of padding."""
    rows = []
    for strategy, batch in batches.items():
        shape = f"{len(batch.input_ids)} × {batch.width}" if batch.rectangular else "ragged (no tensor possible)"
        label = strategy_label(strategy, max_length)
        rows.append(
            {
                "strategy": label,
                "shape": shape,
                "positions": batch.total,
                "padding tokens": batch.padding,
                "padding %": round(batch.padding_share, 2),
            }
        )
    return pd.DataFrame(rows)


# --- Why the attention mask matters ----------------------------------------------------------


def mask_effect(bundle: AnyBundle, batch: PaddedBatch) -> pd.DataFrame:
    """L2 distance between each sentence's final [CLS] vector with and without the attention mask.

    Without the mask the padding counts as real tokens, so the padded sentences' vectors change;
    a sentence without padding is computed identically either way (distance 0.0).
    """
    if not batch.input_ids or not batch.rectangular:
        raise ValueError("The mask effect needs a padded (rectangular) batch.")
    device = bundle.device
    input_ids = torch.tensor(batch.input_ids, device=device)
    mask = torch.tensor(batch.attention_mask, device=device)

    def cls_distances() -> np.ndarray:
        with torch.inference_mode():
            with_mask, without = (
                encoder_pass(
                    bundle.model, bundle.description, {"input_ids": input_ids, "attention_mask": attention_mask},
                    attentions=False, hidden_states=False,
                ).last_hidden_state[:, 0]
                for attention_mask in (mask, torch.ones_like(mask))
            )  # fmt: skip
            distances: np.ndarray = (with_mask - without).float().norm(dim=-1).cpu().numpy()
            return distances

    key = ("mask_effect", batch.input_ids, batch.attention_mask)
    distance = model_engine(bundle).run(key, cls_distances, tokens=2 * input_ids.numel())
    return pd.DataFrame(
        {
            "sentence": batch.sentences,
            "real tokens": [sum(row) for row in batch.attention_mask],
            "padding tokens": [row.count(0) for row in batch.attention_mask],
            "[CLS] L2 distance": distance.astype(float),
        }
    )
