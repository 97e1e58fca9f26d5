"""Attention page, the views that explain how a row of the heatmap comes about and what it does not say:
one head step by step, and mask and see. (Comparing two sentences is in ``compare_views``.)"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from bertlens.attention import matching_preset, token_labels
from bertlens.influence import TOKEN_BUDGET, Influence, Mode, Watch, influence_table, rank_correlation
from bertlens.layers import hidden_state_label
from bertlens.steps import HeadSteps
from components.services import cache
from components.services.text import chart_text, literal
from components.state.widgets import lazy_tabs
from components.ui.checks import check_result
from components.ui.exports import chart, csv_download, table
from components.ui.layout import how_to_read
from components.ui.palette import INK
from components.views.attention.figures import ACCENT, Choice, default_focus
from components.views.attention.sections import PageInput, bound_choice, matrices, token_picker

MODES: dict[str, Mode] = {"Replace with [MASK]": "mask", "Delete the token": "delete"}
STEP_PARTS = ("1 · Query and keys", "2–3 · Scores and weights", "4 · Weighted values", "Every number")
SCOPES = ["One token", "Every token in turn"]  # short: the link holds the label


# --- cached results ------------------------------------------------------------------------------


# --- figures -------------------------------------------------------------------------------------


def _escaped(labels: Iterable[str]) -> list[str]:
    return [chart_text(label) for label in labels]


def _bars(x: list[str], values: np.ndarray, colour: str | list[str], name: str, hover: str) -> go.Bar:
    """One bar trace (float32 values: the figure's payload stays small)."""
    return go.Bar(x=x, y=values.astype(np.float32), marker_color=colour, name=name, hovertemplate=hover)


def query_keys_figure(steps: HeadSteps, labels: list[str]) -> go.Figure:
    """The query vector (top row) and every key vector, dimension by dimension."""
    rows = [f"q: {labels[steps.query]}", *(f"k: {label}" for label in labels)]
    z = np.vstack([steps.q[None, :], steps.keys])
    title = f"Step 1 — the query of {labels[steps.query]!r} and every key ({steps.head_size} dimensions)"
    return _vectors_figure(z, rows, line_below=0, title=title)


def _stacked_bars(top: go.Bar, bottom: go.Bar, titles: tuple[str, str], spacing: float, height: int) -> go.Figure:
    """Two bar panels over one token axis, each titled in the page's ink (a subplot title is an annotation, which
    the chart theme draws in Streamlit's 3.8:1 grey), numbers written out (plotly's SI prefixes read "200n")."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=spacing, subplot_titles=titles)
    fig.add_trace(top, row=1, col=1)
    fig.add_trace(bottom, row=2, col=1)
    fig.update_layout(height=height, showlegend=False, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_annotations(font_color=INK)
    fig.update_xaxes(tickangle=-60, nticks=60, type="category")
    fig.update_yaxes(exponentformat="e")
    return fig


def scores_figure(steps: HeadSteps, labels: list[str]) -> go.Figure:
    """q·k/√d + mask term for every key (top) and the softmax of them (bottom): one row of the heatmap."""
    x = _escaped(labels)
    return _stacked_bars(
        _bars(x, steps.scaled + steps.mask_term, "#7f7f7f", "score", "key %{x}: score %{y:.4f}<extra></extra>"),
        _bars(x, steps.weights, "#1f77b4", "weight", "key %{x}: weight %{y:.6f}<extra></extra>"),
        ("Step 2 — score q·k / √d + mask term", "Step 3 — softmax: the attention weights"),
        spacing=0.08,
        height=560,
    )


def values_figure(steps: HeadSteps, labels: list[str]) -> go.Figure:
    """Each value vector times its weight, and their sum: the head's output for the query."""
    weighted = steps.weights[:, None] * steps.values
    rows = [f"{w:.3f} · v: {label}" for w, label in zip(steps.weights, labels)] + [f"= output of {labels[steps.query]}"]
    z = np.vstack([weighted, steps.output[None, :]])
    return _vectors_figure(
        z, rows, line_below=len(rows) - 2, title="Step 4 — weight × value for every key, summed: the head's output"
    )


def _vectors_figure(z: np.ndarray, rows: list[str], line_below: int, title: str) -> go.Figure:
    """One head's vectors as rows of a heatmap (dimension by dimension), a line under row ``line_below``."""
    fig = go.Figure(
        go.Heatmap(
            z=z.astype(np.float32),
            y=_escaped(rows),
            x=list(range(z.shape[1])),
            colorscale="RdBu",
            zmid=0,
            colorbar=dict(title="value"),
            hovertemplate="%{y}<br>dimension %{x}: %{z:.4f}<extra></extra>",
        )
    )
    fig.add_hline(y=line_below + 0.5, line=dict(color=ACCENT, width=2))
    fig.update_layout(
        title=title,
        height=int(np.clip(18 * len(rows) + 120, 300, 900)),
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis_title="dimension of the head",
        yaxis=dict(autorange="reversed", type="category", nticks=60),
    )
    return fig


def influence_figure(
    labels: list[str], received: np.ndarray, effect: np.ndarray, effect_label: str, title: str
) -> go.Figure:
    """Attention received (top) against what masking the token changes (bottom), token by token."""
    x = _escaped(labels)
    return _stacked_bars(
        _bars(x, received, "#1f77b4", "attention", "%{x}: attention %{y:.6f}<extra></extra>"),
        _bars(x, effect, ACCENT, "influence", "%{x}: %{y:.6f}<extra></extra>"),
        (f"Attention received — {title}", f"Influence: {effect_label}"),
        spacing=0.1,
        height=520,
    )


def hidden_token_figure(labels: list[str], received: np.ndarray, hidden: int, title: str) -> go.Figure:
    """The attention every hideable token received; the hidden one (index ``hidden``) is named so and coloured."""
    colours = ["#1f77b4"] * len(labels)
    colours[hidden] = ACCENT
    named = [f"{label} (hidden)" if i == hidden else label for i, label in enumerate(labels)]
    fig = go.Figure(_bars(_escaped(named), received, colours, "attention", "%{x}: attention %{y:.6f}<extra></extra>"))
    fig.update_layout(
        title=f"Attention received — {title}",
        height=360,
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
    )
    fig.update_xaxes(tickangle=-60, nticks=60, type="category")
    return fig


# --- sections ------------------------------------------------------------------------------------


def single_head_only(choice: Choice) -> bool:
    if choice.view == "rollout":  # its averaging switch is greyed out: rollout always averages the heads
        st.info("This view follows one head: set **Show** to Raw attention (rollout mixes every head).")
        return False
    if choice.mean:
        st.info("This view follows one head: turn off averaging the heads.")
        return False
    return True


def head_steps_section(page: PageInput, choice: Choice) -> None:
    if not single_head_only(choice):
        return
    encoding = page.encoding
    labels = list(token_labels(encoding))
    shown = [literal(label) for label in labels]  # tokens come from user text: never live Markdown
    matrix = page.analysis.attentions[choice.layer, choice.head]
    focus, _ = default_focus(encoding, matching_preset(page.text, page.text_b), matrix)
    query = token_picker(st.selectbox, "Query token (the heatmap row to follow)", encoding, "step_query", focus)
    steps = cache.steps_of_head(page.query, choice.layer, choice.head, query)
    d = steps.head_size
    st.markdown(
        f"How **encoder layer {choice.layer}, head {choice.head}** computes the row of **{shown[query]}**, with the "
        "real numbers, one step at a time:"
    )
    how_to_read(
        label="How the head computes it",
        text=f"The head's input is every token's vector as it enters the layer: {hidden_state_label(choice.layer)}, "
        f"`hidden_states[{choice.layer}]`. The head keeps its own {d} of the {d * page.analysis.attentions.shape[1]} "
        "dimensions of the query, key and value projections:\n"
        f"1. query **q** = the head's slice of `W_Q·x + b` for {shown[query]}; a key **k** for every token (`W_K`);\n"
        f"2. a score per key: q·k / √{d} (= {np.sqrt(d):.3f}), plus the attention-mask term "
        "(0 for every real token; a padding token would get a huge negative number);\n"
        "3. softmax over the scores: the weights, one row of the heatmap;\n"
        "4. the weighted sum of the value vectors **v** (`W_V`): the head's output for this token (the heads' "
        "outputs are then joined, projected by `W_O`, added to the token's vector entering the layer and normalised: "
        "LayerNorm).\n\nLayers and heads are numbered from 0.",
    )
    check_result("softmax by hand vs the model's attention weights (output_attentions)", steps.max_abs_difference)
    best = int(np.argmax(steps.weights))
    st.caption(
        f"For example, key {shown[best]}: q·k = {steps.dot[best]:.4f}; ÷ √{d} → {steps.scaled[best]:.4f}; "
        f"+ mask term {steps.mask_term[best]:g}; softmax → {steps.weights[best]:.4f}, the largest weight of the row."
    )
    slug = f"layer{choice.layer}-head{choice.head}-query{query}"
    # One step at a time (a tab each, in the link): the four stacked were 3,600 px, a projector shows 720.
    keys, scores, values, numbers = lazy_tabs(STEP_PARTS, "step_part")
    for tab, figure, name, key in (
        (keys, query_keys_figure, "query-keys", "step_qk"),
        (scores, scores_figure, "scores", "step_scores"),
        (values, values_figure, "values", "step_values"),
    ):
        if tab.open:
            with tab:
                chart(figure(steps, labels), f"step-{name}-{slug}", key=key)
    if numbers.open:
        with numbers:
            table(
                steps.table(encoding.tokens),
                f"step-{slug}",
                key="step_table",
                title=f"Each key's steps for the query {labels[query]!r}, encoder layer {choice.layer}, head {choice.head}",
            )
    csv_download(lambda: steps.vectors(encoding.tokens), f"step-vectors-{slug}", label="Download every vector (CSV)")


def _watched_words(seen: Watch, labels: list[str]) -> tuple[str, str]:
    """(what is watched, whose attention is set beside it), in words."""
    if seen.measure == "guess":
        assert seen.observer is not None  # a guess is watched at its [MASK]
        return f"BERT's guesses at the {labels[seen.observer]} token", f"attention from {labels[seen.observer]}"
    if seen.measure == "verdict":
        return "the next-sentence verdict P(IsNext), read from [CLS]", f"attention from {labels[0]}"
    if seen.measure == "order":
        return f"the sentence-order verdict P(in order), read from {labels[0]}", f"attention from {labels[0]}"
    return (
        "every other token's last hidden state (a [MASK] would have its guesses watched, and a sentence B the "
        "next-sentence verdict, where this model has those heads)",
        "mean attention from the other tokens",
    )


def mask_and_see_section(page: PageInput, choice: Choice, heads: int) -> None:
    encoding = page.encoding
    mode = MODES[bound_choice(st.radio, "Hide the token by", list(MODES), "see_mode", horizontal=True)]
    seen = cache.influence_watch(page.query, mode)
    labels = [literal(label) for label in token_labels(encoding)]  # for Markdown; the figures escape their own
    watched, received_from = _watched_words(seen, labels)
    shown = choice.title(heads)  # "Encoder layer 2, head 5", "…, mean of 12 heads", "Rollout through encoder layer 2 …"
    st.markdown(
        f"**Attention is not explanation.** Hide a token and see what happens to {watched}, next to the attention "
        f"that token received ({received_from}) in {shown[0].lower()}{shown[1:]}. High attention and high influence are "
        "different things."
    )
    if not seen.hideable:
        st.info("There is no token here to hide (only special tokens, or only the watched one).")
        return
    matrix = matrices(page, choice)[choice.layer]
    received = seen.attention_received(matrix)
    scope = bound_choice(
        st.radio, "Hide", SCOPES, "see_scope", horizontal=True,
        help="Every token in turn runs one batched pass of every variant: slower, so only on request.",
    )  # fmt: skip
    hide = None
    if scope == SCOPES[0]:
        hide = token_picker(
            st.selectbox,
            "Token to hide (one more pass each)",
            encoding,
            "see_token",
            seen.hideable[int(np.argmax(received))],  # the token the watched one attends to most here
            positions=list(seen.hideable),
            offered="a token of this input that can be hidden (not a special token, nor the watched one)",
        )
    influence = cache.influence(page.query, mode, hide)
    slug = f"mask-and-see-{choice.slug()}-{influence.mode}"
    title = choice.title(heads)
    plain = token_labels(encoding)
    tested_received = seen.attention_received(matrix, influence.tested)
    if hide is None:
        every_token_view(influence, tested_received, [plain[i] for i in influence.tested], title, slug)
    else:
        hideable_labels = [plain[i] for i in seen.hideable]
        one_token_view(influence, seen, received, labels, hideable_labels, title, f"{slug}-{hide}")
    table(
        influence_table(influence, encoding.tokens, tested_received),
        slug,
        key="mask_and_see_table",
        title=f"Mask and see — {title}",
    )


def one_token_view(
    influence: Influence,
    seen: Watch,
    received: np.ndarray,
    labels: list[str],
    hideable_labels: list[str],
    title: str,
    filename: str,
) -> None:
    """One hidden token: what changed, and where its attention stands among every hideable token."""
    (hidden,), (effect,), (after,) = influence.tested, influence.effect, influence.after
    index = seen.hideable.index(hidden)
    rank = 1 + int((received > received[index]).sum())
    change = {
        "guess": f"the top guess goes from **{literal(influence.before)}** to **{literal(after)}**",
        "verdict": f"P(IsNext) goes from **{influence.before}** to **{after}**",
        "order": f"P(in order) goes from **{influence.before}** to **{after}**",
        "vectors": f"the token that moves most is {literal(after)}",
    }[influence.measure]
    st.markdown(
        f"Hiding {labels[hidden]}: {change}; {influence.effect_label} = **{effect:.4f}**. It received "
        f"**{received[index]:.4f}** of the attention here, rank {rank} of {len(received)}. Pick other tokens, "
        "or hide every token in turn to see each one's influence beside its attention."
    )
    chart(hidden_token_figure(hideable_labels, received, index, title), filename, key="mask_and_see")


def every_token_view(
    influence: Influence, received: np.ndarray, tested_labels: list[str], title: str, slug: str
) -> None:
    """Every token hidden in turn: attention received against influence, token by token."""
    if len(influence.tested) < influence.candidates:
        st.warning(
            f"To keep one click affordable, {len(influence.tested)} of the {influence.candidates} tokens were tested "
            f"(at most {TOKEN_BUDGET:,} token positions per batch): those nearest the watched token (or the start). "
            "Shorten the text to test all."
        )
    fig = influence_figure(tested_labels, received, influence.effect, influence.effect_label, title)
    chart(fig, slug, key="mask_and_see")
    rho = rank_correlation(received, influence.effect)
    if rho is not None:
        st.caption(
            f"Rank correlation (Spearman) between attention received and influence here: {rho:+.2f} "
            "(+1 = the same order, 0 = unrelated). Try other heads: the influence stays, the attention changes."
        )
