"""Attention page: pure figure builders (numpy in, plotly out; no Streamlit).

The page and the payload benchmark (``page_payload``) draw exactly the same thing. ``Choice`` is what is
selected (encoder layer, head, mean, raw or rollout) and names it in titles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from bertlens.analysis import Analysis, Encoding
from bertlens.attention import (
    STATISTIC_BY_KEY,
    Preset,
    View,
    focus_across_layers,
    head_statistics,
    layer_stack,
    mosaic,
    preset_focus,
    sentence_b_start,
    strongest_targets,
    thumbnail_size,
    token_labels,
)
from components.ui.palette import CELL_TEXT, INK, LIGHT_BLUES, line_style, rgba

COLORS = "Blues"
ACCENT = "#d62728"
# The focus row's bars: (kind, colour, fill pattern); the pattern carries the meaning without colour.
FOCUS_KINDS = (("other token", "#1f77b4", ""), ("the token looking", "#555555", "."), ("a target", ACCENT, "x"))
MAX_HEAD_VIEW_SEGMENTS = 1500  # lines drawn in the head view when no token is focused
MIN_LINE_WEIGHT = 0.02
LINE_BLUE = "#1f77b4"  # the head view's lines when one head (or the mean, or rollout) is drawn
FocusSide = Literal["query", "key"]  # a focused token's lines: what it attends to, or who attends to it


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

    def across_layers(self, heads: int) -> str:
        """What a chart over every encoder layer follows (the chosen layer is only marked on it)."""
        if self.view == "rollout":
            return "rollout through each encoder layer (all heads)"
        return (
            f"the mean of {heads} heads in each encoder layer"
            if self.mean
            else f"head {self.head} in each encoder layer"
        )

    def slug(self) -> str:
        if self.view == "rollout":
            return f"rollout-layer{self.layer}"
        return f"layer{self.layer}-" + ("mean" if self.mean else f"head{self.head}")


def _mark_segments(fig: go.Figure, encoding: Encoding, rows: bool = True) -> None:
    """Dashed lines where sentence B starts (on category axes, position i sits at i): a column, and a row unless
    ``rows`` is False."""
    start = sentence_b_start(encoding)
    if start is None:
        return
    line = dict(color=ACCENT, dash="dash", width=1.5)
    fig.add_vline(
        x=start - 0.5,
        line=line,
        annotation_text="sentence B →",
        annotation_position="top right",
        # On white, in the page's ink: over a heatmap's blue cells the theme's grey was unreadable
        annotation=dict(bgcolor="rgba(255, 255, 255, 0.85)", font=dict(color=INK)),
    )
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
    token_grid_layout(fig, title, len(labels), "key (attended to)", "query (attending)")
    _mark_segments(fig, encoding)
    return fig


def token_grid_layout(fig: go.Figure, title: str, tokens: int, x_title: str, y_title: str) -> None:
    """A square token × token heatmap's layout: grows with the tokens (within a screen), queries top to bottom."""
    fig.update_layout(
        title=title,
        height=int(np.clip(16 * tokens + 180, 420, 900)),
        margin=dict(l=10, r=10, t=60, b=10),
        # One category per token: labels such as "2 911" or "8 ." would otherwise turn the axis numeric (an empty grid)
        xaxis=dict(title=x_title, tickangle=-60, nticks=60, type="category"),
        yaxis=dict(title=y_title, autorange="reversed", nticks=60, type="category"),
    )


