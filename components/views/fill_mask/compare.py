"""Fill-mask page, Compare two sentences: each mask's guesses beside the guesses at its partner in the second sentence."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from bertlens import mlm
from bertlens.analysis import Analysis
from bertlens.compare import (
    guess_difference,
    partner_mask,
)
from bertlens.wording import blank
from components.services import cache
from components.services.budgeted import within_chars_budget
from components.services.models import cached_bundle
from components.services.text import SHARE_TICKS, chart_text
from components.state.widgets import linked_text
from components.ui.compare import FIRST, SECOND, paired_bars_figure, where_they_differ
from components.ui.exports import chart, table
from components.ui.layout import truncation_notice


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
    mask = cached_bundle(model_name).description.mask_token
    label = f"Second sentence, with {mask} (try changing one word)"
    second_text = linked_text(
        st.text_input,
        label,
        "fill_compare",
        placeholder="e.g. the same sentence with one word changed",
    )
    typed, second_text = second_text, within_chars_budget(second_text, label)
    if blank(second_text):
        st.info(
            f"Type a second sentence with a {mask} — e.g. the first with one word changed — to compare the guesses."
        )
        return
    missing = mlm.missing_mask_message(second_text, typed, mask, other_way=" in the second sentence")
    if missing:
        st.info(missing)
        return
    second = cache.cached_analysis(model_name, second_text)
    truncation_notice(second.encoding, "The second sentence", "The second pair")
    where_they_differ(analysis, second)
    if (second_number := partner_mask(analysis, second, mask_number)) is None:
        st.info(
            f"The second sentence has no {mask} in the place of mask {mask_number} (token "
            f"{analysis.mask_positions[mask_number - 1]} of the first): guesses are compared mask for mask, in the "
            f"same place. Keep the {mask} where it is and change another word."
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
