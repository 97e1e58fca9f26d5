"""Attention page: cached derived results, plotly figures and the page's sections.

Figures are built from numpy (``*_figure``), so the page and the payload benchmark
(``page_payload``) draw exactly the same thing. Sections read URL-bound widgets and draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from bertlens.analysis import Analysis, Encoding
from bertlens.attention import (
    PATTERNS,
    PRESETS,
    STATISTIC_BY_KEY,
    STATISTICS,
    VIEWS,
    Preset,
    View,
    find_head,
    focus_across_layers,
    head_statistics,
    matching_preset,
    layer_stack,
    mosaic,
    preset_focus,
    rollout,
    sentence_b_start,
    statistics_table,
    strongest_targets,
    thumbnail_size,
    token_labels,
)
from bertlens.layers import encoder_layer_label
from bertlens.models import ModelBundle
from components.exports import chart, csv_download, table
from components.model import active_model_name, cached_analysis, cached_bundle
from components.params import bound
from components.state import bound_int_slider, lazy_tabs, set_shared_text, warn_bad_param

COLORS = "Blues"
ACCENT = "#d62728"
MAX_HEAD_VIEW_SEGMENTS = 1500  # lines drawn in the head view when no token is focused
MIN_LINE_WEIGHT = 0.02
TABS = ("Heatmap", "Head view", "All heads", "Head statistics", "Token focus", "Step by step", "Compare", "Mask and see")
CAVEAT = (
    "Attention is not explanation: a weight says where a token looks, not why the model decides "
    "(seed 000: *attention ≠ explanation*). Rollout (Abnar & Zuidema, 2020) follows attention "
    "through the layers, counting the residual connection as attention to oneself; it is an "
    "approximation too."
)


# --- what is selected ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """The matrix on screen: layer, head (or the layer's mean), raw attention or rollout."""

    layer: int = 0
    head: int = 0
    mean: bool = False
    view: View = "raw"

    @property
    def head_or_mean(self) -> int | None:
        return None if self.mean else self.head

    def title(self, heads: int) -> str:
        if self.view == "rollout":
            return f"Rollout through encoder layer {self.layer} (all heads)"
        return f"Encoder layer {self.layer}, " + (f"mean of {heads} heads" if self.mean else f"head {self.head}")

    def slug(self) -> str:
        if self.view == "rollout":
            return f"rollout-layer{self.layer}"
        return f"layer{self.layer}-" + ("mean" if self.mean else f"head{self.head}")


@dataclass(frozen=True)
class PageInput:
    model_name: str
    text: str
    text_b: str
    analysis: Analysis

    @property
    def encoding(self) -> Encoding:
        return self.analysis.encoding


# --- cached derived results (keyed by primitives; the forward pass itself is cached_analysis) ----


@st.cache_data(max_entries=16, show_spinner="Computing head statistics…")
def cached_statistics(model_name: str, text: str, text_b: str) -> dict[str, np.ndarray]:
    analysis = cached_analysis(model_name, text, text_b)
    return head_statistics(analysis.attentions, analysis.encoding)


@st.cache_data(max_entries=4, show_spinner="Rolling attention out through the layers…")
def cached_rollout(model_name: str, text: str, text_b: str) -> np.ndarray:
    return rollout(cached_analysis(model_name, text, text_b).attentions)


@st.cache_data(max_entries=8, show_spinner="Drawing thumbnails…")
def cached_mosaic(model_name: str, text: str, text_b: str, size: int) -> np.ndarray:
    return mosaic(cached_analysis(model_name, text, text_b).attentions, size)


def matrices(page: PageInput, choice: Choice) -> np.ndarray:
    """(layers, query, key): what ``choice`` shows at every layer."""
    if choice.view == "rollout":
        return cached_rollout(page.model_name, page.text, page.text_b)
    return layer_stack(page.analysis.attentions, choice.head_or_mean)


# --- figures -------------------------------------------------------------------------------------


def _mark_segments(fig: go.Figure, encoding: Encoding, rows: bool = True, columns: bool = True) -> None:
    """Dashed lines where sentence B starts (on category axes, position i sits at i)."""
    start = sentence_b_start(encoding)
    if start is None:
        return
    line = dict(color=ACCENT, dash="dash", width=1.5)
    if columns:
        fig.add_vline(x=start - 0.5, line=line, annotation_text="sentence B →", annotation_position="top right")
    if rows:
        fig.add_hline(y=start - 0.5, line=line)


def matrix_figure(matrix: np.ndarray, encoding: Encoding, title: str) -> go.Figure:
    """Heatmap: queries on rows, keys on columns, the exact weight on hover."""
    labels = list(token_labels(encoding))
    fig = go.Figure(
        go.Heatmap(
            z=np.asarray(matrix, dtype=np.float32),
            x=labels,
            y=labels,
            colorscale=COLORS,
            zmin=0.0,
            zmax=float(matrix.max()),
            colorbar=dict(title="weight"),
            hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.6f}<extra></extra>",
        )
    )
    side = int(np.clip(16 * len(labels) + 180, 420, 900))
    fig.update_layout(
        title=title,
        height=side,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title="key (attended to)", tickangle=-60, nticks=60),
        yaxis=dict(title="query (attending)", autorange="reversed", nticks=60),
    )
    _mark_segments(fig, encoding)
    return fig


