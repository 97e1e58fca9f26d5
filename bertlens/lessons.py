"""Lessons: guided steps over the live pages (pure types and checks, no Streamlit; the six lessons
themselves are in ``bertlens.curriculum``).

A ``Lesson`` is a title, the notebook it follows and its ``Step``s in the notebook's order. A step is our own
Markdown text, the page it opens and the URL parameters it sets (names declared in ``components.state.params``),
optionally a "predict before reveal" question (its page waits for the answer, which it would show) and
misconception callouts.

A question's answer is never written down: ``reveal`` computes it from the active model's own deterministic
output (fill-mask top-1, the NSP verdict, attention weights, head statistics, the attention mask's effect,
cosine similarity, silhouette by hidden state, the parameter count), through a ``Live`` that the app backs
with its shared caches (so every student gets the same numbers) and tests back with direct calls. A model
without the head a question needs gets a reveal that says so.

Layer numbering follows ``bertlens.layers``: encoder layers from 0; hidden state h is the output of
encoder layer h − 1. Step parameters may say ``LAST_ENCODER_LAYER`` or ``LAST_HIDDEN_STATE``; they are
resolved for the active model's depth (indices differ between checkpoints).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import cosine_similarity

from bertlens.analysis import Analysis, analyze
from bertlens.anatomy import bundle_parameter_counts
from bertlens.attention import STATISTIC_BY_KEY, find_head, find_token, head_statistics
from bertlens.comparison import Side, in_own_mask, parts_of, side_of
from bertlens.family import HEAD_NAMES, ModelDescription, pair_head
from bertlens.layers import encoder_layer_label, hidden_state_label
from bertlens.mlm import top_k_guesses, with_mask_token
from bertlens.models import ModelBundle, PretrainingHead
from bertlens.nsp import next_sentence
from bertlens.sense_presets import PRESETS
from bertlens.senses import WordVectors, embed_word, layer_options, separation_by_layer
from bertlens.tokenization import mask_effect, pad_batch, padded_batches, padding_comparison, strategy_label
from bertlens.wording import percent

Given = tuple[tuple[str, str], ...]  # what a question is about, as (label, text): shown with it while the page waits

LAST_ENCODER_LAYER = "{last encoder layer}"
LAST_HIDDEN_STATE = "{last hidden state}"
MIDDLE_ENCODER_LAYER = "{middle encoder layer}"
WIDEST_LAST_K = "{mean of the last k hidden states, k as large as offered}"  # last4 on BERT (seed 001's choice)
RANKED_GUESSES = 5  # a live class sees the class's words beside the MLM head's top 5
# Pages that need a pre-training head.
PAGE_HEADS: dict[str, PretrainingHead] = {"fill_mask": "MLM", "next_sentence": "NSP"}


class Live(Protocol):
    """The model's output for a question: the app reads its caches, tests run the model directly."""

    @property
    def bundle(self) -> ModelBundle: ...

    def analysis(self, text: str, text_b: str = "") -> Analysis: ...

    def word_vectors(self, word: str, sentences: tuple[str, ...], references: tuple[str, ...]) -> WordVectors: ...

    def mask_effect(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        """The Padding lab's table: each line's [CLS] distance with and without the attention mask
        (padding to ``max_length``, truncating)."""
        ...

    def parameter_counts(self) -> pd.DataFrame:
        """``bertlens.anatomy.parameter_counts`` of the checkpoint (the Parameters tab's table)."""
        ...

    def padding_comparison(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        """The Padding lab's comparison of the padding strategies (truncating to ``max_length``)."""
        ...

    def partner(self) -> Live | str:
        """The same for the model set beside the active one (a comparison's second model), or why there is none
        here (Markdown: it cannot be loaded, or none is offered)."""
        ...


@dataclass(frozen=True)
class DirectLive:
    """``Live`` without caches: the tests' reference for the app's cached one (``other``: the model beside it)."""

    bundle: ModelBundle
    other: ModelBundle | None = None

    def analysis(self, text: str, text_b: str = "") -> Analysis:
        return analyze(self.bundle, text, text_b or None)

    def word_vectors(self, word: str, sentences: tuple[str, ...], references: tuple[str, ...]) -> WordVectors:
        return embed_word(self.bundle, sentences, word, references=references)

    def mask_effect(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        return mask_effect(self.bundle, pad_batch(self.bundle.tokenizer, lines, "max_length", max_length, True))

    def parameter_counts(self) -> pd.DataFrame:
        return bundle_parameter_counts(self.bundle)

    def padding_comparison(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        return padding_comparison(padded_batches(self.bundle.tokenizer, lines, max_length, True), max_length)

    def partner(self) -> Live | str:
        return NO_PARTNER if self.other is None else DirectLive(self.other)


NO_PARTNER = "no second model is loaded beside it."


def checkpoint_total(counts: pd.DataFrame) -> int:
    """The last row of ``bertlens.anatomy.parameter_counts``: the checkpoint's parameters."""
    return int(counts["parameters"].iloc[-1])


@dataclass(frozen=True)
class Reveal:
    """The model's answer to a question, or why this model cannot give one (``answer`` is None)."""

    answer: str | None
    detail: str  # Markdown, our own words with the model's numbers
    ranking: tuple[tuple[str, float], ...] = ()  # a typed word's question: the model's top guesses, probabilities

    def judge(self, guess: str) -> bool | None:
        """Whether ``guess`` is the model's answer (case and surrounding spaces ignored); None without one."""
        if self.answer is None:
            return None
        return guess.strip().lower() == self.answer.strip().lower()


def needs_head(bundle: ModelBundle, head: PretrainingHead) -> str | None:
    """Why this model cannot answer a question that needs ``head``; None when it can."""
    if bundle.capabilities.predicts(head):
        return None
    described = bundle.description
    if described.family != "bert" and (reason := described.why_missing(head)):
        return f"This needs a model with the {head} head; the active model `{bundle.name}` has none. {reason}"
    return (
        f"This needs a model with the {head} head; the active model `{bundle.name}` has none (it is an encoder only)."
    )


# Where to get the heads (offline: the sidebar's choice falls back to the bundled encoder until it is downloaded).
GET_THE_HEADS = (
    "bert-base-uncased has both: the sidebar's Model menu (offline, after `hf download bert-base-uncased` on a "
    "connected machine)."
)


@dataclass(frozen=True)
class FillMaskTop1:
    """ "What will BERT put in place of [MASK]?" — answered by the MLM head's top-1 guess."""

    text: str
    prompt: str = "What will BERT put in place of [MASK]? Type one word."
    choices: tuple[str, ...] = ()

    @property
    def given(self) -> Given:
        return (("Sentence", self.text),)

    def reveal(self, live: Live) -> Reveal:
        missing = needs_head(live.bundle, "MLM")
        if missing:
            return Reveal(None, f"{missing} {GET_THE_HEADS}")
        text = with_mask_token(self.text, live.bundle.description.mask_token)  # RoBERTa's family: <mask>
        guesses = top_k_guesses(live.analysis(text), live.bundle.tokenizer, RANKED_GUESSES)
        if not guesses:
            return Reveal(None, "The sentence has no [MASK] the model reads.")
        first = guesses[0]
        runners = ", ".join(f"{s.strip()} ({percent(p)})" for s, p in zip(first.strings[1:3], first.probabilities[1:3]))
        return Reveal(
            first.strings[0].strip(),
            f"BERT's top guess is **{first.strings[0].strip()}** with probability {percent(first.probabilities[0])}; "
            f"next come {runners}. The page below lists the top-k with every probability.",
            tuple((string.strip(), float(p)) for string, p in zip(first.strings, first.probabilities)),
        )


@dataclass(frozen=True)
class AttendsMore:
    """ "Does ``query`` attend more to A or to B?" — mean over the heads of the last encoder layer."""

    text: str
    query: str
    choices: tuple[str, ...]  # the two candidate words

    @property
    def given(self) -> Given:
        return (("Sentence", self.text),)

    @property
    def prompt(self) -> str:
        a, b = self.choices
        return (
            f"In the last encoder layer, averaged over its heads: does “{self.query}” attend more to “{a}” or to “{b}”?"
        )

    def reveal(self, live: Live) -> Reveal:
        analysis = live.analysis(self.text)
        query = find_token(analysis.encoding, self.query)
        targets = [find_token(analysis.encoding, word) for word in self.choices]
        if query is None or None in targets:
            return Reveal(None, "This model's tokenizer splits these words differently; the check cannot run.")
        layer = analysis.attentions.shape[0] - 1
        weights = analysis.attentions[layer].mean(axis=0)[query]
        scores = [float(weights[t]) for t in targets if t is not None]
        winner = self.choices[int(np.argmax(scores))]
        numbers = " and ".join(f"“{w}” {s:.3f}" for w, s in zip(self.choices, scores))
        return Reveal(
            winner,
            f"In {encoder_layer_label(layer)}, the mean over its heads of “{self.query}”'s attention weights: "
            f"{numbers}. So it attends more to **{winner}** here; other layers and heads can disagree.",
        )


THIRDS = ("early (first third)", "middle third", "late (last third)")


def third_of(index: int, count: int) -> str:
    """Which third of ``count`` layers (or hidden states) numbered from 0 ``index`` falls in. The last is late
    however few there are (the second of 2 layers fell in the "middle third")."""
    return THIRDS[2] if index == count - 1 else THIRDS[min(2, 3 * index // count)]


@dataclass(frozen=True)
class BestSeparation:
    """ "Which hidden states separate the senses best?" — silhouette of the preset's labels per hidden state."""

    preset: str
    prompt: str = "Which hidden states separate the two senses best?"
    choices: tuple[str, ...] = THIRDS

    @property
    def given(self) -> Given:
        preset = PRESETS[self.preset]
        senses = sorted({item.sense for item in preset.sentences})
        return (("Word", f"{preset.word} ({' / '.join(senses)}, {len(preset.sentences)} sentences)"),)

    def reveal(self, live: Live) -> Reveal:
        preset = PRESETS[self.preset]
        sentences = tuple(item.sentence for item in preset.sentences)
        words = live.word_vectors(preset.word, sentences, preset.references)
        labels = [preset.sentences[o.sentence_index].sense for o in words.occurrences]
        scores = separation_by_layer(words.contextual, labels)
        defined = [(s, h) for h, s in enumerate(scores) if s is not None]
        if not defined:
            return Reveal(None, "Too few labelled occurrences were found to compare the senses.")
        best, h = max(defined)
        num_layers = words.contextual.shape[1] - 1
        first = scores[0]
        start = f"; at the embeddings output it is {first:.3f}" if first is not None else ""
        third = third_of(h, num_layers + 1)
        return Reveal(
            third,
            f"The silhouette (higher = senses further apart) peaks at {hidden_state_label(h)}: {best:.3f}{start}. "
            f"This model has hidden states 0 to {num_layers}, so that is the {third}.",
        )


@dataclass(frozen=True)
class NextSentenceVerdict:
    """ "Does B follow A?" — answered by the NSP head."""

    a: str
    b: str
    prompt: str = "Will BERT say that sentence B follows sentence A?"
    choices: tuple[str, ...] = ("IsNext: B follows A", "NotNext: B does not follow A")

    @property
    def given(self) -> Given:
        return (("Sentence A", self.a), ("Sentence B", self.b))

    def reveal(self, live: Live) -> Reveal:
        missing = needs_head(live.bundle, "NSP")
        if missing:
            return Reveal(None, f"{missing} {GET_THE_HEADS}")
        verdict = next_sentence(live.analysis(self.a, self.b))
        if verdict is None:
            return Reveal(None, "This model gives no next-sentence verdict.")
        return Reveal(
            self.choices[0] if verdict.is_next else self.choices[1],
            f"The NSP head gives IsNext {verdict.p_is_next:.1%} and NotNext {verdict.p_not_next:.1%}. "
            "It was trained on pairs where B followed A half of the time, and on random Bs otherwise.",
        )


@dataclass(frozen=True)
class StrongestHead:
    """ "Where is the head that does X most?" — the head statistics of the page, answered by thirds of the layers."""

    text: str
    text_b: str
    statistic: str  # a share in bertlens.attention.STATISTIC_BY_KEY (any but entropy)
    choices: tuple[str, ...] = THIRDS

    @property
    def given(self) -> Given:
        return (("Sentence A", self.text), ("Sentence B", self.text_b)) if self.text_b else (("Sentence", self.text),)

    @property
    def prompt(self) -> str:
        return f"Which encoder layers hold the head with the highest “{STATISTIC_BY_KEY[self.statistic].label}” score?"

    def reveal(self, live: Live) -> Reveal:
        analysis = live.analysis(self.text, self.text_b)
        stats = head_statistics(analysis.attentions, analysis.encoding)
        if (found := find_head(stats, self.statistic)) is None:
            return Reveal(None, "No token of these sentences has this pattern to measure.")
        layer, head = found
        values = stats[self.statistic]
        third = third_of(layer, values.shape[0])
        statistic = STATISTIC_BY_KEY[self.statistic]
        return Reveal(
            third,
            f"The highest is head {head} of {encoder_layer_label(layer)}: {values[layer, head]:.1%}, its {statistic.explanation}. "
            f"This model has encoder layers 0 to {values.shape[0] - 1}, so that is the {third}. "
            "Open that layer and head in the *Heatmap* tab to see the pattern.",
        )


@dataclass(frozen=True)
class LessPadding:
    """ "Pad to the batch's longest sentence, or to max_length: which spends fewer positions on [PAD]?" — seed 003,
    exercise 2 (its batch: 48.75 % against 83.98 % at max_length 64)."""

    lines: tuple[str, ...]
    max_length: int
    prompt: str = "For training, which padding spends fewer of the batch's positions on [PAD]?"
    given: Given = ()

    @property
    def choices(self) -> tuple[str, ...]:
        return ("padding='longest'", f"padding='max_length' ({self.max_length})")

    def reveal(self, live: Live) -> Reveal:
        table = live.padding_comparison(self.lines, self.max_length).set_index("strategy")
        longest, fixed = table.loc["longest"], table.loc[strategy_label("max_length", self.max_length)]
        return Reveal(
            self.choices[0] if longest["padding %"] <= fixed["padding %"] else self.choices[1],
            f"Padded to its longest sentence the batch is {longest['shape']}, {longest['padding %']:.2f} % of it [PAD]; "
            f"to max_length {self.max_length} it is {fixed['shape']}, {fixed['padding %']:.2f} % [PAD]. The results "
            "are the same (the attention mask hides [PAD]), but every [PAD] position is still computed: padding each "
            "batch to its longest is the usual choice for training; max_length when every batch must have one shape.",
        )


@dataclass(frozen=True)
class MaskMatters:
    """ "Switch the attention mask off: which sentence's [CLS] vector moves most?" — the Padding lab's demo."""

    lines: tuple[str, ...]
    max_length: int
    prompt: str = "Run the padded batch without the attention mask: which sentence's final [CLS] vector changes most?"
    given: Given = ()  # the choices are the batch's sentences

    @property
    def choices(self) -> tuple[str, ...]:
        return self.lines

    def reveal(self, live: Live) -> Reveal:
        table = live.mask_effect(self.lines, self.max_length)
        distances = table["[CLS] L2 distance"].to_numpy()
        most = int(np.argmax(distances))
        padding = table["padding tokens"].to_numpy()
        numbers = "; ".join(f"{d:.3f} with {p} padding tokens" for d, p in zip(distances, padding))
        return Reveal(
            self.lines[most],
            f"L2 distance of each [CLS] vector with and without the mask: {numbers}. Without the mask the "
            "[PAD] tokens count as words, so every padded sentence's vector moves; a sentence with no padding "
            "does not move at all.",
        )


@dataclass(frozen=True)
class CloserInContext:
    """ "In which sentence is *word* closer to *reference*?" — seed 004's comparison: the word's vector in each
    sentence against the reference word read alone, at the last hidden state (the pet's python is closer to "snake"
    than the coder's is, the coder's closer to "programming")."""

    sentences: tuple[str, ...]  # the choices: one occurrence of the word in each
    word: str
    reference: str
    given: Given = ()  # the choices quote the sentences

    @property
    def choices(self) -> tuple[str, ...]:
        return self.sentences

    @property
    def prompt(self) -> str:
        return f"In which sentence is the vector of “{self.word}” closer to “{self.reference}” (read alone)?"

    def reveal(self, live: Live) -> Reveal:
        words = live.word_vectors(self.word, self.sentences, (self.reference,))
        found = [o.sentence_index for o in words.occurrences]
        if found != list(range(len(self.sentences))) or self.reference not in words.references:
            return Reveal(
                None, "This model's tokenizer does not find these words once per sentence; the check cannot run."
            )
        top = words.num_layers
        sims = cosine_similarity(words.contextual[:, top], words.references[self.reference][top][None])[:, 0]
        winner = self.sentences[int(np.argmax(sims))]
        numbers = " and in ".join(f"“{sentence}” {sim:.3f}" for sentence, sim in zip(self.sentences, sims))
        return Reveal(
            winner,
            f"Cosine similarity with “{self.reference}” at the last {hidden_state_label(top)}: in {numbers}. "
            f"So “{self.word}” is closer to it in **“{winner}”**: the same word, moved by its sentence.",
        )


SIZES = ("under 10 million", "10 to 100 million", "100 million to 1 billion", "over 1 billion")


@dataclass(frozen=True)
class ParameterCount:
    """ "How many parameters?" — the checkpoint's own count."""

    prompt: str = "How many parameters (weights and biases) does the active model have?"
    choices: tuple[str, ...] = SIZES
    given: Given = ()

    def reveal(self, live: Live) -> Reveal:
        total = checkpoint_total(live.parameter_counts())
        size = SIZES[sum(total >= bound for bound in (10**7, 10**8, 10**9))]
        return Reveal(
            size,
            f"`{live.bundle.name}` has {total:,} parameters in its checkpoint: {size}. bert-base-uncased has about "
            "110 million; most of them sit in the encoder layers and the word-embedding matrix.",
        )


PARTS = ("the embeddings", "the encoder layers", "the parts on top (pooler, and the MLM and NSP heads if any)")


@dataclass(frozen=True)
class LargestPart:
    """ "Where are most of the parameters?" — the embeddings, the encoder layers or the heads, counted."""

    prompt: str = "Which part of the active model holds the most parameters?"
    choices: tuple[str, ...] = PARTS
    given: Given = ()

    def reveal(self, live: Live) -> Reveal:
        counts = live.parameter_counts()
        leaves = counts[counts["adds up to total"]]
        by_part = leaves.groupby("part")["parameters"].sum()
        shares = {
            PARTS[0]: int(by_part.get("Embeddings", 0)),
            PARTS[1]: int(by_part.get("Encoder", 0)),
            PARTS[2]: int(sum(by_part.get(part, 0) for part in ("Pooler", "MLM head", "NSP head"))),
        }
        total = checkpoint_total(counts)
        winner = max(shares, key=lambda part: shares[part])
        numbers = "; ".join(f"{part} {n:,} ({n / total:.0%})" for part, n in shares.items())
        return Reveal(
            winner,
            f"`{live.bundle.name}`: {numbers}. Most sit in **{winner}**. The word-embedding matrix alone is "
            "vocabulary × hidden size: in a small model such as MiniLM (6 layers of 384) it outweighs all the "
            "layers together, while bert-base's 12 layers of 768 hold about three quarters of its weights.",
        )


# --- comparing two models (the lesson "BERT and its successors") ---------------------------------------

SIDES = ("the active model", "the model beside it", "the same for both")
PAIR_CHOICES = ("only the active model", "only the model beside it", "both", "neither")
SAME_FIRST = ("yes, the same word", "no, different words")


def partner_of(live: Live) -> Live | str:
    """The model beside the active one, or why a comparison question cannot be asked (said as a missing head is:
    "needs a model with the …")."""
    partner = live.partner()
    if isinstance(partner, str):
        return f"This question needs a model with the active one beside it: {partner}"
    return partner


def side(live: Live, text: str) -> Side:
    """``live``'s model's side of the comparison, for ``text`` written with its own mask token."""
    own = in_own_mask(text, live.bundle)
    return side_of(live.bundle, own, live.analysis(own), live.parameter_counts())


def which_side(active: float, beside: float) -> str:
    """The choice of ``SIDES`` with the larger number."""
    return SIDES[2] if active == beside else SIDES[0] if active > beside else SIDES[1]


def named(one: Side) -> str:
    return f"`{one.name}` ({one.family_name})"


def two_sides(live: Live, text: str, mlm: bool = False) -> tuple[Side, Side] | str:
    """Both models' sides of ``text`` (the active one's first), or why they cannot be compared here (``mlm``: both
    need the MLM head)."""
    partner = partner_of(live)
    if isinstance(partner, str):
        return partner
    if mlm and (missing := mlm_beside(live, partner)):
        return missing
    return side(live, text), side(partner, text)


@dataclass(frozen=True)
class AboutASentence:
    """A comparison question about one sentence, shown with it."""

    text: str

    @property
    def given(self) -> Given:
        return (("Sentence", self.text),)


@dataclass(frozen=True)
class MoreTokens(AboutASentence):
    """ "Which model cuts the sentence into more tokens?" — each tokenizer's own tokens, special ones included."""

    prompt: str = "Which model cuts this sentence into more tokens (its special tokens included)?"
    choices: tuple[str, ...] = SIDES

    def reveal(self, live: Live) -> Reveal:
        sides = two_sides(live, self.text)
        if isinstance(sides, str):
            return Reveal(None, sides)
        mine, theirs = sides
        counts = "; ".join(f"{named(one)}, {one.scheme.kind}: {len(one.tokens)} tokens" for one in sides)
        return Reveal(
            which_side(len(mine.tokens), len(theirs.tokens)),
            f"{counts}. Each tokenizer learnt its own vocabulary: a word one of them keeps whole, the other may cut "
            "into pieces. The page lists both models' tokens.",
        )


@dataclass(frozen=True)
class MoreParameters:
    """ "Which model has more parameters?" — each checkpoint's own count (``bertlens.anatomy``)."""

    prompt: str = "Which model has more parameters (weights and biases) in its checkpoint?"
    choices: tuple[str, ...] = SIDES
    given: Given = ()

    def reveal(self, live: Live) -> Reveal:
        partner = partner_of(live)
        if isinstance(partner, str):
            return Reveal(None, partner)
        mine, theirs = parameter_side(live), parameter_side(partner)
        numbers = "; ".join(
            f"`{name}` {total:,} (its largest part: {largest})" for name, total, largest in (mine, theirs)
        )
        return Reveal(
            which_side(mine[1], theirs[1]),
            f"Parameters in each checkpoint: {numbers}. The page shows every part of both.",
        )


def parameter_side(live: Live) -> tuple[str, int, str]:
    """The model's name, its checkpoint's parameters and its largest part (``comparison.parts_of``)."""
    counts = live.parameter_counts()
    parts = parts_of(counts)
    largest = max(parts, key=lambda part: part[1])[0].lower()
    return live.bundle.name, checkpoint_total(counts), largest


def mlm_beside(live: Live, partner: Live) -> str | None:
    """Why the two models cannot both fill a mask (said as a missing head is), or None when they can."""
    if missing := needs_head(live.bundle, "MLM"):
        return missing
    other = partner.bundle
    if not other.capabilities.predicts("MLM"):
        reason = other.description.why_missing("MLM") or "It is an encoder only."
        return f"This needs a model with the MLM head beside the active one; `{other.name}` has none. {reason}"
    return None


@dataclass(frozen=True)
class SameFirstGuess(AboutASentence):
    """ "Do both models put the same word first in place of the mask?" — each MLM head's top-1, the sentence
    written with each model's own mask token."""

    prompt: str = "Do both models put the same word first in place of [MASK]?"
    choices: tuple[str, ...] = SAME_FIRST

    def reveal(self, live: Live) -> Reveal:
        sides = two_sides(live, self.text, mlm=True)
        if isinstance(sides, str):
            return Reveal(None, sides)
        mine, theirs = sides
        if not mine.guesses or not theirs.guesses:
            return Reveal(None, "The sentence has no mask that both models read.")
        words = "; ".join(
            f"{named(one)} reads `{one.mask_token}` and puts **{one.guesses[0][0]}** first "
            f"({percent(one.guesses[0][1])})"
            for one in sides
            if one.guesses
        )
        same = mine.guesses[0][0].lower() == theirs.guesses[0][0].lower()
        return Reveal(
            SAME_FIRST[0] if same else SAME_FIRST[1],
            f"{words}. Each learnt from its own text with its own vocabulary: the page lists the top "
            f"{len(mine.guesses)} of both.",
        )


@dataclass(frozen=True)
class PairTask:
    """ "Which of the two has a sentence-pair head?" — NSP or sentence order, from each checkpoint's weights."""

    prompt: str = "Which of the two can tell, from its pre-training, whether sentence B belongs after sentence A?"
    choices: tuple[str, ...] = PAIR_CHOICES
    given: Given = ()

    def reveal(self, live: Live) -> Reveal:
        partner = partner_of(live)
        if isinstance(partner, str):
            return Reveal(None, partner)
        described = [one.bundle.description for one in (live, partner)]
        tasks = [pair_head(one) for one in described]
        has = [task is not None for task in tasks]
        answer = PAIR_CHOICES[3 if not any(has) else 2 if all(has) else 0 if has[0] else 1]
        said = " ".join(
            f"`{one.bundle.name}` has the {HEAD_NAMES[task]} head ({task})."
            if task is not None
            else f"`{one.bundle.name}` has none: {pair_gap(one.bundle.description)}"
            for one, task in zip((live, partner), tasks)
        )
        return Reveal(answer, said)


def pair_gap(described: ModelDescription) -> str:
    """Why a model has no sentence-pair head: its family's or its checkpoint's reason."""
    head = "SOP" if described.family == "albert" else "NSP"
    return described.why_missing(head) or described.why_missing("pooler") or "it is an encoder only."


Question = (
    FillMaskTop1
    | NextSentenceVerdict
    | AttendsMore
    | StrongestHead
    | LessPadding
    | MaskMatters
    | CloserInContext
    | BestSeparation
    | ParameterCount
    | LargestPart
    | MoreTokens
    | MoreParameters
    | SameFirstGuess
    | PairTask
)
COMPARED = (MoreTokens, MoreParameters, SameFirstGuess, PairTask)  # questions about two models


def why_not_asked(question: Question | None, live: Live) -> str | None:
    """Why a comparison question cannot be asked with this model beside the active one (no second model, or one
    of the two lacks the head it needs), said as a missing head is; None when it can (and for any other question:
    its page's head is ``needs_head``'s)."""
    if not isinstance(question, COMPARED):
        return None
    partner = partner_of(live)
    if isinstance(partner, str):
        return partner
    return mlm_beside(live, partner) if isinstance(question, SameFirstGuess) else None


@dataclass(frozen=True)
class Step:
    title: str
    text: str  # Markdown, ours: what to look at and which control to use
    page: str  # a page's file stem (the registry: bertlens.pages)
    params: dict[str, str | tuple[str, ...]] = field(default_factory=dict)
    question: Question | None = None
    callouts: tuple[str, ...] = ()  # misconception callouts (Markdown)
    control: str = ""  # the URL parameter (widget key) of the control the text talks about: outlined on the page
    # In a live class, each student adds one sentence with the step's preset word to the class's map (Word senses).
    class_sentences: bool = False


@dataclass(frozen=True)
class Lesson:
    key: str  # its URL value (``lesson``)
    title: str
    # The course notebook it follows, as students know it ("the Discover BERT notebook"): never its seed
    # number or file name (the comments in bertlens.curriculum give those).
    notebook: str
    summary: str
    steps: tuple[Step, ...]


def resolve(params: dict[str, str | tuple[str, ...]], num_layers: int) -> dict[str, str | list[str]]:
    """A step's URL parameters for a model of ``num_layers`` encoder layers."""
    names = {
        LAST_ENCODER_LAYER: str(num_layers - 1),
        LAST_HIDDEN_STATE: str(num_layers),
        MIDDLE_ENCODER_LAYER: str(num_layers // 2),
        WIDEST_LAST_K: layer_options(num_layers)[-1],  # the last hidden state itself when no mean is offered
    }
    return {k: list(v) if isinstance(v, tuple) else names.get(v, v) for k, v in params.items()}


def heads_needed(steps: Sequence[Step]) -> set[PretrainingHead]:
    return {PAGE_HEADS[s.page] for s in steps if s.page in PAGE_HEADS}
