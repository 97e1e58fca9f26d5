"""Attention page, Compare: the same attention view of two sentences, tokens aligned, and where attention moved."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens.attention import matching_preset
from bertlens.compare import (
    align_tokens,
    alignment_table,
    attention_difference,
    default_second,
    pair_label,
    paired,
    paired_rows,
)
from bertlens.wording import blank
from components.services import cache
from components.services.budgeted import within_chars_budget
from components.services.text import chart_text
from components.state.widgets import linked_text
from components.ui.compare import paired_bars_figure, where_they_differ
from components.ui.exports import chart, csv_download, table
from components.ui.layout import truncation_notice
from components.views.attention.figures import Choice, default_focus, matrix_figure, token_grid_layout
from components.views.attention.sections import PageInput, matrices, token_picker

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
    query = token_picker(st.selectbox, "Follow one query token in both", page.encoding, "compare_query", focus)
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