def lines_per_row(n: int) -> int:
    """How many lines each token gets in the head view when no token is focused."""
    return max(1, min(n, MAX_HEAD_VIEW_SEGMENTS // n))


def _line_segments(matrix: np.ndarray, focus: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(queries, keys, weights) of the lines: every line of ``focus``, else each row's strongest
    ``lines_per_row`` of at least MIN_LINE_WEIGHT."""
    n = matrix.shape[0]
    if focus is not None:
        keys = np.flatnonzero(matrix[focus] > 0)
        return np.full(keys.shape, focus), keys, matrix[focus, keys]
    keys = np.argsort(-matrix, axis=1, kind="stable")[:, : lines_per_row(n)]
    weights = np.take_along_axis(matrix, keys, axis=1)
    queries = np.broadcast_to(np.arange(n)[:, None], keys.shape)
    strong = weights >= MIN_LINE_WEIGHT
    return queries[strong], keys[strong], weights[strong]


def head_view_figure(matrix: np.ndarray, encoding: Encoding, focus: int | None, title: str) -> go.Figure:
    """bertviz's head view: each token (left) linked to the tokens it attends to (right)."""
    labels = token_labels(encoding)
    n = len(labels)
    fig = go.Figure()
    levels = (0.0, 0.1, 0.25, 0.5, 0.75)  # weight bands: one trace each, darker and thicker
    queries, keys, weights = _line_segments(matrix, focus)
    for band, low in enumerate(levels):
        high = levels[band + 1] if band + 1 < len(levels) else 1.01
        xs, ys = [], []
        for q, k in zip(*(a[(weights >= low) & (weights < high)].tolist() for a in (queries, keys))):
            xs += [0, 1, None]
            ys += [q, k, None]
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=dict(width=1 + 1.5 * band, color=f"rgba(31,119,180,{0.2 + 0.2 * band:.1f})"),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
    tokens = list(encoding.tokens)
    for side, x, position in (("query", 0, "middle left"), ("key", 1, "middle right")):
        fig.add_trace(
            go.Scatter(
                x=np.full(n, x),
                y=np.arange(n),
                mode="markers+text",
                text=tokens,
                textposition=position,
                marker=dict(size=9, color="#555", opacity=0.6),
                customdata=np.arange(n),
                hovertemplate=f"{side} %{{customdata}}: %{{text}}<extra></extra>",
                showlegend=False,
            )
        )
    if focus is not None:
        fig.add_trace(
            go.Scatter(
                x=[0],
                y=[focus],
                mode="markers+text",
                text=[tokens[focus]],
                textposition="middle left",
                textfont=dict(color=ACCENT),
                marker=dict(size=9, color=ACCENT),
                hoverinfo="skip",
                showlegend=False,
            )
        )
    start = sentence_b_start(encoding)
    if start is not None:
        fig.add_hline(y=start - 0.5, line=dict(color=ACCENT, dash="dash", width=1.5))
    fig.update_layout(
        title=title,
        height=max(300, 18 * n + 90),
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(visible=False, range=[-1.2, 2.2], fixedrange=True),
        yaxis=dict(visible=False, range=[n - 0.5, -0.5]),
        clickmode="event+select",
    )
    return fig


def _add_head_picker(fig: go.Figure, x_of, y_of, layers: int, heads: int, selected: tuple[int, int] | None) -> None:
    """Invisible clickable points, one per head (plotly selects points, not heatmap cells)."""
    grid = [(layer, head) for layer in range(layers) for head in range(heads)]
    fig.add_trace(
        go.Scatter(
            x=[x_of(h) for _, h in grid],
            y=[y_of(layer) for layer, _ in grid],
            mode="markers",
            marker=dict(size=26, symbol="square", color="rgba(0,0,0,0)"),
            customdata=grid,
            hovertemplate="layer %{customdata[0]}, head %{customdata[1]}<extra>click to select</extra>",
            showlegend=False,
        )
    )
    if selected is not None:
        layer, head = selected
        x, y = x_of(head), y_of(layer)
        half_x, half_y = (x_of(1) - x_of(0)) / 2, (y_of(1) - y_of(0)) / 2
        fig.add_shape(
            type="rect", x0=x - half_x, x1=x + half_x, y0=y - half_y, y1=y + half_y, line=dict(color=ACCENT, width=3)
        )
    fig.update_layout(clickmode="event+select", dragmode=False)


def overview_figure(grid: np.ndarray, size: int, layers: int, heads: int, selected: tuple[int, int] | None) -> go.Figure:
    """All layers × heads as thumbnails (bertviz's model view); click one to select it."""
    step = size + 1
    center = (size - 1) / 2
    fig = go.Figure(go.Heatmap(z=grid, colorscale=COLORS, zmin=0.0, zmax=1.0, showscale=False, hoverinfo="skip"))
    _add_head_picker(fig, lambda h: h * step + center, lambda layer: layer * step + center, layers, heads, selected)
    fig.update_layout(
        height=int(70 + layers * 620 / max(layers, heads)),
        margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(
            title="head", side="top", tickvals=[h * step + center for h in range(heads)], ticktext=list(range(heads))
        ),
        yaxis=dict(
            title="layer",
            autorange="reversed",
            scaleanchor="x",
            tickvals=[layer * step + center for layer in range(layers)],
            ticktext=list(range(layers)),
        ),
    )
    return fig


def statistics_figure(values: np.ndarray, statistic: str, selected: tuple[int, int] | None) -> go.Figure:
    """One statistic for every head: layers × heads, click a cell to select that head."""
    layers, heads = values.shape
    label = STATISTIC_BY_KEY[statistic].label
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=list(range(heads)),
            y=list(range(layers)),
            colorscale=COLORS,
            colorbar=dict(title=label),
            texttemplate="%{z:.2f}",
            hovertemplate=f"layer %{{y}}, head %{{x}}<br>{label}: %{{z:.4f}}<extra></extra>",
        )
    )
    _add_head_picker(fig, float, float, layers, heads, selected)
    fig.update_layout(
        title=f"{label} — every head",
        height=int(80 + 40 * layers),
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="head", dtick=1, range=[-0.5, heads - 0.5]),
        yaxis=dict(title="layer", dtick=1, range=[layers - 0.5, -0.5]),
    )
    return fig


