"""Next sentence page: the verdict on a pair, candidate Bs ranked, and labelled pairs evaluated."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens import nsp
from bertlens.analysis import Analysis
from bertlens.family import ModelDescription, in_model_tokens
from bertlens.table_input import TableInputError
from bertlens.tokenization import batch_lines
from bertlens.wording import agree, blank, plural, shortened
from components.services import cache
from components.services.budgeted import lines_within_chars_budget
from components.services.settings import settings
from components.services.text import literal
from components.state.widgets import (
    DEFAULT_TEXT,
    brought_from_another_page,
    control_row,
    has_shared_text,
    linked_text,
    remembered_shared_text,
    sentence_b,
    set_shared_text,
    shared_text,
    without_repeats,
)
from components.ui.exports import chart, table
from components.ui.palette import CELL_TEXT, LIGHT_BLUES
from components.ui.predictions import bar_figure
from components.ui.uploads import read_upload, upload_id, uploaded

NSP_TABS = ("Verdict", "Ranking", "Evaluation")


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
    left, right = control_row(1, 1)
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


def order_view(result: nsp.SentenceOrder, cls_token: str) -> None:
    """ALBERT's sentence-order prediction on the pair: in order or swapped."""
    left, right = st.columns(2)
    left.metric("P(in order)", f"{result.p_in_order:.4f}")
    right.metric("P(swapped)", f"{result.p_swapped:.4f}")
    (st.success if result.in_order else st.warning)(f"**Verdict:** {result.verdict}")
    in_order, swapped = result.logits
    st.caption(
        f"ALBERT's sentence-order prediction (SOP) head reads the pooled {cls_token} vector and gives two logits: in "
        f"order {in_order:.4f} (index 0), swapped {swapped:.4f} (index 1); their softmax gives the probabilities. "
        "In pre-training, B was always the sentence that follows A, sometimes swapped with it: the head judges the "
        "order, not whether B belongs to A's text (Lan et al. 2020). *Swap A and B* to see it change."
    )


def no_is_next_scores(described: ModelDescription) -> None:
    """Ranking and evaluation score IsNext: a sentence-order head has no such score."""
    st.info(
        f"{described.why_missing('NSP')} Ranking candidate Bs and evaluating IsNext labels need an IsNext "
        "probability, which a sentence-order head does not give: see its verdict on one pair, and on it swapped."
    )


def segments_section(analysis: Analysis, described: ModelDescription) -> None:
    """The pair's segment ids, token by token, in an expander drawn only when opened (a data grid costs
    the browser ~0.3 s per view)."""
    name = described.family_name
    segments = st.expander(f"Segments: how {name} tells A from B (token_type_ids)", key="segments", on_change="rerun")
    if segments.open:
        with segments:
            st.caption(
                in_model_tokens(
                    "[CLS], A's tokens and the [SEP] after A are segment 0 (A); B's tokens and the last [SEP] are "
                    f"segment 1 (B). A [SEP] typed in a sentence keeps that sentence's segment: {name} tells A from "
                    "B by these ids.",
                    described,
                )
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
        picked = "IsNext" if best["predicted_is_next"] else "NotNext"
        (st.success if best["correct"] else st.warning)(  # a large probability and wrong is not a success
            f"**Most confident pair** (row {best['row']}{topic}: the NSP head gives {picked} {best['confidence']:.2%}, "
            f"{'correct' if best['correct'] else 'wrong'}):\n\n"
            f"A: {literal(best['sentence_a'])}\n\nB: {literal(best['sentence_b'])}"
        )
        st.caption(
            "Confidence = the larger of P(IsNext) and P(NotNext): a probability the head's softmax gives (a head with "
            "random weights gives them too), not a chance of being right."
        )
    rows = [f"row {i}" for i in result.table["row"]]  # as numbered in the student's table, blank rows included
    cut_notice(result.table, rows, "pair", cache.query(model_name).max_length)
    shown = result.table.assign(most_confident=lambda t: t.index == result.most_confident)
    # The verdicts before the sentences: a small table is plain HTML, whose sentence columns take the width their
    # text needs, so results after them were off a projector's page (QA).
    results = ("row", "is_next", "predicted_is_next", "correct", "p_is_next", "confidence", "most_confident", nsp.CUT)
    table(
        shown, "nsp-evaluation", key="evaluation-table", column_order=(*results, nsp.TOPIC, "sentence_a", "sentence_b")
    )