def lines_per_row(n: int, heads: int = 1) -> int:
    """How many lines each token gets per head in the head view when no token is focused."""
    return max(1, min(n, MAX_HEAD_VIEW_SEGMENTS // (n * heads)))


def _line_segments(
    matrix: np.ndarray, focus: int | None, side: FocusSide = "query", heads: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(queries, keys, weights) of one head's lines: every line of ``focus`` (as the query: what it attends
    to; as the key: who attends to it), else each row's strongest ``lines_per_row`` of at least
    MIN_LINE_WEIGHT. Never more than the head's share (of ``heads``) of MAX_HEAD_VIEW_SEGMENTS: the strongest."""
    n = matrix.shape[0]
    if focus is not None and side == "key":
        queries = np.flatnonzero(matrix[:, focus] > 0)
        queries, keys, weights = queries, np.full(queries.shape, focus), matrix[queries, focus]
    elif focus is not None:
        keys = np.flatnonzero(matrix[focus] > 0)
        queries, keys, weights = np.full(keys.shape, focus), keys, matrix[focus, keys]
    else:
        keys = np.argsort(-matrix, axis=1, kind="stable")[:, : lines_per_row(n, heads)]
        weights = np.take_along_axis(matrix, keys, axis=1)
        queries = np.broadcast_to(np.arange(n)[:, None], keys.shape)
        strong = weights >= MIN_LINE_WEIGHT
        queries, keys, weights = queries[strong], keys[strong], weights[strong]
    share = max(1, MAX_HEAD_VIEW_SEGMENTS // heads)
    if len(weights) > share:  # many tokens and many heads: the strongest lines only
        kept = np.sort(np.argsort(-weights, kind="stable")[:share])
        queries, keys, weights = queries[kept], keys[kept], weights[kept]
    return queries, keys, weights


def head_view_words(
    drawn: Sequence[tuple[str, np.ndarray]], encoding: Encoding, focus: int | None, title: str, side: FocusSide
) -> str:
    """The head view in words (its text equivalent): each head's strongest line, or the focused token's."""
    labels = token_labels(encoding)
    parts = []
    for name, matrix in drawn[:5]:
        if focus is None:
            query, key = (int(i) for i in np.unravel_index(int(np.argmax(matrix)), matrix.shape))
        elif side == "query":
            query, key = focus, int(np.argmax(matrix[focus]))
        else:
            query, key = int(np.argmax(matrix[:, focus])), focus
        line = f"{labels[query]} → {labels[key]} ({matrix[query, key]:.3f})"
        parts.append(f"{name}: {line}" if name else line)
    more = f"; and {len(drawn) - 5} more heads" if len(drawn) > 5 else ""
    lines = "strongest lines" if len(drawn) > 1 else "strongest line"  # the plural on "line", never on a token
    which = lines if focus is None else f"{lines} of {labels[focus]}"
    return (
        f"{title}: lines from each token (left, the query) to the tokens it attends to (right, the key), "
        f"thicker for more weight; {which}: {'; '.join(parts)}{more}"
    )


def head_view_figure(
    heads: np.ndarray | Sequence[tuple[str, np.ndarray]],
    encoding: Encoding,
    focus: int | None,
    title: str,
    side: FocusSide = "query",
) -> go.Figure:
    """bertviz's head view: each token (left) linked to the tokens it attends to (right), darker and thicker
    the stronger. ``heads``: one matrix, or (name, matrix) pairs drawn together, each head in its own colour
    and dash and named in the legend. A focused token shows all its lines, as the query or as the key."""
    drawn = [("", heads)] if isinstance(heads, np.ndarray) else list(heads)
    together = len(drawn) > 1
    labels = token_labels(encoding)
    n = len(labels)
    fig = go.Figure()
    levels = (0.0, 0.1, 0.25, 0.5, 0.75)  # weight bands: one trace each, darker and thicker
    for number, (name, matrix) in enumerate(drawn):
        colour, dash = line_style(number) if together else (LINE_BLUE, "solid")
        queries, keys, weights = _line_segments(matrix, focus, side, len(drawn))
        if together:  # the legend's sample: the head's colour and dash at full strength (the faint bands fail 3:1)
            fig.add_trace(
                go.Scatter(
                    x=[None], y=[None], mode="lines", line=dict(width=3, color=colour, dash=dash), name=name,
                    legendgroup=name, hoverinfo="skip",
                )
            )  # fmt: skip
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
                        line=dict(width=1 + 1.5 * band, color=rgba(colour, 0.2 + 0.2 * band), dash=dash),
                        hoverinfo="skip",
                        name=name,
                        legendgroup=name,
                        showlegend=False,
                    )
                )
    tokens = list(encoding.tokens)
    for number, (kind, x, position) in enumerate((("query", 0, "middle left"), ("key", 1, "middle right"))):
        fig.add_trace(
            go.Scatter(
                x=np.full(n, x),
                y=np.arange(n),
                mode="markers+text",
                text=tokens,
                textposition=position,
                textfont=dict(color=INK),  # Streamlit's chart theme greys it (3.7:1)
                marker=dict(size=9, color="#555", opacity=0.6),
                customdata=[[i, number] for i in range(n)],  # position, side (0 query, 1 key): a click focuses it
                hovertemplate=f"{kind} %{{customdata[0]}}: %{{text}}<extra>click to focus</extra>",
                showlegend=False,
            )
        )
    if focus is not None:
        on_key = side == "key"
        fig.add_trace(
            go.Scatter(
                x=[1 if on_key else 0],
                y=[focus],
                mode="markers+text",
                text=[tokens[focus]],
                textposition="middle right" if on_key else "middle left",
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
        legend=dict(title="head", itemclick="toggle"),
    )
    return fig


def _add_head_picker(
    fig: go.Figure,
    x_of: Callable[[int], float],
    y_of: Callable[[int], float],
    layers: int,
    heads: int,
    selected: tuple[int, int] | None,
) -> None:
    """Invisible clickable points, one per head (plotly selects points, not heatmap cells)."""
    grid = [(layer, head) for layer in range(layers) for head in range(heads)]
    fig.add_trace(
        go.Scatter(
            x=[x_of(h) for _, h in grid],
            y=[y_of(layer) for layer, _ in grid],
            mode="markers",
            marker=dict(size=26, symbol="square", color="rgba(0,0,0,0)"),
            customdata=grid,
            hovertemplate="encoder layer %{customdata[0]}, head %{customdata[1]}<extra>click to select</extra>",
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


def overview_figure(
    grid: np.ndarray, size: int, layers: int, heads: int, selected: tuple[int, int] | None
) -> go.Figure:
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
            title="encoder layer",
            autorange="reversed",
            scaleanchor="x",
            tickvals=[layer * step + center for layer in range(layers)],
            ticktext=list(range(layers)),
        ),
    )
    return fig


MIN_STATISTICS_HEIGHT = 280  # pixels: a 2-layer model's grid got a colour scale 30 px tall, its labels overprinted


def statistics_figure(values: np.ndarray, statistic: str, selected: tuple[int, int] | None) -> go.Figure:
    """One statistic for every head: layers × heads, click a cell to select that head."""
    layers, heads = values.shape
    label = STATISTIC_BY_KEY[statistic].label
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=list(range(heads)),
            y=list(range(layers)),
            colorscale=LIGHT_BLUES,
            colorbar=dict(title=label),
            texttemplate="%{z:.2f}",
            textfont=CELL_TEXT,
            hovertemplate=f"encoder layer %{{y}}, head %{{x}}<br>{label}: %{{z:.4f}}<extra></extra>",
        )
    )
    _add_head_picker(fig, float, float, layers, heads, selected)
    fig.update_layout(
        title=f"{label} — every head",
        height=max(MIN_STATISTICS_HEIGHT, 80 + 40 * layers),
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="head", dtick=1, range=[-0.5, heads - 0.5]),
        yaxis=dict(title="encoder layer", dtick=1, range=[layers - 0.5, -0.5]),
    )
    return fig