def focus_row_figure(row: np.ndarray, encoding: Encoding, token: int, targets: list[int], title: str) -> go.Figure:
    labels = list(token_labels(encoding))
    kind = np.zeros(len(labels))  # 0 = other token, 1 = the focused token, 2 = a target
    kind[token], kind[list(targets)] = 1, 2
    palette = [[0, "#1f77b4"], [0.5, "#555"], [1, ACCENT]]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=np.asarray(row, dtype=np.float32),
            marker=dict(color=kind, colorscale=palette, cmin=0, cmax=2),
            hovertemplate="%{x}: %{y:.6f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Where {labels[token]!r} looks — {title}",
        height=380,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="key", tickangle=-60, nticks=60),
        yaxis=dict(title="attention weight"),
    )
    _mark_segments(fig, encoding, rows=False)
    return fig


def focus_layers_figure(values: np.ndarray, encoding: Encoding, token: int, targets: list[int], layer: int, title: str) -> go.Figure:
    """Attention of ``token`` to each target, layer by layer (``values``: (layers, targets))."""
    labels = token_labels(encoding)
    fig = go.Figure(
        [
            go.Scatter(
                x=list(range(values.shape[0])),
                y=values[:, i],
                mode="lines+markers",
                name=labels[target],
                hovertemplate=f"layer %{{x}}: {labels[token]} → {labels[target]} %{{y:.6f}}<extra></extra>",
            )
            for i, target in enumerate(targets)
        ]
    )
    fig.add_vline(x=layer, line=dict(color="#999", dash="dot"))
    fig.update_layout(
        title=f"{labels[token]!r} → targets, layer by layer — {title}",
        height=380,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="layer", dtick=1),
        yaxis=dict(title="attention weight", rangemode="tozero"),
    )
    return fig


