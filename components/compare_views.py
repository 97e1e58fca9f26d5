"""Two sentences side by side (Attention and Fill-mask): the same view of each, tokens aligned, and where
attention or the guesses moved. The second sentence lives in the URL (``compare`` on the Attention page,
``fill_compare`` on Fill-mask) and costs one forward pass of its own (cached like the first)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens import mlm
from bertlens.analysis import Analysis
from bertlens.attention import matching_preset
from bertlens.compare import (
    align_tokens,
    alignment_table,
    attention_difference,
    default_second,
    guess_difference,
    pair_label,
    paired,
    paired_rows,
    partner_mask,
    unaligned_note,
)
from bertlens.wording import blank
from components import cache
from components.attention_figures import Choice, default_focus, matrix_figure, token_grid_layout
from components.attention_views import PageInput, _token_picker, matrices
from components.exports import chart, csv_download, table
from components.layout import truncation_notice
from components.model import cached_bundle
from components.state import linked_text, within_chars_budget
from components.text import SHARE_TICKS, chart_text, literal

FIRST, SECOND = "#1f77b4", "#ff7f0e"
BIGGEST_MOVES = 15


def difference_figure(diff: np.ndarray, labels: list[str], title: str) -> go.Figure:
    """second − first over the paired tokens: red where attention grew, blue where it shrank."""
    limit = float(np.abs(diff).max()) or 1.0
    escaped = [chart_text(label) for label in labels]
    fig = go.Figure(
        go.Heatmap(
            z=diff.astype(np.float32),
            x=escaped,
            y=escaped,
            colorscale="RdBu_r",
            zmid=0,
            zmin=-limit,
            zmax=limit,
            colorbar=dict(title="second − first", exponentformat="e"),  # 5e-04, not the SI "500μ"
            hovertemplate="query %{y}<br>key %{x}<br>change %{z:+.6f}<extra></extra>",
        )
    )
    token_grid_layout(fig, title, len(labels), "key", "query")
    return fig


def paired_bars_figure(
    labels: list[str], first: np.ndarray, second: np.ndarray, title: str, y_title: str, horizontal: bool = False
) -> go.Figure:
    """The same quantity for both sentences, bar beside bar."""
    escaped = [chart_text(label) for label in labels]
    bars = []
    for name, values, color in (("first sentence", first, FIRST), ("second sentence", second, SECOND)):
        values = np.asarray(values, dtype=np.float32)
        axes = dict(y=escaped, x=values, orientation="h") if horizontal else dict(x=escaped, y=values)
        bars.append(
            go.Bar(
                name=name,
                marker_color=color,
                hovertemplate="%{"
                + ("y" if horizontal else "x")
                + "}: %{"
                + ("x" if horizontal else "y")
                + ":.6f}<extra>"
                + name
                + "</extra>",
                **axes,
            )
        )
    fig = go.Figure(bars)
    fig.update_layout(
        title=title,
        barmode="group",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
        height=120 + 26 * len(labels) if horizontal else 420,
    )
    values_axis = dict(title=y_title, tickformat=SHARE_TICKS)  # probabilities or attention weights
    if horizontal:
        fig.update_layout(xaxis=values_axis, yaxis=dict(autorange="reversed", type="category"))
    else:
        fig.update_layout(yaxis=values_axis, xaxis=dict(tickangle=-60, nticks=60, type="category"))
    return fig


def where_they_differ(first: Analysis, second: Analysis) -> None:
    """Name the tokens that changed, and those that could not be paired."""
    tokens_a, tokens_b = first.encoding.tokens, second.encoding.tokens
    alignment = align_tokens(tokens_a, tokens_b)
    changed = [
        f"{tokens_a[a]} → {tokens_b[b]}" for a, b in zip(*paired_rows([r for r in alignment if r.status == "changed"]))
    ]
    if changed:
        st.caption("Changed tokens (position by position): " + literal(", ".join(changed)))
    note = unaligned_note(alignment, tokens_a, tokens_b)
    if note:
        st.caption(literal(note))
    if not changed and not note:
        st.caption("The two sentences have the same tokens.")


def biggest_moves(diff: np.ndarray, labels: list[str], first: np.ndarray, second: np.ndarray) -> pd.DataFrame:
    order = np.argsort(-np.abs(diff), axis=None, kind="stable")[:BIGGEST_MOVES]
    rows, columns = np.unravel_index(order, diff.shape)
    return pd.DataFrame(
        {
            "query": [labels[r] for r in rows],
            "key": [labels[c] for c in columns],
            "first": first[rows, columns],
            "second": second[rows, columns],
            "change": diff[rows, columns],
        }
    )


# --- Attention -----------------------------------------------------------------------------------


def attention_compare_section(page: PageInput, choice: Choice, heads: int) -> None:
    label = "Second sentence (try changing one word)"
    second_text = linked_text(
        st.text_input,
        label,
        "compare",
        default_second(page.query.text),
        help="Compared with the sentence above at the same layer and head. A sentence B, if set, pairs with both.",
    )
    second_text = within_chars_budget(second_text, label)
    if blank(second_text):
        st.info("Type a second sentence to compare with the first.")
        return
    second_query = page.query.with_text(second_text)
    second = PageInput(second_query, cache.analysis(second_query))
    truncation_notice(second.encoding, "The second sentence", "The second pair")
    tokens_a, tokens_b = page.encoding.tokens, second.encoding.tokens
    first_matrix, second_matrix = (matrices(p, choice)[choice.layer] for p in (page, second))
    title = choice.title(heads)
    left, right = st.columns(2)
    with left:
        chart(
            matrix_figure(first_matrix, page.encoding, f"First — {title}"),
            f"compare-first-{choice.slug()}",
            key="compare_first",
        )
    with right:
        chart(
            matrix_figure(second_matrix, second.encoding, f"Second — {title}"),
            f"compare-second-{choice.slug()}",
            key="compare_second",
        )
    where_they_differ(page.analysis, second.analysis)
    alignment = align_tokens(tokens_a, tokens_b)
    pairs = paired(alignment)
    labels = [pair_label(r, tokens_a, tokens_b) for r in pairs]
    rows_a, rows_b = paired_rows(alignment)
    diff = attention_difference(first_matrix, second_matrix, alignment)
    chart(
        difference_figure(diff, labels, f"Where attention moved (second − first) — {title}"),
        f"compare-difference-{choice.slug()}",
        key="compare_difference",
    )
    st.caption(
        "Rows and columns are the paired tokens, labelled by their position in the first sentence "
        "(a changed token shows first→second)."
    )

    focus, _ = default_focus(page.encoding, matching_preset(page.text, page.text_b), first_matrix)
    partnered = [i for i in rows_a if page.encoding.sequence_ids[i] is not None]  # text tokens both sentences have
    if focus not in partnered and partnered:
        focus = partnered[0]  # by default, a token both sentences have
    query = _token_picker(st.selectbox, "Follow one query token in both", page.encoding, "compare_query", focus)
    partner = next((r for r in pairs if r.first == query), None)
    if not partnered:
        st.info(
            "No token of your sentence has a partner in the second one: make the second sentence a variant of the "
            "first (change one word) to follow a token in both."
        )
    elif partner is None:
        st.info("That token has no partner in the second sentence; pick another.")
    else:
        fig = paired_bars_figure(
            labels,
            first_matrix[query, rows_a],
            second_matrix[partner.second, rows_b],
            f"Where {pair_label(partner, tokens_a, tokens_b)!r} looks in each sentence — {title}",
            "attention weight",
        )
        chart(fig, f"compare-row-{choice.slug()}", key="compare_row")
    moved = biggest_moves(diff, labels, first_matrix[np.ix_(rows_a, rows_a)], second_matrix[np.ix_(rows_b, rows_b)])
    st.markdown(f"**The {len(moved)} biggest moves**")
    table(
        moved,
        f"compare-biggest-moves-{choice.slug()}",
        key="compare_moves",
        title=f"The {len(moved)} biggest moves — {title}",
    )
    csv_download(
        lambda: pd.DataFrame(diff, columns=labels).assign(query=labels)[["query", *labels]],
        f"compare-difference-{choice.slug()}",
        label="Download the whole difference (CSV)",
    )
    with st.expander("How the tokens were paired"):
        table(alignment_table(alignment, tokens_a, tokens_b), "compare-alignment", key="compare_alignment")


# --- Fill-mask -----------------------------------------------------------------------------------


def _start_from(text: str) -> None:
    st.session_state["fill_compare"] = text


def fill_mask_compare_section(model_name: str, text: str, analysis: Analysis, k: int, mask_number: int) -> None:
    st.button(
        "Start from the sentence above",
        on_click=_start_from,
        args=(text,),
        key="fill_compare_copy",
        help="Copy the sentence into the box below, then change one word.",
    )
    label = "Second sentence, with [MASK] (try changing one word)"
    second_text = linked_text(
        st.text_input,
        label,
        "fill_compare",
        placeholder="e.g. the same sentence with one word changed",
    )
    typed, second_text = second_text, within_chars_budget(second_text, label)
    if blank(second_text):
        st.info("Type a second sentence with a [MASK] — e.g. the first with one word changed — to compare the guesses.")
        return
    missing = mlm.missing_mask_message(second_text, typed, other_way=" in the second sentence")
    if missing:
        st.info(missing)
        return
    second = cache.cached_analysis(model_name, second_text)
    truncation_notice(second.encoding, "The second sentence", "The second pair")
    where_they_differ(analysis, second)
    if (second_number := partner_mask(analysis, second, mask_number)) is None:
        st.info(
            f"The second sentence has no [MASK] in the place of mask {mask_number} (token "
            f"{analysis.mask_positions[mask_number - 1]} of the first): guesses are compared mask for mask, in the "
            "same place. Keep the [MASK] where it is and change another word."
        )
        return
    if second_number != mask_number:
        st.caption(f"Mask {mask_number} of the first sentence is in the place of mask {second_number} of the second.")
    tokenizer = cached_bundle(model_name).tokenizer
    firsts = mlm.top_k_guesses(analysis, tokenizer, k)[mask_number - 1]
    seconds = mlm.top_k_guesses(second, tokenizer, k)[second_number - 1]
    left, right = st.columns(2)
    for column, name, guesses, color, number in (
        (left, "first", firsts, FIRST, mask_number),
        (right, "second", seconds, SECOND, second_number),
    ):
        with column:
            fig = go.Figure(
                go.Bar(
                    x=list(guesses.probabilities),
                    y=[chart_text(t) for t in guesses.tokens],
                    orientation="h",
                    marker_color=color,
                    hovertemplate="%{y}: %{x:.4g}<extra></extra>",
                )
            )
            fig.update_layout(
                title=f"{name.capitalize()} sentence — mask {number}",
                height=120 + 22 * k,
                xaxis=dict(title="probability", tickformat=SHARE_TICKS),
                yaxis=dict(autorange="reversed", type="category"),
                margin=dict(l=10, r=10, t=50, b=40),
            )
            chart(fig, f"fill-mask-compare-{name}", key=f"fill_compare_{name}")
    moved = guess_difference(analysis, second, mask_number, tokenizer, k, second_number)
    fig = paired_bars_figure(
        moved["token"].tolist(),
        moved["P (first)"].to_numpy(),
        moved["P (second)"].to_numpy(),
        f"Where the guesses at mask {mask_number}{'' if second_number == mask_number else f' (the second: {second_number})'}"
        " moved (largest change first)",
        "probability",
        horizontal=True,
    )
    chart(fig, "fill-mask-compare-difference", key="fill_compare_difference")
    st.caption(
        "Every token in either top-k, with its probability and rank (of the whole vocabulary) in both sentences."
    )
    table(moved, "fill-mask-compare", key="fill_compare_table")
