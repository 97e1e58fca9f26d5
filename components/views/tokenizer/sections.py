"""Tokenizer page: cached results (keyed by primitives), plotly figures and section renderers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens.budgets import Budgets
from bertlens.family import TokenizerScheme
from bertlens.tokenization import (
    MAX_LOOKUP_CHARS,
    SEED_BATCH,
    STRATEGIES,
    BeforeWordPiece,
    PaddedBatch,
    PaddingStrategy,
    VocabularyFacts,
    WordLookup,
    batch_lines,
    continuation_column,
    lacking_characters,
    longest_spelled_word,
    pieces_rule,
    scheme_name,
    typed_special_tokens,
    unknown_words,
)
from bertlens.wording import MAX_LISTED, agree, blank, listed, numbered, plural, shortened
from components.services import cache
from components.services.budgeted import lines_within_chars_budget
from components.services.models import cached_bundle, offered_besides, second_bundle
from components.services.settings import settings
from components.services.text import chart_text, code_span, isolated, literal
from components.state.params import asked_for, bound, warn_bad_param
from components.state.widgets import bound_int_slider, linked_text
from components.ui import exports
from components.ui.layout import how_to_read, truncation_notice
from components.ui.palette import CELL_TEXT, INK, LIGHT_BLUES

TABS = ("Tokens", "Vocabulary", "Padding lab")
UNKNOWN_CHARS = 40  # an unknown word quoted in a message: a 20,000-character one filled screens
PAD_GREY = "#e6e6e6"
GAPS_UP_TO = 128  # positions: a wider batch's cells touch
TEXT_IN_CELLS = 32  # write each cell's value when the batch is at most this wide
SENTENCE_LABEL_CHARS = 24  # a sentence's label under its bar: "0: the first words of i…"
INT_COLUMN = st.column_config.NumberColumn(format="%d")
# What the model reads first (seed 003 prints token, id and attention mask), beside the split-word mark the caption
# above the table points to: on a projector the table is wider than the page, and its last columns are a sideways
# scroll away.
TOKEN_ORDER = (
    "position",
    "token",
    "id",
    "split word",
    "token_type_ids",
    "attention_mask",
    "sentence",
    "word",
    "word index",
    continuation_column(),  # the model's own marker's column stands here (``token_order``)
    "special",
)


def token_order(scheme: TokenizerScheme) -> tuple[str, ...]:
    """``TOKEN_ORDER`` with the continuation column named by the model's marker."""
    return tuple(continuation_column(scheme) if name == continuation_column() else name for name in TOKEN_ORDER)


TOKEN_COLUMNS = {name: INT_COLUMN for name in ("position", "id", "word index", "token_type_ids", "attention_mask")}


# --- Figures ---------------------------------------------------------------------------------


def batch_heatmap(batch: PaddedBatch, values: str, title: str) -> go.Figure:
    """The batch's ids or mask as a (sentence × position) heatmap; [PAD] cells are grey, hover shows the token."""
    z = batch.matrix(values)
    hover = [[chart_text(t) for t in row] + [""] * (batch.width - len(row)) for row in batch.tokens]
    is_mask, in_cells = values == "attention_mask", batch.width <= TEXT_IN_CELLS
    fig = go.Figure(
        go.Heatmap(
            z=z,
            customdata=hover,
            hovertemplate="sentence %{y}, position %{x}<br>token %{customdata}<br>value %{z:d}<extra></extra>",
            # Value 0 ([PAD]'s id, or a masked position) is grey; real tokens are blue.
            colorscale=[[0, PAD_GREY], [1, "#1f77b4"]]
            if is_mask
            else [[0, PAD_GREY], [1e-9, LIGHT_BLUES[0][1]], [1, LIGHT_BLUES[1][1]]],
            zmin=0,
            zmax=1 if is_mask else max(float(np.nanmax(z)), 1.0),
            showscale=not is_mask and not in_cells,  # the ids written in the cells need no colour scale
            texttemplate="%{z:d}" if in_cells else None,
            textfont=CELL_TEXT,
            xgap=1 if batch.width <= GAPS_UP_TO else 0,  # at 600 positions a 1-px gap is as wide as a cell
            ygap=1,
        )
    )
    fig.update_layout(title=title, xaxis_title="position", yaxis_title="sentence", height=180 + 28 * len(z))
    fig.update_yaxes(autorange="reversed", dtick=1)
    if in_cells:
        fig.update_xaxes(dtick=1)  # every position numbered (not 0.5, 1, 1.5 for a short batch)
    return fig