def payload_bytes(fig: go.Figure) -> int:
    """Bytes Streamlit sends to the browser for ``fig`` (it sends ``plotly.io.to_json``)."""
    return len(pio.to_json(fig, validate=False).encode("utf-8"))


def default_focus(encoding: Encoding, preset: Preset | None, matrix: np.ndarray) -> tuple[int, list[int]]:
    """The preset's focus and targets, else the first word and the tokens it looks at most."""
    focus, targets = preset_focus(preset, encoding) if preset else (None, [])
    focus = focus if focus is not None else min(1, len(encoding) - 1)
    return focus, targets or strongest_targets(matrix[focus], focus, encoding)


def page_figures(analysis: Analysis, choice: Choice = Choice(), statistic: str = "next") -> dict[str, go.Figure]:
    """Every figure the page can draw for ``analysis`` (each tab draws its own), built as the page does."""
    encoding, attentions = analysis.encoding, analysis.attentions
    layers, heads = attentions.shape[:2]
    stack = layer_stack(attentions, choice.head_or_mean, choice.view)
    matrix, title = stack[choice.layer], choice.title(heads)
    size = thumbnail_size(len(encoding), layers, heads)
    selected = (choice.layer, choice.head)
    token, targets = default_focus(encoding, None, matrix)
    return {
        "heatmap": matrix_figure(matrix, encoding, title),
        "head view": head_view_figure(matrix, encoding, None, title),
        "all heads": overview_figure(mosaic(attentions, size), size, layers, heads, selected),
        "statistics": statistics_figure(head_statistics(attentions, encoding)[statistic], statistic, selected),
        "focus row": focus_row_figure(matrix[token], encoding, token, targets, title),
        "focus layers": focus_layers_figure(
            focus_across_layers(stack, token, targets), encoding, token, targets, choice.layer, title
        ),
    }


def page_payload(analysis: Analysis, choice: Choice = Choice()) -> dict[str, int]:
    """Bytes per figure sent to the browser; their sum bounds any view (a tab draws only its own)."""
    return {name: payload_bytes(fig) for name, fig in page_figures(analysis, choice).items()}


# --- widgets and callbacks -----------------------------------------------------------------------


def _select_head(layer: int, head: int) -> None:
    st.session_state.update(attn_layer=layer, head=head, mean=False, view=VIEWS["raw"], attn_tab=TABS[0])


def _pick_head(chart_key: str) -> None:
    points = st.session_state[chart_key].selection.points
    if points:
        layer, head = points[0]["customdata"]
        _select_head(int(layer), int(head))


def _pick_token(chart_key: str) -> None:
    points = st.session_state[chart_key].selection.points
    if points:
        st.session_state["focus"] = int(points[0]["customdata"])


