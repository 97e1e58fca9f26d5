"""What the fill-mask and next-sentence pages share: the explanation of a missing pre-training head, the probability bar chart and number formats."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from bertlens.models import ModelBundle, PretrainingHead
from bertlens.wording import significant
from components.services.text import SHARE_TICKS, chart_text, code_span
from components.ui.palette import INK

BAR = "#4c78a8"
PROBABILITY = st.column_config.NumberColumn(format="%.4g")
LOGIT = st.column_config.NumberColumn(format="%.3f")
LOSS = st.column_config.NumberColumn(format="%.4f")
HEADS: dict[PretrainingHead, tuple[str, str]] = {
    "MLM": ("masked-language-model (MLM) head", "guess the hidden word at a [MASK]"),
    "NSP": ("next-sentence-prediction (NSP) head", "tell whether sentence B follows sentence A"),
}


def no_head_explanation(bundle: ModelBundle, head: PretrainingHead) -> None:
    """Why there are no predictions here (the family's own reason when it never had the head), and how to get a
    model that has the head."""
    name, job = HEADS[head]
    described = bundle.description
    if described.family != "bert" and (reason := described.why_missing(head)):
        if head == "NSP" and (order := described.why_missing("SOP")):  # ALBERT's checkpoint without its SOP head
            reason = f"{reason} {order}"
        st.info(
            f"**No predictions with {code_span(bundle.name)}: {described.family_name} has no {name}.**\n\n"
            f"{reason}\n\nBERT itself has it: pick **bert-base-uncased** in the sidebar's **Model** menu.",
            icon=":material/block:",
        )
        return
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


def token_label(token: str) -> str:
    return chart_text(token)  # plotly reads <b>, <br>… in labels: show tokens literally


def bar_figure(labels: list[str], values: list[float], title: str, x_title: str) -> go.Figure:
    fig = go.Figure(
        go.Bar(
            x=values,
            y=[token_label(t) for t in labels],
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