def padding_bars(comparison: pd.DataFrame) -> go.Figure:
    bars = go.Bar(
        x=comparison["strategy"],
        y=comparison["padding %"],
        text=comparison["padding %"],
        texttemplate="%{text:.2f} %",
        textposition="outside",
        textfont=dict(color=INK),
        cliponaxis=False,
    )
    fig = go.Figure(bars)
    fig.update_layout(
        title="Share of padding per strategy",
        yaxis={"title": "% of positions that are [PAD]", "rangemode": "nonnegative"},  # no padding: 0 to 1, not ±1
        height=320,
    )
    return fig


# --- Sections --------------------------------------------------------------------------------


def token_section(model_name: str, text: str, text_b: str) -> None:
    view = cache.token_view(cache.query(model_name, text, text_b))
    truncation_notice(view.encoding)
    counts = view.counts
    bundle = cached_bundle(model_name)
    described = bundle.description
    scheme, cutter, unk = described.tokenizer, scheme_name(described.tokenizer), bundle.tokenizer.unk_token
    cols = st.columns(4)
    analysed = " analysed" if view.encoding.truncated else ""  # the counts are of the part the model reads
    cols[0].metric(f"Words{analysed} (split at spaces)", counts.words)
    cols[1].metric(f"Tokens{analysed} (with special)", counts.tokens)
    cols[2].metric(
        f"Words{analysed} cut into {'' if scheme.marker_starts_word else f'{scheme.marker} '}pieces",
        counts.split_words,
        help=f"Among the words {cutter} reads, the ones it cut into several pieces. {pieces_rule(scheme)}"
        + (
            ' WordPiece reads the text split at spaces and around every punctuation mark, so "30,522" is the words '
            "30 , 522 here, and only 522 is cut (52 ##2)."
            if scheme.kind == "WordPiece"
            else ""
        ),
    )
    cols[3].metric(
        "Tokens per word",
        f"{counts.tokens_per_word:.2f}",
        help=f"Tokens{analysed} without {described.cls_token} and {described.sep_token}, divided by the "
        f"words{analysed} split at spaces.",
    )
    st.caption(before_cutting_caption(view.before_wordpiece, lowercases=not described.cased, scheme=scheme))
    if counts.split_words:
        cuts = listed(
            (f"{isolated(w)} → {isolated(p)}" for w, p in zip(view.split["word"], view.split["pieces"])), "; "
        )
        st.markdown(f"**{cutter} cut {plural(counts.split_words, 'word')} into pieces:** {cuts}")
    else:  # a word that became [UNK] is not a vocabulary entry either
        st.markdown(
            f"{cutter} cut no word into pieces"
            + (
                ": every word it could spell is one vocabulary entry."
                if counts.unknown
                else ": every word is a single vocabulary entry."
            )
        )
    if counts.unknown:
        unknown = unknown_words(view.table, unk)
        longest = longest_spelled_word(bundle.tokenizer)
        too_long = [w for w in unknown if longest is not None and len(w) > longest]
        unspelled = [w for w in unknown if w not in too_long]
        why = []  # a word too long is not a spelling problem: WordPiece does not try it
        if too_long:
            why.append(f"{cutter} does not try a word longer than {longest} characters, such as {_quoted(too_long)}")
        if unspelled:
            why.append(_unspelled(unspelled, lacking_characters(bundle.tokenizer, unspelled), unk))
        st.warning(f"{plural(counts.unknown, 'token')} became {special_token(unk)}: {'; '.join(why)}.")
    if typed := typed_special_tokens(view.table, bundle.tokenizer.all_special_tokens):
        st.info(
            f"You typed {listed(map(literal, typed))}: the tokenizer reads {agree(len(typed), 'it', 'each')} as the "
            f"special token itself, with the same id as {agree(len(typed), 'the one', 'the ones')} it adds, so "
            f"{described.family_name} cannot tell yours from its own; only the *special* column below says which the "
            "tokenizer added"
            + (
                f", and a typed {special_token(described.pad_token)} is read like a word (attention mask 1)."
                if described.pad_token in typed
                else "."
            )
        )
    st.caption(
        f"The *split word* column marks the pieces of a word {cutter} cut up; *{continuation_column(scheme)}* the "
        f"pieces that continue a word. {pieces_rule(scheme)}"
    )
    # A plain table (no pandas Styler): styling the rows took half of a cached visit's server time.
    exports.table(
        view.table, "tokens", key="token_table", column_config=TOKEN_COLUMNS, column_order=token_order(scheme)
    )
    st.markdown("**Round trip** — the ids decoded back to text, with the special tokens the tokenizer added:")
    # Plain text, shown literally (never Markdown or HTML); not st.code, whose syntax highlighter is 1.5 MB of
    # JavaScript a fresh tab would fetch and compile for two lines.
    st.text(view.decoded[0])
    dropped = (
        f" — {special_token(unk)} is a special token too, so what became {special_token(unk)} is gone"
        if counts.unknown
        else ""
    )
    st.caption(f"Without the special tokens (an uncased model also lowercases and strips accents){dropped}:")
    st.text(view.decoded[1])


