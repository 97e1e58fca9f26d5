"""The one cache layer: every cached computation of BERT Lens, keyed by one frozen ``Query``.

A run builds its ``Query`` once (``query``): the model actually loaded, the text, sentence B, the
deployment's token cap and the model's cache generation. Every cached function takes it first, so a
cap or an option cannot be left out of a key, and ``forget_model`` drops one model's results in one
call (the generation moves on; the old ``st.cache_data`` entries are never read again and age out under
``max_entries``; the model's analyses go with the model object).

The model itself is reached only through ``components.services.models.cached_bundle`` and the engine
(``bertlens.analysis``/``bertlens.engine``). The forward pass's results live in the model's own analysis
cache (``bertlens.analysis.analysis_cache``: shared, read-only, bounded in bytes, gone with the model);
smaller derived results are ``st.cache_data``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from bertlens import anatomy, mlm, nsp
from bertlens.analysis import (
    Analysis,
    Encoding,
    encode,
    ids_of,
    max_tokens,
    normalizer_of,
    remembered_analysis,
)
from bertlens.anatomy import (
    Architecture,
    EmbeddingParts,
    PoolerCheck,
    bundle_named_parameters,
    bundle_parameter_counts,
    config_summary,
    embedding_parts,
    module_tree,
    pooler_check,
)
from bertlens.attention import head_statistics, mosaic, rollout
from bertlens.influence import Influence, Mode, Watch, mask_and_see, watch
from bertlens.positions import PositionEmbeddings, position_embeddings, sinusoidal_embeddings
from bertlens.pretraining import PretrainingStep, pretraining_step
from bertlens.senses import (
    Projection,
    WordVectors,
    at_layer,
    embed_word,
    find_word,
    project,
    separation_by_option,
)
from bertlens.steps import HeadSteps, LayerGuesses, head_steps, layer_guesses
from bertlens.tokenization import (
    BeforeWordPiece,
    PaddedBatch,
    PaddingStrategy,
    TokenCounts,
    VocabularyFacts,
    WordLookup,
    before_wordpiece,
    case_variants,
    look_up,
    mask_effect,
    pad_batch,
    padded_batches,
    padding_comparison,
    round_trip,
    spaced_words,
    split_words,
    token_counts,
    token_table,
    vocabulary_facts,
)
from bertlens.wording import blank, plural
from components.services.models import cached_bundle, model_wait, retry_wait
from components.services.settings import settings

_generations: dict[str, int] = {}
_generations_lock = threading.Lock()


@dataclass(frozen=True)
class Query:
    """What a cached result depends on besides its own options: one per run (and per second sentence)."""

    model: str  # the model actually loaded (``bundle.name``), never the request
    text: str = ""
    text_b: str = ""
    token_cap: int | None = None  # the deployment's cap on tokens per input (None: the model's limit)
    generation: int = 0  # ``forget_model`` moves it on

    def with_text(self, text: str, text_b: str | None = None) -> Query:
        return replace(self, text=text, text_b=self.text_b if text_b is None else text_b)

    @property
    def max_length(self) -> int:
        """Tokens per input: the model's positions, under the cap."""
        return max_tokens(cached_bundle(self.model), self.token_cap)


def query(model_name: str, text: str = "", text_b: str = "") -> Query:
    """This run's query: the cap read from the settings now, the model's current generation."""
    return Query(model_name, text, text_b or "", settings().budgets.tokens, _generations.get(model_name, 0))


def forget_model(name: str) -> None:
    """Drop everything cached for ``name``: its bundle and every result keyed by it (one call)."""
    with _generations_lock:
        _generations[name] = _generations.get(name, 0) + 1
    cached_bundle.clear(name)