def _apply_preset(preset: Preset) -> None:
    encoding = cached_analysis(cached_bundle(active_model_name()).name, preset.text, preset.text_b).encoding
    focus, targets = preset_focus(preset, encoding)
    set_shared_text(preset.text)
    set_shared_text(preset.text_b, "b")
    st.session_state.update(focus=None, token=focus, targets=targets)


def _bound_choice(widget, label: str, options: list[str], key: str, **kwargs) -> str:
    """A URL-bound choice among strings, warning about a link value that is not one of them."""
    warn_bad_param(key, lambda raw: raw in options, "one of: " + ", ".join(options))
    return widget(label, options, key=key, bind="query-params", **kwargs)


def _token_picker(widget, label: str, encoding: Encoding, key: str, default, include_all: bool = False, **kwargs):
    """A URL-bound token picker (the link holds "position token"), kept valid for this input.

    ``widget`` is ``st.selectbox`` (``default``: a position) or ``st.multiselect`` (a list of them);
    ``include_all`` adds a None option named "all tokens".
    """
    names = {None: "all tokens"} if include_all else {}
    names.update(enumerate(token_labels(encoding)))
    options = list(names)
    bad = [raw for raw in st.query_params.get_all(key) if raw and raw not in names.values()]
    if bad:
        warn_bad_param(key, lambda raw: raw not in bad, "a token of this input")
    current = st.session_state.get(key)
    if isinstance(current, list):
        st.session_state[key] = [t for t in current if t in names]
    elif key in st.session_state and current not in names:
        del st.session_state[key]
    if key not in st.session_state:  # a default only for a fresh widget (never beside a set value)
        kwargs["default" if widget is st.multiselect else "index"] = (
            default if widget is st.multiselect else options.index(default)
        )
    return widget(label, options, format_func=names.__getitem__, key=key, bind="query-params", **kwargs)


# --- sections ------------------------------------------------------------------------------------


def preset_buttons() -> None:
    with st.container(horizontal=True):
        st.caption("Examples from the notebooks:")
        for i, preset in enumerate(PRESETS):
            st.button(preset.name, key=f"preset_{i}", on_click=_apply_preset, args=(preset,), type="tertiary")


def controls(bundle: ModelBundle) -> Choice:
    """View, averaging, layer and head — all in the URL."""
    caps = bundle.capabilities
    show, layer_column, head_column = st.columns([1.2, 1, 1])
    with show:
        fresh = {} if "view" in st.session_state else {"default": VIEWS["raw"]}  # never a default beside a set value
        view_label = _bound_choice(st.segmented_control, "Show", list(VIEWS.values()), "view", required=True, **fresh)
        view = "rollout" if view_label == VIEWS["rollout"] else "raw"
        mean = st.toggle("Average the heads of the layer", **bound("mean"), disabled=view == "rollout")
    with layer_column:
        layer = bound_int_slider("Encoder layer", "attn_layer", 0, caps.num_layers - 1)
        st.caption(encoder_layer_label(layer).capitalize() + ".")
    with head_column:
        head = bound_int_slider("Head", "head", 0, caps.num_heads - 1, disabled=mean or view == "rollout")
    st.caption(CAVEAT)
    return Choice(layer=layer, head=head, mean=mean, view=view)


def open_tabs():
    return lazy_tabs(TABS, "attn_tab")


def heatmap_section(page: PageInput, choice: Choice, heads: int) -> None:
    matrix = matrices(page, choice)[choice.layer]
    chart(matrix_figure(matrix, page.encoding, choice.title(heads)), f"attention-{choice.slug()}", key="heatmap")
    labels = list(token_labels(page.encoding))
    csv_download(
        lambda: pd.DataFrame(matrix, columns=labels).assign(query=labels)[["query", *labels]],
        f"attention-{choice.slug()}",
        label="Download this matrix (CSV)",
    )