NO_OTHER_TOKENIZER = "(none)"


def other_tokenizer_section(model_name: str, text: str, text_b: str) -> None:
    """The same text through another offered model's tokenizer, side by side with this model's (loaded on request:
    one of the models this server offers, so it costs no more than picking it)."""
    st.header("Two tokenizers, side by side", anchor=False)
    other = st.selectbox(
        "The same text through another model's tokenizer",
        [NO_OTHER_TOKENIZER, *offered_besides(model_name)],
        key="other_tokenizer",  # a detail of the view: not in the link
        help="Each family cuts words its own way: WordPiece's ##, byte-level BPE's Ġ, SentencePiece's ▁.",
    )
    if other is None or other == NO_OTHER_TOKENIZER:
        return
    if isinstance(why_not := second_bundle(other), str):
        st.info(why_not)
        return
    for column, name in zip(st.columns(2), (model_name, other)):
        view, described = cache.token_view(cache.query(name, text, text_b)), cached_bundle(name).description
        with column:
            st.markdown(
                f"{code_span(name)} — {described.family_name}, {scheme_name(described.tokenizer)}: "
                f"**{plural(len(view.table), 'token')}**"
            )
            st.text(" ".join(view.table["token"]))  # literal, never Markdown
            st.caption(pieces_rule(described.tokenizer))


def vocabulary_section(model_name: str) -> None:
    """A word looked up first (what a step asks about), then the vocabulary's size, special and unused tokens."""
    facts = cache.vocabulary(cache.query(model_name))
    word_lookup_section(model_name, facts)
    cols = st.columns(3)
    cols[0].metric("Vocabulary size", f"{facts.size:,}")
    cols[1].metric("Special tokens", len(facts.special))
    cols[2].metric("[unused…] tokens", len(facts.unused))
    if facts.unused:
        first, last = (", ".join(f"`{t}`" for t in ends) for ends in (facts.unused[:10], facts.unused[-10:]))
        with st.expander(f"The `[unused…]` tokens: `{facts.unused[0]}` to `{facts.unused[-1]}`"):
            st.markdown(
                "Reserved slots: no text ever maps to them, so they hold no word's meaning (their rows are trained "
                "all the same: pre-training's random replacements draw them, and every softmax updates them), and a "
                "fine-tuner can give them new words without resizing the embedding matrix.\n\n"
                f"The first ten: {first}.\n\nThe last ten: {last}."
            )
    left, right = st.columns(2)
    with left:
        exports.table(facts.special, "special-tokens", key="special_tokens", column_config={"id": INT_COLUMN})
    with right:
        exports.table(facts.kinds, "vocabulary-kinds", key="vocab_kinds")


def word_lookup_section(model_name: str, facts: VocabularyFacts) -> None:
    """One word looked up: in the vocabulary or split, and its case variants' ids."""
    word = linked_text(st.text_input, "Look up a word", "word", "Sinan", max_chars=MAX_LOOKUP_CHARS)
    if blank(word):
        st.info("Type a word to look it up.")
        return
    found, variants = cache.word_lookup(cache.query(model_name), word)
    scheme = cached_bundle(model_name).description.tokenizer
    message = lookup_message(found, scheme)
    st.success(message) if found.in_vocab else st.info(message)
    if facts.cased:
        st.markdown("**This model is cased:** capitals matter, so the variants below can become different tokens.")
    elif typed := [token for token in facts.special["token"] if any(token in v for v in variants["as typed"])]:
        st.markdown(
            f"**This model is uncased,** but it finds a special token in the text before it lowercases anything, "
            f"and only as written: {literal(typed[0])} is the special token, {literal(typed[0].lower())} is ordinary "
            "text (split at its brackets), so the variants below get different ids."
        )
    elif variants["ids"].nunique() == 1:
        st.markdown(
            "**This model is uncased:** the tokenizer lowercases (and strips accents) first, "
            "so every variant below gets the same ids."
        )
    else:  # ß → SS, dotless ı → I: another case is other letters, which lowercasing does not give back
        st.markdown(
            "**This model is uncased:** the tokenizer lowercases (and strips accents) first, yet these variants get "
            "different ids: changing this word's case changed its letters (ß in capitals is SS; the dotless ı "
            "capitalised is I), and lowercasing does not give the letters back."
        )
    exports.table(variants, "case-variants", key="case_variants")


