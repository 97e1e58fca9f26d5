"""Views of BERT's two pre-training heads: fill-mask guesses and next-sentence verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens import mlm, nsp
from bertlens.analysis import Analysis
from bertlens.models import ModelBundle, PretrainingHead
from bertlens.steps import LayerGuesses
from bertlens.table_input import TableInputError
from bertlens.tokenization import batch_lines
from bertlens.wording import agree, blank, percent, plural, shortened, significant
from components import cache
from components.exports import chart, table
from components.layout import truncation_notice
from components.model import settings
from components.palette import CELL_TEXT, INK, LIGHT_BLUES
from components.params import bound
from components.state import (
    DEFAULT_TEXT,
    bound_int_input,
    brought_from_another_page,
    has_shared_text,
    int_in_range,
    keep_in_range,
    lines_within_chars_budget,
    linked_text,
    remembered_shared_text,
    sentence_b,
    set_shared_text,
    shared_text,
    warn_bad_param,
    without_repeats,
)
from components.text import SHARE_TICKS, chart_text, code_span, literal
from components.uploads import read_upload, upload_id, uploaded

MASKS_PER_ROW = 2  # three across cut each table after its probability column at 1280 px
FILL_MASK_TABS = ("Guesses", "Layer by layer", "Compare two sentences")
NSP_TABS = ("Verdict", "Ranking", "Evaluation")
BAR = "#4c78a8"
PROBABILITY = st.column_config.NumberColumn(format="%.4g")
LOGIT = st.column_config.NumberColumn(format="%.3f")
LOSS = st.column_config.NumberColumn(format="%.4f")
PROBABILITY_COLUMNS = ("P(top guess)", "P(true word)")


# ---- inputs, and the budgets applied before the cached scoring (cache.ranking, cache.evaluation) ----


def _swap() -> None:
    """B before A. Where A was the sentence the other pages read (the pair they show is that sentence and B), it
    stays their first sentence: the other pages then show the swapped pair, not one sentence twice."""
    a, b = st.session_state["a"], st.session_state["b"]
    if a == remembered_shared_text() and not blank(b):
        set_shared_text(b)
    set_shared_text(b, "a")
    set_shared_text(a, "b")


def sentence_pair_inputs() -> tuple[str, str]:
    """Sentences A and B (shared with the other pages), a swap button, and a button that takes the shared sentence
    as A when A is another one.

    A student who arrives with a B from another page and no A of their own gets that page's sentence as A: the
    pair they built there (the example A with their B was a pair nobody made). A B first given here keeps the
    example A it was shown with."""
    if brought_from_another_page("b") and not has_shared_text("a"):
        set_shared_text(remembered_shared_text(), "a")
    a = shared_text("Sentence A", key="a", default=nsp.DEFAULT_A)
    b = sentence_b("Sentence B", default=nsp.DEFAULT_B, keeps="a")
    if not blank(b) and has_shared_text("b") and st.session_state["a"] == remembered_shared_text():
        st.caption("The pair the other pages show: their sentence as A, with your sentence B.")
    left, right = st.columns(2)
    left.button("Swap: B before A", on_click=_swap, icon=":material/swap_vert:", key="swap")
    shared = remembered_shared_text()
    if not blank(shared) and shared not in (a, DEFAULT_TEXT):  # a sentence the student gave another page
        right.button(
            "Use the shared sentence as A",
            on_click=set_shared_text,
            args=(shared, "a"),
            key="use_shared",
            help=f"The sentence the other pages read: “{literal(shortened(shared, 200))}”",
        )
    return a, b


def candidate_inputs() -> list[str]:
    """The candidate Bs the ranking scores, one per line, each within the characters budget."""
    label = "Candidate Bs, one per line"
    lines = without_repeats(
        batch_lines(linked_text(st.text_area, label, "candidates", nsp.DEFAULT_CANDIDATES)), "each candidate"
    )
    return lines_within_chars_budget(lines, label, "candidate")


def ranking(model_name: str, sentence_a: str, candidates: list[str]) -> pd.DataFrame:
    """Candidate Bs ranked by P(IsNext): at most the candidates budget (the rest named in a warning)."""
    budgets = settings().budgets
    if over := budgets.first_only("candidates", len(candidates), "candidate sentences B", "scored"):
        st.warning(over)
    return cache.ranking(cache.query(model_name, sentence_a), tuple(candidates[: budgets.candidates]))


KEPT_PAIRS = "_kept_pairs"  # (editor key, the table as last edited): the student's pairs, for this tab
PAIRS_START = "_pairs_start"  # (editor key, the table it started from in this visit, whether it is the one left)


def labelled_pairs() -> pd.DataFrame:
    """The Evaluation tab's table of labelled pairs, editable: the notebook's ten, or the student's own loaded from a
    CSV file; as the student left them when they come back from another page."""
    pairs, source = nsp.DEFAULT_PAIRS, "pairs"
    files = uploaded("Your own pairs: a CSV file with the columns sentence_a, sentence_b, is_next", "pairs_csv")
    try:
        loaded = read_upload("pairs_csv", files, lambda read: nsp.parse_pairs(next(iter(read.values()))))
    except TableInputError as error:
        st.error(f"{error} The table is back to the default pairs.")  # our own message: no text from the file
        loaded = None
    if loaded is not None:
        pairs, source = loaded, f"pairs-{upload_id('pairs_csv')}"  # a new file: a new table
        budgets = settings().budgets
        if over := budgets.first_only("eval_rows", len(pairs), "pairs", "loaded"):  # a table the browser can hold
            st.warning(over)
            pairs = pairs.head(budgets.eval_rows)
    start, as_left = _editor_start(source, pairs)
    st.caption(
        "Edit, add or delete rows (is_next ticked = B really follows A). "
        + (
            "Your pairs, as you left them."
            if as_left
            else "Default: the ten pairs of the notebook's exercise."
            if source == "pairs"
            else "Loaded from your file."
        )
    )
    edited = st.data_editor(
        start,
        num_rows="dynamic",
        hide_index=True,
        key=source,
        width="stretch",
        # The label first: after the sentences it was cut off.
        column_order=("is_next", "sentence_a", "sentence_b", nsp.TOPIC),
        column_config={
            "is_next": st.column_config.CheckboxColumn(width="small", help="Ticked: B really follows A"),
            nsp.TOPIC: st.column_config.TextColumn(help="Optional: what the pair is about, to read the results by"),
        },
    )
    st.session_state[KEPT_PAIRS] = (source, edited)
    if not edited.equals(nsp.DEFAULT_PAIRS):
        st.caption(
            "Your pairs stay in this tab, not in the link: a reload or the class link opens the ten default pairs. "
            "To keep the pairs scored, download the table below (CSV) and load it here again (it leaves out rows "
            "without both sentences and a label)."
        )
    return edited


def _editor_start(source: str, pairs: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """The table the pairs editor ``source`` starts from, and whether it is the one the student left. Streamlit
    forgets an editor's edits when the student visits another page: on the editor's first run of a visit, the
    table as the student last left it (same source), else ``pairs``; then that same table for the rest of the
    visit (the editor's edits are kept relative to it)."""
    if source not in st.session_state:  # a new editor: the page's first run, or its first since another page
        kept_source, kept = st.session_state.get(KEPT_PAIRS, (None, pairs))
        left = kept_source == source and not kept.equals(pairs)
        st.session_state[PAIRS_START] = (source, kept if left else pairs, left)
    started, table, left = st.session_state[PAIRS_START]
    return (table, left) if started == source else (pairs, False)


def evaluation(model_name: str, rows: list[tuple]) -> nsp.Evaluation | None:
    """The labelled pairs scored: at most the evaluation-rows budget (the rest named in a warning), each sentence
    and topic within the characters budget. ``rows``: (sentence A, sentence B, is_next, topic), as the student's
    table holds them."""
    budgets = settings().budgets
    if over := budgets.first_only("eval_rows", len(rows), "rows", "scored"):
        st.warning(over)
    rows = rows[: budgets.eval_rows]
    a, b, topics = (
        lines_within_chars_budget([row[column] if isinstance(row[column], str) else "" for row in rows], label, "row")
        for column, label in (
            (0, "Sentences A of the pairs"),
            (1, "Sentences B of the pairs"),
            (3, "Topics of the pairs"),
        )
    )
    labels = (row[2] for row in rows)
    return cache.evaluation(cache.query(model_name), tuple(zip(a, b, labels, topics, strict=True)))


# ---- the missing-head explanation ----

HEADS: dict[PretrainingHead, tuple[str, str]] = {
    "MLM": ("masked-language-model (MLM) head", "guess the hidden word at a [MASK]"),
    "NSP": ("next-sentence-prediction (NSP) head", "tell whether sentence B follows sentence A"),
}


def no_head_explanation(bundle: ModelBundle, head: PretrainingHead) -> None:
    """Why there are no predictions here, and how to get a model that has the head."""
    name, job = HEADS[head]
    st.info(
        f"**No predictions with {code_span(bundle.name)}: its checkpoint has no {name}.**\n\n"
        f"It is an encoder only: it turns text into vectors, but the layer that would {job} was "
        "never saved with it. Loading it anyway would fill the head with random numbers, and their "
        "'predictions' would mean nothing — so BERT Lens shows none.\n\n"
        "To see real predictions, use **bert-base-uncased** (it ships both pre-training heads): on a "
        "connected machine run `hf download bert-base-uncased`, then pick it in the sidebar's **Model** "
        "menu — or start the app with `BERTLENS_MODEL=/path/to/bert-base-uncased streamlit run app.py`.",
        icon=":material/block:",
    )


# ---- figures ----


def _label(token: str) -> str:
    return chart_text(token)  # plotly reads <b>, <br>… in labels: show tokens literally


def bar_figure(labels: list[str], values: list[float], title: str, x_title: str) -> go.Figure:
    fig = go.Figure(
        go.Bar(
            x=values,
            y=[_label(t) for t in labels],
            orientation="h",
            marker_color=BAR,
            text=[significant(v, 3) for v in values],
            textposition="auto",
            insidetextfont=dict(color="#ffffff"),  # 4.8:1 on BAR
            outsidetextfont=dict(color=INK),
            hovertemplate="%{y}: %{x:.4g}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"title": x_title, "tickformat": SHARE_TICKS},
        yaxis={"autorange": "reversed", "type": "category"},
        height=120 + 22 * len(labels),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


def confusion_figure(confusion: pd.DataFrame) -> go.Figure:
    fig = go.Figure(
        go.Heatmap(
            z=confusion.to_numpy(),
            x=[label.removeprefix("predicted ") for label in confusion.columns],
            y=[label.removeprefix("actual ") for label in confusion.index],
            text=confusion.to_numpy(),
            texttemplate="%{text}",
            textfont={**CELL_TEXT, "size": 20},  # the counts are what the chart is for
            colorscale=LIGHT_BLUES,
            showscale=False,
        )
    )
    fig.update_layout(
        title="Confusion matrix",
        xaxis_title="predicted",
        yaxis={"autorange": "reversed", "title": "actual"},
        height=320,
        margin={"t": 50},
    )
    return fig


# ---- fill-mask views ----


def guesses_section(query: cache.Query, guesses: list[mlm.MaskGuesses], words: dict[int, str]) -> None:
    """Each mask's guesses; with several masks, how they were predicted and every mask at a glance."""
    if len(guesses) > 1:
        st.caption(
            f"{len(guesses)} masks, predicted **independently, in one pass**: each mask gets its own softmax, "
            "from the sentence with every mask still hidden, never another mask's guess."
        )
    st.caption(
        "**logit**: the MLM head's raw score for the token. **probability**: the softmax of the logits of the "
        "whole vocabulary at this mask, so the rows shown need not add up to 1."
    )
    budgets = settings().budgets
    if too_many := budgets.first_only("masks", len(guesses), "masks", "drawn one by one"):
        st.warning(too_many + " Every mask at a glance, below, lists them all.")
    mask_columns(guesses[: budgets.masks])
    if len(guesses) > 1:
        mask_overview_section(query, guesses, words)


def true_word_choice(masks: int) -> tuple[dict[int, str], int]:
    """The original word(s) the student types (one per mask, for the true-word checks) and, with several masks,
    which mask the per-mask views show (from 1)."""
    word_column, mask_column = st.columns([3, 1])
    with word_column:
        typed = linked_text(
            st.text_input,
            "Original word — or one per mask, separated by commas (for the true-word checks)",
            "true_word",
            placeholder="e.g. paris",
            max_chars=settings().budgets.chars,  # as long as a text: one word per mask of the sentence
        )
    mask_number = 1
    if masks:  # a link's mask beyond the sentence's, one mask included (it was dropped without a word)
        expected = f"a mask number from 1 to {masks}" if masks > 1 else "1: the sentence has one mask"
        warn_bad_param("at_mask", int_in_range(1, masks), expected)
    if masks == 1 and "at_mask" in st.query_params:  # no picker to take it out of the link: once is enough
        del st.query_params["at_mask"]
    if masks > 1:
        keep_in_range("at_mask", 1, masks)
        with mask_column:
            mask_number = st.selectbox("At mask", range(1, masks + 1), **bound("at_mask"))
    words, problem = mlm.true_words(typed, masks, mask_number)
    if problem:
        st.warning(problem)
    return words, mask_number


def true_word_section(query: cache.Query, word: str, mask_number: int, vocab_size: int) -> None:
    st.header("True-word check", anchor=False)  # h2 under the page title: no skipped heading level
    st.caption(
        f"The word mask {mask_number} hides (typed above): how probable did BERT find it, at which rank, "
        "and what loss does that give?"
    )
    if blank(word):
        if blank(st.session_state.get("true_word", "")):  # words typed that fit no mask are warned about above
            st.info(f"Type the word mask {mask_number} hides in *Original word* above (e.g. paris) to check it.")
        return
    check = cache.true_word(query, word, mask_number)
    true_word_view(check, vocab_size)
    if not isinstance(check, str):
        labels_section(query, check, mask_number)


def labels_section(query: cache.Query, check: mlm.TrueWordCheck, mask_number: int) -> None:
    """The labels the loss reads (seed 003's "labels after masking"), in an expander drawn only when opened."""
    labels = st.expander("The labels pre-training's loss reads (−100 = ignored)", key="loss_labels", on_change="rerun")
    if labels.open:
        with labels:
            analysis = cache.analysis(query)
            several = len(analysis.mask_positions) > 1
            st.caption(
                f"One label per token: the true token's id ({check.token_id:,}, {literal(check.token)}) at "
                f"{f'mask {mask_number}' if several else 'the mask'}, {mlm.IGNORED} everywhere else. PyTorch's "
                f"cross-entropy skips {mlm.IGNORED}, so the loss is the −log p of that mask alone: {check.loss:.4f}, "
                "as above."
                + (
                    " In pre-training every mask carries its own label, and the loss is the mean over them; here each "
                    "mask's check labels its own."
                    if several
                    else ""
                )
            )
            position = analysis.mask_positions[mask_number - 1]
            table(mlm.loss_labels(analysis.encoding, position, check.token_id), "loss-labels", key="loss-labels-table")


def mask_columns(guesses: list[mlm.MaskGuesses]) -> None:
    """Each mask's guesses (table and bar chart), side by side, wrapping every MASKS_PER_ROW."""
    per_row = min(len(guesses), MASKS_PER_ROW)
    for start in range(0, len(guesses), per_row):
        for column, g in zip(st.columns(per_row), guesses[start : start + per_row]):
            with column:
                title = f"Mask {g.mask_number} · token {g.position}"
                name = f"fill-mask-{g.mask_number}"
                chart(
                    bar_figure(list(g.tokens), list(g.probabilities), title, "probability"), name, key=f"chart-{name}"
                )
                table(
                    g.table(),
                    name,
                    key=f"table-{name}",
                    title=title,
                    column_config={"logit": LOGIT, "probability": PROBABILITY, mlm.LOSS_IF_RIGHT: LOSS},
                )


def _mask_words(masked: str, hidden: str) -> None:
    set_shared_text(masked)
    st.session_state["true_word"] = hidden  # the masked words become the true words to check
    st.session_state["words_to_mask"] = []  # masked now: the picker starts again from the new sentence's words


def mask_word_helper(text: str) -> None:
    """Pick words of the sentence and replace them with [MASK] (seed 000's ``word_to_mask``, seed 003's
    exercise 4); the words picked become the true words of the check, beside those already typed for its masks."""
    spans = {span.label: span for span in mlm.word_spans(text)}
    if not spans:
        st.caption("There is no word here to mask.")
        return
    if picked := st.session_state.get("words_to_mask"):  # words an edit of the sentence took away are unpicked
        st.session_state["words_to_mask"] = [label for label in picked if label in spans]
    chosen = st.multiselect(
        "Words to mask",
        list(spans),  # by label, not position: a position names another word once the sentence changes
        key="words_to_mask",  # none picked at first: a word the student picks is the only one masked
        placeholder="Pick one word, or several",
    )
    if not chosen:
        return
    typed = st.session_state.get("true_word", st.query_params.get("true_word", ""))
    masks = text.count("[MASK]")
    at_mask = st.session_state.get("at_mask", 1)  # kept (bound to the link) after a sentence with more masks
    at_mask = min(max(at_mask, 1), masks) if masks > 1 and isinstance(at_mask, int) else 1
    known, _ = mlm.true_words(typed, masks, at_mask)
    masked, hidden = mlm.mask_spans(text, [spans[label] for label in chosen], known)
    st.caption("The sentence will become:")
    st.text(masked)
    label = "Mask this word" if len(chosen) == 1 else f"Mask these {len(chosen)} words"
    st.button(label, on_click=_mask_words, args=(masked, hidden), key="mask_word")


def mask_overview_section(query: cache.Query, guesses: list[mlm.MaskGuesses], words: dict[int, str]) -> None:
    """Every mask at a glance: the top guesses, their average confidence, and the true words' checks."""
    st.header("Every mask at a glance", anchor=False)  # h2 under the page title
    checks = {number: cache.true_word(query, word, number) for number, word in words.items()}
    average = mlm.average_top_confidence(guesses)
    st.metric("Average confidence of the top guesses", percent(average, 2))  # 43.21%, and 0.0051% (not 0.01%)
    if not words:
        st.caption("Type the hidden words above, one per mask separated by commas, to see which BERT got right.")
    overview = mlm.mask_overview(guesses, words, checks)
    table(
        overview,
        "fill-mask-overview",
        key="mask_overview",
        column_config=dict.fromkeys(PROBABILITY_COLUMNS, PROBABILITY),
    )


PRETRAINING_NOTE = (
    "BERT learned to fill masks from sentences corrupted like this one (seed 001; Google's "
    "`create_pretraining_data.py`): **15 %** of the tokens are chosen ([CLS] and [SEP] never); of those, "
    "**80 %** become [MASK], **10 %** a random token, **10 %** stay as they are. BERT must give back the "
    "original at every chosen position — the kept and random ones too, so it cannot learn that only [MASK] "
    "needs predicting — and the loss pre-training minimised is the mean −log p of those originals, over the "
    "chosen positions only."
)
MAX_DRAW = 1_000_000


def _next_draw() -> None:
    st.session_state["draw"] = st.session_state.get("draw", 1) % MAX_DRAW + 1


def pretraining_shown() -> bool:
    """Whether the pre-training view is on (its switch, or a link's ``pretrain=true`` before the switch is drawn)."""
    return bool(st.session_state.get("pretrain", st.query_params.get("pretrain", "").lower() == "true"))


def pretraining_section(query: cache.Query) -> None:
    """Pre-training's own masking on the student's sentence: one reproducible draw, BERT's guesses, the loss."""
    if not st.toggle("How BERT learned this: pre-training's 15 % and 80/10/10, on this sentence", **bound("pretrain")):
        return
    st.markdown(PRETRAINING_NOTE)
    number, again = st.columns([1, 3], vertical_alignment="bottom")
    with number:
        draw = bound_int_input("Draw", "draw", 1, MAX_DRAW, default=1, help="The same draw gives the same corruption.")
    again.button("Draw again", key="draw_again", on_click=_next_draw)
    step = cache.pretraining(query, draw)
    truncation_notice(step.encoding)
    st.caption("What BERT is given:")
    st.text(" ".join(step.seen))  # literal, never Markdown
    if not step.corruption.positions:
        st.info(
            "Pre-training has nothing to choose here: it picks among the sentence's own words, never [CLS], [SEP], "
            "[PAD] or a [MASK] you typed, and this sentence has no other token. Type a sentence with words."
        )
        return
    chosen, loss = st.columns(2)
    chosen.metric("Tokens chosen", f"{len(step.corruption.positions)} of {step.corruption.candidates}")
    loss.metric("Loss of this draw (mean −log p)", f"{step.loss:.4f}")
    table(
        step.table,
        f"pretraining-draw-{draw}",
        key="pretraining_table",
        column_config={"P(original)": PROBABILITY, "loss −log p": LOSS},
    )


def true_word_view(check: mlm.TrueWordCheck | str, vocab_size: int) -> None:
    if isinstance(check, str):
        st.info(check)
        return
    if check.note:
        st.caption(literal(check.note))
    left, middle, right = st.columns(3)
    left.metric(f"P({literal(check.token)})", f"{check.probability:.4g}")
    middle.metric(f"Rank (of {vocab_size:,})", f"{check.rank:,}")
    right.metric("Loss −log p", f"{check.loss:.4f}")
    st.markdown(
        f"**What the loss means.** Pre-training taught BERT by minimising this number, the cross-entropy "
        f"−log p of the true token at each mask. Here −log({check.probability:.4g}) = {check.loss:.4f}. "
        "It is 0 only when BERT is certain of the right word (p = 1) and grows as p shrinks: "
        f"0.69 at p = 0.5, 2.30 at p = 0.1. Guessing blindly among all {vocab_size:,} tokens would give "
        f"−log(1/{vocab_size:,}) = {math.log(vocab_size):.2f}. A low loss needs the right word *and* confidence."
    )


LAYER_CAVEAT = (
    "**An approximation.** The MLM head was trained to read the *last* layer only. Applied to an earlier "
    "layer's vector it shows which words that vector already points to in the head's eyes (a \"logit lens\"), "
    'not what the model "thinks" there. Row 0 is the embeddings output (before encoder layer 0); '
    "encoder layers are numbered from 0, as on the Attention page. The last row is the page's own guesses."
)


def layer_probabilities_figure(guesses: LayerGuesses) -> go.Figure:
    """How probable each of the final top guesses (and the true word) is after every layer."""
    fig = go.Figure()
    for column, (token_id, token) in enumerate(zip(guesses.tracked_ids, guesses.tracked_tokens)):
        is_true = token_id == guesses.true_token_id
        fig.add_trace(
            go.Scatter(
                x=guesses.labels,
                y=guesses.tracked_probabilities[:, column].astype(np.float32),
                mode="lines+markers",
                name=_label(token) + (" (true word)" if is_true else ""),
                line=dict(dash="dash", width=3) if is_true else dict(width=1.5),
                hovertemplate=f"{_label(token)}<br>%{{x}}: %{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"Mask {guesses.mask_number}: probability of the final top guesses, layer by layer",
        yaxis=dict(title="probability", tickformat=SHARE_TICKS),
        xaxis=dict(title="hidden state", type="category"),
        height=440,
        margin=dict(l=10, r=10, t=50, b=10),
    )
    return fig


def rank_ticks(ranks: Sequence[int]) -> list[int] | None:
    """A rank axis's ticks, whole numbers: 1, 2, 5 × a power of ten within ``ranks``, or only the powers of ten when
    those are too many; None (plotly's own) when fewer than two fall within. plotly's own labels of a log axis read
    "3 4 … 9 10k 2 3", 3 meaning 3,000 at the top and 30,000 at the bottom, and crowded a decade's top."""
    lowest, highest = (min(ranks), max(ranks)) if ranks else (0, 0)
    within = [m * 10**e for e in range(7) for m in (1, 2, 5) if lowest <= m * 10**e <= highest]
    ticks = within if len(within) <= 6 else [tick for tick in within if str(tick).strip("0") == "1"]
    return ticks if len(ticks) >= 2 else None


def true_rank_figure(guesses: LayerGuesses) -> go.Figure:
    ranks = [] if guesses.true_ranks is None else guesses.true_ranks.tolist()
    fig = go.Figure(
        go.Scatter(
            x=guesses.labels,
            y=guesses.true_ranks,
            mode="lines+markers",
            marker_color=BAR,
            hovertemplate="%{x}: rank %{y:,}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Rank of {_label(guesses.true_token or '')} after every layer (1 = top guess)",
        yaxis=dict(
            title="rank (log scale)", type="log", autorange="reversed", tickformat=",", tickvals=rank_ticks(ranks)
        ),
        xaxis=dict(title="hidden state", type="category"),
        height=360,
        margin=dict(l=10, r=10, t=50, b=10),
    )
    return fig


def rank_in_words(guesses: LayerGuesses) -> str:
    """The rank line in words: its best (lowest) rank, not its "peak" (the worst rank, for a generic line)."""
    ranks = np.asarray(guesses.true_ranks)
    best = int(np.argmin(ranks))
    return (
        f"Rank of {guesses.true_token} after every layer: from {int(ranks[0]):,} ({guesses.labels[0]}) to "
        f"{int(ranks[-1]):,} ({guesses.labels[-1]}); best {int(ranks[best]):,} at {guesses.labels[best]}."
    )


def layer_guesses_view(guesses: LayerGuesses) -> None:
    st.info(LAYER_CAVEAT, icon=":material/info:")
    chart(layer_probabilities_figure(guesses), f"fill-mask-layers-{guesses.mask_number}", key="layer_probabilities")
    if guesses.true_ranks is not None:
        chart(
            true_rank_figure(guesses),
            f"fill-mask-true-rank-{guesses.mask_number}",
            key="layer_true_rank",
            words=rank_in_words(guesses),
        )
    else:
        st.caption("Type the original word above to follow its rank through the layers.")
    table(
        guesses.summary(),
        f"fill-mask-layers-{guesses.mask_number}",
        key="layer_summary",
        title=f"Mask {guesses.mask_number}: the top guess at each layer",
        column_config={"P(top guess)": PROBABILITY},
    )
    with st.expander("Every top-k guess of every layer"):
        table(
            guesses.long_table(),
            f"fill-mask-layers-top-k-{guesses.mask_number}",
            key="layer_long",
            title=f"Mask {guesses.mask_number}: every top-k guess of every layer",
            column_config={"probability": PROBABILITY},
        )


# ---- next-sentence views ----


def verdict_view(result: nsp.NextSentence) -> None:
    left, right = st.columns(2)
    left.metric("P(IsNext)", f"{result.p_is_next:.4f}")
    right.metric("P(NotNext)", f"{result.p_not_next:.4f}")
    (st.success if result.is_next else st.warning)(f"**Verdict:** {result.verdict}")
    is_next, not_next = result.logits
    difference = f"{is_next - not_next:+.4f}".replace("-", "−")  # a minus sign, as in the text around it
    st.caption(
        f"The NSP head reads the pooled [CLS] vector and gives two logits (raw scores): IsNext {is_next:.4f} "
        f"(index 0), NotNext {not_next:.4f} (index 1). Their softmax gives the probabilities, and only "
        f"their difference matters: IsNext − NotNext = {difference}."
    )


def segments_section(analysis: Analysis) -> None:
    """The pair's segment ids, token by token, in an expander drawn only when opened (a data grid costs
    the browser ~0.3 s per view)."""
    segments = st.expander("Segments: how BERT tells A from B (token_type_ids)", key="segments", on_change="rerun")
    if segments.open:
        with segments:
            st.caption(
                "[CLS], A's tokens and the [SEP] after A are segment 0 (A); B's tokens and the last [SEP] are "
                "segment 1 (B). A [SEP] typed in a sentence keeps that sentence's segment: BERT tells A from B by "
                "these ids."
            )
            table(nsp.segments_table(analysis), "nsp-segments", key="segments-table")


def cut_notice(table: pd.DataFrame, labels: Sequence[str], noun: str, token_limit: int) -> None:
    """Say which of the scored pairs (``labels``, as the table shows them) were cut to ``token_limit`` tokens."""
    cut = [label for label, was_cut in zip(labels, table[nsp.CUT]) if was_cut]
    if message := nsp.cut_message(cut, noun, token_limit):
        st.warning(message)


def ranking_view(ranked: pd.DataFrame, model_name: str) -> None:
    """The candidates ``model_name`` ranked."""
    limit = cache.query(model_name).max_length  # the scoring model's tokens per pair
    cut_notice(ranked, [f"rank {r}" for r in ranked["rank"]], "candidate", limit)
    labels = [f"{r}. {shortened(b, 60)}" for r, b in zip(ranked["rank"], ranked["candidate_b"])]
    chart(
        bar_figure(labels, ranked["p_is_next"].tolist(), "Candidates for B, by P(IsNext)", "P(IsNext)"), "nsp-ranking"
    )
    table(ranked, "nsp-ranking", key="ranking-table")


def evaluation_view(result: nsp.Evaluation, model_name: str) -> None:
    if result.skipped:
        st.caption(
            f"{plural(result.skipped, 'row')} without both sentences and a label {agree(result.skipped, 'was', 'were')} left out."
        )
    for column, (name, value) in zip(
        st.columns(4),
        (("Accuracy", result.accuracy), ("Precision", result.precision), ("Recall", result.recall), ("F1", result.f1)),
    ):
        column.metric(name, f"{value:.4f}")
    st.caption("IsNext is the positive class; metrics from scikit-learn (precision/recall are 0 when undefined).")
    left, right = st.columns([2, 3])
    with left:
        chart(confusion_figure(result.confusion), "nsp-confusion-matrix")
    with right:
        best = result.table.iloc[result.most_confident]
        topic = f", {literal(best[nsp.TOPIC])}" if best[nsp.TOPIC] else ""
        (st.success if best["correct"] else st.warning)(  # sure and wrong is not a success
            f"**Most confident pair** (row {best['row']}{topic}, {best['confidence']:.2%} sure, "
            f"{'correct' if best['correct'] else 'wrong'}):\n\n"
            f"A: {literal(best['sentence_a'])}\n\nB: {literal(best['sentence_b'])}"
        )
        st.caption("Confidence = the larger of P(IsNext) and P(NotNext). Sure is not the same as right.")
    rows = [f"row {i}" for i in result.table["row"]]  # as numbered in the student's table, blank rows included
    cut_notice(result.table, rows, "pair", cache.query(model_name).max_length)
    shown = result.table.assign(most_confident=lambda t: t.index == result.most_confident)
    # The verdicts before the sentences: a small table is plain HTML, whose sentence columns take the width their
    # text needs, so results after them were off a projector's page (QA).
    results = ("row", "is_next", "predicted_is_next", "correct", "p_is_next", "confidence", "most_confident", nsp.CUT)
    table(
        shown, "nsp-evaluation", key="evaluation-table", column_order=(*results, nsp.TOPIC, "sentence_a", "sentence_b")
    )