def head_view_section(page: PageInput, choice: Choice, heads: int) -> None:
    encoding = page.encoding
    focus = _token_picker(st.selectbox, "Focus on a token (or click one)", encoding, "focus", None, include_all=True)
    matrix = matrices(page, choice)[choice.layer]
    per_row = lines_per_row(len(encoding))
    if focus is None and per_row < len(encoding):
        st.caption(f"Each token shows its {per_row} strongest lines here; focus a token to see all of its lines.")
    fig = head_view_figure(matrix, encoding, focus, choice.title(heads))
    chart(fig, f"head-view-{choice.slug()}", key="head_view_pick", on_select=partial(_pick_token, "head_view_pick"), selection_mode="points")


def overview_section(page: PageInput, choice: Choice, bundle: ModelBundle) -> None:
    caps = bundle.capabilities
    size = thumbnail_size(len(page.encoding), caps.num_layers, caps.num_heads)
    grid = cached_mosaic(page.model_name, page.text, page.text_b, size)
    note = "" if size >= len(page.encoding) else f", shrunk to {size}×{size} (block means; rows still sum to 1)"
    st.caption(f"Raw attention of every head{note}. Click a head to open it in the heatmap.")
    fig = overview_figure(grid, size, caps.num_layers, caps.num_heads, (choice.layer, choice.head))
    chart(fig, "attention-all-heads", key="overview_pick", on_select=partial(_pick_head, "overview_pick"), selection_mode="points")


def statistics_section(page: PageInput, choice: Choice) -> None:
    stats = cached_statistics(page.model_name, page.text, page.text_b)
    st.caption("Computed live from this model and this input, over the tokens of the text; click a cell to select that head.")
    labels = [s.label for s in STATISTICS]
    label = _bound_choice(st.selectbox, "Statistic", labels, "stat", index=labels.index(STATISTIC_BY_KEY["next"].label))
    statistic = next(s.key for s in STATISTICS if s.label == label)
    st.caption(STATISTIC_BY_KEY[statistic].explanation)
    fig = statistics_figure(stats[statistic], statistic, (choice.layer, choice.head))
    chart(fig, f"head-statistics-{statistic}", key="stats_pick", on_select=partial(_pick_head, "stats_pick"), selection_mode="points")
    st.markdown("**Find the head** — the strongest head for each pattern of the notebooks, here:")
    for pattern in PATTERNS:
        found = find_head(stats, pattern.statistic)
        if found is None:
            st.button(f"{pattern.name}: needs a sentence pair that repeats a word", disabled=True, key=f"find_{pattern.statistic}")
            continue
        value = stats[pattern.statistic][found]
        st.button(
            f"{pattern.name}: layer {found[0]}, head {found[1]} ({STATISTIC_BY_KEY[pattern.statistic].label}: {value:.2f})",
            key=f"find_{pattern.statistic}",
            on_click=_select_head,
            args=found,
            help=f"For comparison, {pattern.seed_note}.",
        )
    table(statistics_table(stats), "attention-head-statistics", key="stats_table")


def token_focus_section(page: PageInput, choice: Choice, heads: int) -> None:
    encoding = page.encoding
    stack = matrices(page, choice)
    matrix = stack[choice.layer]
    focus, targets = default_focus(encoding, matching_preset(page.text, page.text_b), matrix)
    token = _token_picker(st.selectbox, "Token", encoding, "token", focus)
    chosen = _token_picker(st.multiselect, "Follow its attention to", encoding, "targets", targets)
    title = choice.title(heads)
    chart(focus_row_figure(matrix[token], encoding, token, chosen, title), f"token-focus-{choice.slug()}", key="focus_row")
    if chosen:
        if choice.view == "raw" and not choice.mean:
            st.caption(
                f"Across layers this follows head {choice.head} of every layer; heads with the same number in "
                "different layers are unrelated. Average the heads, or switch to Rollout, for a layer-wide view."
            )
        values = focus_across_layers(stack, token, chosen)
        chart(focus_layers_figure(values, encoding, token, chosen, choice.layer, title), "token-focus-layers", key="focus_layers")
    else:
        st.info("Choose target tokens to follow this token's attention to them across the layers.")