ENTRY_KINDS = {
    "special": "a special token",
    "reserved": "a reserved slot: no text maps to it",
    "continuation": "a continuation piece: {cutter} uses it only inside a word, after another piece",
    "word": None,
}


def before_cutting_caption(before: BeforeWordPiece, lowercases: bool, scheme: TokenizerScheme) -> str:
    """What the tokenizer does before it cuts words into pieces, with this text's own examples: a script is named only
    when the text is written in it."""
    if scheme.kind != "WordPiece":  # BERT's pre-tokenizer (split at punctuation, lowercase) is WordPiece's
        lowered = "It lowercases the text first. " if lowercases else ""
        return f"{lowered}{pieces_rule(scheme)}"
    said = "Before WordPiece, the tokenizer "
    if lowercases:
        stripped = before.stripped
        example = (
            "é → e" if stripped is None else " → ".join(f'"{isolated(shortened(w, UNKNOWN_CHARS))}"' for w in stripped)
        )
        said += (
            f"lowercases the text and strips its accents ({example}): it splits each character into its base and "
            "marks (Unicode NFD) and drops the marks written over or under a letter"
        )
        if before.syllable is not None:
            syllable, letters = before.syllable
            said += (
                f"; a Korean syllable comes apart into its letters ({literal(syllable)} → {literal(' '.join(letters))})"
            )
        said += ". Then it "
    said += "splits the text at spaces and around every punctuation mark (\"didn't\" → didn ' t)"
    if before.chinese:
        said += " and around every Chinese character (each one a word of its own)"
    return said + "; WordPiece then cuts a word it cannot spell whole into ## pieces."


def _unspelled(words: Sequence[str], lacking: Sequence[str], unk: str = "[UNK]") -> str:
    """Why ``words`` became ``unk``: the characters the vocabulary ``lacking`` named (a word is not [UNK] for its other
    letters: "pizza🍕")."""
    examples = (
        "(emoji, many Chinese characters and rare scripts end up here; a language written without spaces, such as "
        "Thai, is one long word to the tokenizer)"
    )
    if not lacking:  # each character is an entry, but not in the form WordPiece needs where it stands
        return f"the vocabulary cannot spell {_quoted(words)} {examples}"
    missing = f"{_quoted(lacking)} {agree(len(lacking), 'is', 'are')} not in the vocabulary"
    if set(words) <= set(lacking):  # each word is one character the vocabulary lacks
        return f"{missing} {examples}"
    return (
        f"{missing}, and one character it lacks makes the whole word {special_token(unk)}: {_quoted(words)} {examples}"
    )


def special_token(token: str) -> str:
    """A special token in Markdown: as written ("[UNK]", as BERT's always were), or as code when Markdown would
    read it as HTML ("<unk>")."""
    return token if token.startswith("[") and token.endswith("]") and token[1:-1].isalnum() else code_span(token)


def _quoted(words: Sequence[str]) -> str:
    """Words as the page quotes them: literally, a long one shortened."""
    return listed(literal(shortened(w, UNKNOWN_CHARS)) for w in words)