def retry_load(name: str, min_interval: float) -> float:
    """Forget ``name``'s failed load so the next run tries again; 0.0 when done, else seconds to wait.

    Only ``name``'s own entries are dropped (``forget_model``: its bundle and its results): every derived result is
    keyed by the model actually loaded, so the bundled encoder's results stay valid for everybody. When it may be
    tried again: ``models.retry_wait``. The one path that resets a cache (a visitor's ``clear_cache`` clears nothing
    shared while hosted: ``services.protocol``).
    """
    if wait := retry_wait(name, min_interval):
        return wait
    forget_model(name)
    return 0.0


# --- the forward pass ----------------------------------------------------------------------------


def analysis(q: Query) -> Analysis:
    """The one forward pass for ``q``, shared by every session (``bertlens.analysis.analysis_cache``: bounded
    in bytes, not entries); the queue position is shown while it waits."""
    with model_wait():
        return remembered_analysis(cached_bundle(q.model), q.text, q.text_b or None, q.token_cap)


def cached_analysis(model_name: str, text: str, text_b: str = "") -> Analysis:
    """``analysis`` of this run's query for (model, text, sentence B)."""
    return analysis(query(model_name, text, text_b))


# --- Tokenizer -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenView:
    encoding: Encoding
    table: pd.DataFrame
    split: pd.DataFrame
    counts: TokenCounts
    decoded: tuple[str, str]  # with and without the special tokens
    before_wordpiece: BeforeWordPiece


@st.cache_data(max_entries=32, show_spinner=False)
def token_view(q: Query) -> TokenView:
    bundle = cached_bundle(q.model)
    tokenizer = bundle.tokenizer
    encoding = encode(tokenizer, q.text, q.text_b or None, q.max_length)
    table = token_table(encoding, q.text, q.text_b or None, bundle.description.tokenizer)
    counts = token_counts(table, tokenizer.unk_token, spaced_words(encoding, q.text, q.text_b or None))
    before = before_wordpiece(tokenizer, f"{q.text}\n{q.text_b}")
    return TokenView(encoding, table, split_words(table), counts, round_trip(tokenizer, encoding), before)


@st.cache_data(max_entries=8, show_spinner=False)
def vocabulary(q: Query) -> VocabularyFacts:
    return vocabulary_facts(cached_bundle(q.model).tokenizer)


@st.cache_data(max_entries=64, show_spinner=False)
def word_lookup(q: Query, word: str) -> tuple[WordLookup, pd.DataFrame]:
    tokenizer = cached_bundle(q.model).tokenizer
    return look_up(tokenizer, word), case_variants(tokenizer, word)


@st.cache_data(max_entries=32, show_spinner=False)
def padding_lab(
    q: Query, lines: tuple[str, ...], max_length: int, truncation: bool
) -> tuple[dict[PaddingStrategy, PaddedBatch], pd.DataFrame]:
    """The batch under every padding strategy (switching strategy is a cache hit), and their comparison."""
    batches = padded_batches(cached_bundle(q.model).tokenizer, lines, max_length, truncation)
    return batches, padding_comparison(batches, max_length)


@st.cache_data(max_entries=16, show_spinner="Running the batch with and without the mask…")
def mask_distances(
    q: Query, lines: tuple[str, ...], strategy: PaddingStrategy, max_length: int, truncation: bool
) -> pd.DataFrame:
    """The Padding lab's own batch (same padding, N and truncation) with and without the attention mask."""
    bundle = cached_bundle(q.model)
    with model_wait():
        return mask_effect(bundle, pad_batch(bundle.tokenizer, lines, strategy, max_length, truncation))


# --- Model anatomy -------------------------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def architecture(q: Query) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Config summary, parameter counts by component, named parameters."""
    bundle = cached_bundle(q.model)
    return config_summary(bundle.model.config), bundle_parameter_counts(bundle), bundle_named_parameters(bundle)


@st.cache_data(max_entries=8, show_spinner=False)
def architecture_blocks(q: Query) -> Architecture:
    """The architecture figure's blocks, from the cached parameter counts."""
    bundle = cached_bundle(q.model)
    return anatomy.architecture_of(bundle.description, bundle.model.config, architecture(q)[1])