def focus_row_figure(row: np.ndarray, encoding: Encoding, token: int, targets: list[int], title: str) -> go.Figure:
    labels = list(token_labels(encoding))
    kind = np.zeros(len(labels), dtype=int)  # an index into FOCUS_KINDS
    kind[token], kind[list(targets)] = 1, 2
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=np.asarray(row, dtype=np.float32),
            # Colour and a fill pattern both tell the kinds apart (never colour alone).
            marker=dict(
                color=[FOCUS_KINDS[k][1] for k in kind],
                pattern=dict(shape=[FOCUS_KINDS[k][2] for k in kind], fgcolor="white", solidity=0.4),
            ),
            customdata=[FOCUS_KINDS[k][0] for k in kind],
            hovertemplate="%{x} (%{customdata}): %{y:.6f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Where {labels[token]!r} looks — {title}",
        height=380,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="key", tickangle=-60, nticks=60, type="category"),
        yaxis=dict(title="attention weight"),
    )
    _mark_segments(fig, encoding, rows=False)
    return fig


def focus_layers_figure(
    values: np.ndarray, encoding: Encoding, token: int, targets: list[int], layer: int, follows: str
) -> go.Figure:
    """Attention of ``token`` to each target, layer by layer (``values``: (layers, targets)); ``follows``: what
    each layer's value is (``Choice.across_layers``: the title once named only the chosen layer's head)."""
    labels = token_labels(encoding)
    fig = go.Figure(
        [
            go.Scatter(
                x=list(range(values.shape[0])),
                y=values[:, i],
                mode="lines+markers",
                name=labels[target],
                hovertemplate=f"encoder layer %{{x}}: {labels[token]} → {labels[target]} %{{y:.6f}}<extra></extra>",
            )
            for i, target in enumerate(targets)
        ]
    )
    fig.add_vline(x=layer, line=dict(color="#999", dash="dot"))
    fig.update_layout(
        title=f"{labels[token]!r} → targets: {follows}",
        height=380,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title="encoder layer", dtick=1),
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
            focus_across_layers(stack, token, targets),
            encoding,
            token,
            targets,
            choice.layer,
            choice.across_layers(heads),
        ),
    }


def page_payload(analysis: Analysis, choice: Choice = Choice()) -> dict[str, int]:
    """Bytes per figure sent to the browser; their sum bounds any view (a tab draws only its own)."""
    return {name: payload_bytes(fig) for name, fig in page_figures(analysis, choice).items()}