def lookup_message(found: WordLookup, scheme: TokenizerScheme | None = None) -> str:
    """What the look-up found: the entry and its id, and what typing the word as text gives when that differs."""
    cutter = scheme_name() if scheme is None else scheme_name(scheme)
    shown = f"“{literal(found.word)}”"  # quoted: an emoji first in an alert becomes its icon (and is not read out)
    spelled = " + ".join(literal(p) for p in found.pieces) or "(nothing)"
    if found.entry is None or found.entry_id is None or found.kind is None:
        if len(found.parts) > 1:  # "Sinan loves": two words, not a word of three pieces
            split = ", ".join(literal(w) for w in found.parts[:MAX_LISTED]) + (" …" * (len(found.parts) > MAX_LISTED))
            return (
                f"{shown} is not one word: the tokenizer first splits it at spaces and punctuation into "
                f"{plural(len(found.parts), 'part')} ({split}), then {cutter} spells them as "
                f"{plural(len(found.pieces), 'piece')}: {spelled}."
            )
        return (
            f"{shown} is not in the vocabulary; {cutter} spells it as {plural(len(found.pieces), 'piece')}: {spelled}."
        )
    message = f"{shown} is in the vocabulary as {literal(found.entry)} (id {found.entry_id})"
    if what := ENTRY_KINDS[found.kind]:
        message += f", {what.format(cutter=cutter)}"
    if not found.typed_gives_entry:
        message += f". Typed in a text it becomes {plural(len(found.pieces), 'piece')}: {spelled}"
    return message + "."


def padding_controls(
    budgets: Budgets, longest_n: int, max_positions: int
) -> tuple[list[str], PaddingStrategy, int, bool]:
    """The lab's lines and settings; N goes up to ``longest_n`` (the model's positions, under the token cap)."""
    label = "Sentences, one per line"
    lines = batch_lines(linked_text(st.text_area, label, "lines", "\n".join(SEED_BATCH), height=100))
    if over := budgets.first_only("lab_lines", len(lines), "lines", "used"):
        st.warning(over)
        lines = lines[: budgets.lab_lines]
    lines = lines_within_chars_budget(lines, label, "sentence", first=0)  # of those used; 0 as the batch's rows
    warn_bad_param("pad", lambda v: v in STRATEGIES, f"one of {', '.join(STRATEGIES)}")
    left, mid, right = st.columns([2, 3, 2])
    strategy = left.radio("Padding", STRATEGIES, **bound("pad"), horizontal=True) or "longest"
    with mid:
        max_length = bound_int_slider("max_length N", "pad_len", 2, longest_n, 64)
        if longest_n < max_positions:
            st.caption(
                f"N goes up to {longest_n} (the model has {max_positions} positions): {budgets.limit('tokens')}."
            )
    truncation = right.toggle("Truncate to N", value=True, **bound("trunc"))
    with right:
        how_to_read(
            label="Why pad",
            text="A batch must be a rectangle: short sentences are padded with [PAD], long ones truncated. "
            "The attention mask tells the model which positions are real.",
        )
    return lines, strategy, max_length, truncation


def _rows(rows: list[int], sentences: Sequence[str]) -> str:
    """Rows of the batch as the charts number them (from 0), each with its sentence's start: "Sentence 3 (“A much
    longer…”)". Under the text box, whose lines are not numbered (and may be blank), a number alone was misread."""
    quoted = ", ".join(f"“{literal(shortened(sentences[row], 24))}”" for row in rows[:MAX_LISTED])
    return f"{numbered('Sentence', rows)} ({quoted}{' …' if len(rows) > MAX_LISTED else ''})"


def padding_section(model_name: str) -> None:
    bundle, budgets = cached_bundle(model_name), settings().budgets
    query, max_positions = cache.query(model_name), bundle.capabilities.max_positions
    lines, strategy, max_length, truncation = padding_controls(budgets, query.max_length, max_positions)
    if not lines:
        st.info("Type at least one sentence (one per line) to build a batch.")
        return
    batches, comparison = cache.padding_lab(query, tuple(lines), max_length, truncation)
    batch = batches[strategy]
    too_long = [i for i, n in enumerate(batch.lengths) if n > max_positions]  # its own tokens, not its padding
    if too_long:
        st.warning(
            f"{_rows(too_long, batch.sentences)} "
            f"{agree(len(too_long), 'is', 'are')} longer than the model's {max_positions} "
            f"positions: turn on truncation, or the model cannot read {agree(len(too_long), 'it', 'them')}."
        )
    if cut := batch.cut:
        ends = f"{bundle.description.cls_token} and {bundle.description.sep_token}"
        kept = f"{agree(len(cut), 'it keeps', 'each keeps')} {max_length} tokens, {ends} included"
        left = f"only {ends} are left, no word" if max_length <= 2 else kept
        st.warning(f"{_rows(cut, batch.sentences)} {agree(len(cut), 'was', 'were')} cut to N = {max_length}: {left}.")
    if not batch.rectangular:
        st.warning(
            "These rows have different lengths, so they cannot be stacked into one tensor "
            "(without padding, or with long sentences and no truncation)."
        )
    if leads := asked_for("mask_demo"):
        mask_section(model_name, batch, max_length, truncation, query.max_length)
    exports.table(
        comparison, "padding-strategies", key="padding_comparison", column_config={"padding %": exports.PERCENT_COLUMN}
    )
    exports.chart(padding_bars(comparison), "padding-share", key="padding_bars")
    if (positions := len(batch.input_ids) * batch.width) > budgets.lab_positions:
        st.warning(
            f"This batch is {len(batch.input_ids)} × {batch.width} = {positions:,} positions, too many to draw: "
            f"{budgets.limit('lab_positions')}. Turn on truncation, or use fewer or shorter lines."
        )
        return
    pad = bundle.description.pad_token
    ids_title, mask_title = f"Token ids — padding: {strategy}", f"Attention mask (1 = real token, 0 = {pad})"
    exports.chart(batch_heatmap(batch, "input_ids", ids_title), "padded-ids", key="ids_heatmap")
    exports.chart(batch_heatmap(batch, "attention_mask", mask_title), "attention-mask", key="mask_heatmap")
    exports.csv_download(batch.table, f"padded-batch-{strategy}", label="Download the padded batch (CSV)")
    one_padded_sentence(batch, strategy)
    if not leads:
        mask_section(model_name, batch, max_length, truncation, query.max_length)