@st.cache_data(max_entries=8, show_spinner=False)
def modules(q: Query) -> str:
    return module_tree(cached_bundle(q.model))


@st.cache_data(max_entries=8, show_spinner=False)
def embeddings(q: Query) -> EmbeddingParts:
    return embedding_parts(cached_bundle(q.model), analysis(q))


@st.cache_data(max_entries=8, show_spinner=False)
def same_tokens(q: Query, other: Query) -> pd.DataFrame:
    """The tokens ``q``'s input shares with ``other``'s, compared (no forward pass: table look-ups)."""
    return anatomy.same_tokens(cached_bundle(q.model), token_view(q).encoding, token_view(other).encoding)


@st.cache_data(max_entries=8, show_spinner=False)
def pooler(q: Query) -> PoolerCheck | None:
    return pooler_check(cached_bundle(q.model), analysis(q))


def forward_outputs(q: Query) -> pd.DataFrame:
    """What the forward pass of ``q`` returns (shapes only: not worth a cache entry)."""
    bundle = cached_bundle(q.model)
    return anatomy.forward_outputs(analysis(q), bundle.capabilities, bundle.description)


@st.cache_data(max_entries=8, show_spinner=False)
def positions(q: Query, count: int) -> PositionEmbeddings:
    return position_embeddings(cached_bundle(q.model), count)


@st.cache_data(max_entries=8, show_spinner=False)
def sinusoids(q: Query, count: int) -> PositionEmbeddings:
    """The fixed sinusoidal encoding at the model's hidden size, drawn beside its learned positions."""
    return sinusoidal_embeddings(count, cached_bundle(q.model).capabilities.hidden_size)


# --- Fill-mask and next sentence -----------------------------------------------------------------


@st.cache_data(max_entries=64, show_spinner=False)
def mask_guesses(q: Query, k: int) -> list[mlm.MaskGuesses]:
    return mlm.top_k_guesses(analysis(q), cached_bundle(q.model).tokenizer, k)


@st.cache_data(max_entries=32, show_spinner=False)
def pretraining(q: Query, draw: int) -> PretrainingStep:
    """Pre-training's corruption of ``q.text`` (draw ``draw``) and BERT's guesses at the chosen tokens."""
    bundle = cached_bundle(q.model)
    with model_wait():
        return pretraining_step(bundle, encode(bundle.tokenizer, q.text, None, q.max_length), draw)


@st.cache_data(max_entries=64, show_spinner=False)
def true_word(q: Query, word: str, mask_number: int) -> mlm.TrueWordCheck | str:
    """The check, or why the word cannot be checked."""
    tokenizer = cached_bundle(q.model).tokenizer
    problem = mlm.true_word_problem(tokenizer, word)
    return problem or mlm.check_true_word(analysis(q), tokenizer, word, mask_number)


@st.cache_data(max_entries=32, show_spinner=False)
def guesses_by_layer(q: Query, k: int, mask_number: int, word: str) -> LayerGuesses:
    """The MLM head on the mask's hidden state after every encoder layer; ``word`` (may be empty) is tracked too."""
    bundle = cached_bundle(q.model)
    tokenizer = bundle.tokenizer
    true_id = None
    if word.strip() and mlm.true_word_problem(tokenizer, word) is None:
        true_id = ids_of(tokenizer, tokenizer.tokenize(word.strip())[:1])[0]
    return layer_guesses(bundle, analysis(q), k, mask_number, true_id)


@st.cache_data(max_entries=32, show_spinner=False)
def ranking(q: Query, candidates: tuple[str, ...]) -> pd.DataFrame:
    """Candidate Bs for sentence A (``q.text``), ranked by P(IsNext)."""
    with model_wait():
        return nsp.rank_candidates(cached_bundle(q.model), q.text, list(candidates), q.token_cap)


