"""Two sentences side by side, what Attention's and Fill-mask's comparisons share: the pair's colours, paired bars, and where the two sentences' tokens differ.

The second sentence lives in the URL (``compare`` on the Attention page, ``fill_compare`` on Fill-mask) and costs one forward pass of its own (cached like the first)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from bertlens.analysis import Analysis
from bertlens.compare import (
    align_tokens,
    paired_rows,
    unaligned_note,
)
from components.services.text import SHARE_TICKS, chart_text, literal

FIRST, SECOND = "#1f77b4", "#ff7f0e"


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