def one_padded_sentence(batch: PaddedBatch, strategy: str) -> None:
    """Seed 003's table of one padded sentence: each position's token, id and mask (the heatmaps show the ids)."""
    row = st.selectbox(
        "One sentence, position by position",
        range(len(batch.sentences)),
        format_func=lambda i: f"{i}: {shortened(batch.sentences[i], 60)}",
        key="pad_sentence",  # a detail of the view: not in the link
    )
    row = min(row or 0, len(batch.sentences) - 1)  # a shorter batch than the one chosen from
    table = batch.table()
    exports.table(
        table[table["sentence"] == row].drop(columns="sentence"),
        f"padded-sentence-{row}-{strategy}",
        key="pad_sentence_table",
        title=f"Sentence {row}, position by position ({strategy})",
        column_config=dict.fromkeys(("position", "input_id", "attention_mask"), INT_COLUMN),
    )


def mask_section(model_name: str, batch: PaddedBatch, max_length: int, truncation: bool, longest: int) -> None:
    """The lab's own batch (same padding, N and truncation) with and without the mask; ``longest``: tokens a row may have."""
    st.header("Why the attention mask matters", anchor=False)  # h2 under the page title: no skipped heading level
    # Two forward passes over the whole batch: run on request (the choice is kept in the link).
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        run = st.toggle("Run the batch with and without the mask", **bound("mask_demo"), width="content")
        how_to_read(
            label="What this measures",
            text="Each sentence's final `[CLS]` vector computed **with** the attention mask and **without** it "
            "(every `[PAD]` treated as a real token). A sentence with no padding is unchanged (distance 0); "
            "padded sentences drift, because their tokens attend to the padding.",
        )
    if not run:
        return
    strategy = batch.strategy
    if not batch.rectangular:
        st.caption(
            "These rows have different lengths, so there is no batch tensor; this demo pads to the longest "
            "sentence" + (" (without truncation, as chosen)." if not truncation else ".")
        )
        strategy = "longest"
    if not truncation and (over := [i for i, n in enumerate(batch.full_lengths) if n > longest]):
        st.warning(
            f"{_rows(over, batch.sentences)} {agree(len(over), 'is', 'are')} "
            f"longer than {longest} tokens, more than this demo runs: turn on truncation to run it."
        )
        return
    distances = cache.mask_distances(cache.query(model_name), batch.sentences, strategy, max_length, truncation)
    exports.table(
        distances,
        "attention-mask-effect",
        key="mask_effect",
        column_config={"[CLS] L2 distance": st.column_config.NumberColumn(format="%.6f")},
    )
    fig = go.Figure(
        go.Bar(
            x=[f"{i}: {chart_text(shortened(s, SENTENCE_LABEL_CHARS))}" for i, s in enumerate(distances["sentence"])],
            y=distances["[CLS] L2 distance"],
            customdata=[f"{i}: {chart_text(s)}" for i, s in enumerate(distances["sentence"])],
            hovertemplate="sentence %{customdata}<br>distance %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="[CLS] L2 distance, with vs without the mask",
        xaxis_title="sentence",
        yaxis_title="L2 distance",
        height=320,
    )
    exports.chart(fig, "attention-mask-effect", key="mask_bars")