@st.cache_data(max_entries=16, show_spinner=False)
def evaluation(q: Query, rows: tuple[tuple[str, str, Any, str], ...]) -> nsp.Evaluation | None:
    pairs = pd.DataFrame(list(rows), columns=[*nsp.PAIR_COLUMNS, nsp.TOPIC])
    with model_wait():
        return nsp.evaluate_pairs(cached_bundle(q.model), pairs, q.token_cap)


# --- Attention -----------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner="Computing head statistics…")
def statistics(q: Query) -> dict[str, np.ndarray]:
    result, described = analysis(q), cached_bundle(q.model).description
    return head_statistics(result.attentions, result.encoding, described.cls_token, described.sep_token)


@st.cache_data(max_entries=4, show_spinner="Rolling attention out through the layers…")
def attention_rollout(q: Query) -> np.ndarray:
    return rollout(analysis(q).attentions)


@st.cache_data(max_entries=8, show_spinner="Drawing thumbnails…")
def thumbnails(q: Query, size: int) -> np.ndarray:
    return mosaic(analysis(q).attentions, size)


@st.cache_data(max_entries=32, show_spinner=False)
def steps_of_head(q: Query, layer: int, head: int, query_token: int) -> HeadSteps:
    return head_steps(cached_bundle(q.model), analysis(q), layer, head, query_token)


@st.cache_data(max_entries=64, show_spinner=False)
def influence_watch(q: Query, mode: Mode) -> Watch:
    return watch(cached_bundle(q.model), analysis(q), mode)


@st.cache_data(max_entries=64, show_spinner="Hiding and running the model again…")
def influence(q: Query, mode: Mode, hide: int | None) -> Influence:
    """``hide``: one position (one extra pass), or None for every token in turn (one batched pass)."""
    return mask_and_see(cached_bundle(q.model), analysis(q), mode, hide=hide)


# --- Word senses ---------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner=False)
def word_vectors(q: Query, word: str, sentences: tuple[str, ...], references: tuple[str, ...]) -> WordVectors:
    """The batched forward pass, with a progress bar while it runs (created in here, so a cache hit replays it)."""
    bar = st.progress(0.0, text=f"Reading {plural(len(sentences), 'sentence')}…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=f"Read {done} of {plural(total, 'sentence')}…")

    with model_wait():
        words = embed_word(cached_bundle(q.model), sentences, word, q.max_length, progress, references=references)
    bar.empty()
    return words


@st.cache_data(max_entries=32, show_spinner="Projecting…")
def projection(
    q: Query, word: str, sentences: tuple[str, ...], references: tuple[str, ...], layer: str, method: str, listed: int
) -> Projection:
    """The map of ``word_vectors`` for the same arguments (a cache hit there), fitted on the occurrences in the first
    ``listed`` sentences: a sentence after them (the student's own) is placed on their map."""
    words = word_vectors(q, word, sentences, references)
    fitted = sum(occurrence.sentence_index < listed for occurrence in words.occurrences)
    return project(at_layer(words.contextual, layer), method, fitted_rows=fitted)


@st.cache_data(max_entries=32, show_spinner=False)
def separations(
    q: Query, word: str, sentences: tuple[str, ...], references: tuple[str, ...], labels: tuple[str, ...]
) -> dict[str, float | None]:
    """The silhouette of ``labels`` at every layer option of ``word_vectors`` (26-140 ms for 200 sentences)."""
    return separation_by_option(word_vectors(q, word, sentences, references).contextual, labels)


@st.cache_data(max_entries=4096, show_spinner=False)
def occurrences_in(q: Query, sentence: str, word: str, past_the_cut: bool = False) -> int:
    """How often ``word`` stands as a whole word in the part of ``sentence`` the model reads (cached per sentence);
    ``past_the_cut``: in the whole sentence (a tokenization only, as long as the characters budget allows)."""
    if blank(sentence):
        return 0
    longest = len(sentence) + 2 if past_the_cut else q.max_length  # a token holds at least one character
    tokenizer = cached_bundle(q.model).tokenizer
    return len(find_word(encode(tokenizer, sentence, max_length=longest), sentence, word, normalizer_of(tokenizer)))
