"""A chart in one line of words, shown under every chart: its text equivalent (WCAG 1.1.1) for a
screen reader, and a quick reading for everyone ("largest at row it, column animal (0.41)")."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from bertlens.wording import percent, plural
from components.services.text import bidi_isolate

_TAGS = re.compile(r"<[^>]+>")


def _plain(text: object) -> str:
    """Plotly label text without its HTML (figures escape user text, so unescape it after)."""
    return " ".join(html.unescape(_TAGS.sub(" ", str(text))).split())


def _isolated(text: str) -> str:
    """``text`` set apart from the line's direction (U+2068 … U+2069) when it has right-to-left letters: an Arabic
    or Hebrew token drew its number to its far side ("13 (0.0607) ط##")."""
    return bidi_isolate(text) if any(unicodedata.bidirectional(c) in ("R", "AL") for c in text) else text


def _label(labels: Sequence[Any] | None, index: int) -> str:
    return _isolated(_plain(labels[index])) if labels is not None and index < len(labels) else str(index)


def _number(value: float) -> str:
    return f"{value:.3g}"


MAX_TIED = 3  # cells of a tie for the largest named; then how many more


def _heatmap(trace: Any, axes: tuple[str, str] = ("row", "column")) -> str | None:
    """``axes``: what a row and a column are ("encoder layer", "head"), said before their labels."""
    z = np.asarray(trace.z, dtype=float)
    if z.ndim != 2 or not np.isfinite(z).any():
        return None
    signed = np.nanmin(z) < 0  # a difference map: its largest change may be negative
    size = np.abs(z) if signed else z
    largest = np.argwhere(size == np.nanmax(size))  # every cell of a tie (a confusion matrix's counts), row by row
    cells = "; ".join(
        f"{axes[0]} {_label(trace.y, int(row))}, {axes[1]} {_label(trace.x, int(column))} ({_number(z[row, column])})"
        for row, column in largest[:MAX_TIED]
    )
    more = f"; and {len(largest) - MAX_TIED} more cells as large" if len(largest) > MAX_TIED else ""
    return (
        f"{z.shape[0]} × {z.shape[1]} cells from {_number(np.nanmin(z))} to {_number(np.nanmax(z))}; "
        f"largest{' in size' if signed else ''} at {cells}{more}"
    )


def _numbered_axes(fig: go.Figure, trace: Any) -> tuple[str, str]:
    """A heatmap's rows and columns named by their axis titles where they are numbered ("encoder layer 2, head 2",
    not "row 2, column 2"); a token's label already says what it is ("row it, column animal")."""

    def name(axis: Any, labels: Sequence[Any] | None, default: str) -> str:
        title = _plain(axis.title.text or "")
        # Cells numbered as they are counted: no labels of their own, or whole numbers, and no ticks set apart
        # from them (the all-heads mosaic counts pixels, its ticks name the heads).
        numbered = axis.tickvals is None and (labels is None or all(isinstance(x, int | np.integer) for x in labels))
        return title if title and numbered else default

    return name(fig.layout.yaxis, trace.y, "row"), name(fig.layout.xaxis, trace.x, "column")


def _bars(trace: Any) -> str | None:
    horizontal = trace.orientation == "h"
    values = np.asarray(trace.x if horizontal else trace.y, dtype=float)
    labels = trace.y if horizontal else trace.x
    if values.size == 0 or not np.isfinite(values).any():
        return None
    top = [int(i) for i in np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")[:3]]
    ranked = ", ".join(f"{_label(labels, i)} ({_number(values[i])})" for i in top)
    return f"{values.size} bar{'s' if values.size != 1 else ''}; highest: {ranked}"


def _series(traces: Sequence[Any]) -> str | None:
    """Lines: where each peaks. Points (a map): how many in each group."""
    named = [t for t in traces if t.y is not None and len(t.y)]
    if not named:
        return None
    points = sum(len(t.y) for t in named)
    groups = "group" if all("lines" not in (t.mode or "lines") for t in named) else "series"
    head = f"{plural(points, 'point')} in {plural(len(named), groups, 'series' if groups == 'series' else None)}"
    parts = []
    for trace in named[:5]:
        name = _isolated(_plain(trace.name)) if trace.name else "series"
        y = np.asarray(trace.y, dtype=float)
        if "lines" not in (trace.mode or "lines"):
            parts.append(f"{name} ({len(y)})")
        elif np.isfinite(y).any():
            peak = int(np.nanargmax(y))
            parts.append(f"{name} peaks at {_label(trace.x, peak)} ({_number(y[peak])})")
    more = f"; and {len(named) - 5} more" if len(named) > 5 else ""
    return f"{head}: {'; '.join(parts)}{more}" if parts else head


def _shares(trace: Any) -> str | None:
    """A sunburst or pie: the top-level parts and their shares."""
    values = np.asarray(trace.values, dtype=float)
    parents = list(trace.parents) if trace.parents is not None else [""] * len(values)
    top = [i for i, parent in enumerate(parents) if not parent]
    total = values[top].sum()
    if not top or not total:
        return None
    ranked = sorted(top, key=lambda i: -values[i])
    return "; ".join(f"{_label(trace.labels, i)} {values[i]:,.0f} ({percent(values[i] / total, 0)})" for i in ranked)


def name(fig: go.Figure, fallback: str) -> str:
    """A short accessible name for ``fig`` (its title in plain text, else ``fallback``): a screen reader says it
    when it reaches the chart, then reads the line in words under it."""
    return _plain(fig.layout.title.text or "") or fallback


def describe(fig: go.Figure) -> str | None:
    """One line saying what ``fig`` shows (plain text, not Markdown), or None if it has no data to tell."""
    kinds = {
        "heatmap": lambda trace: _heatmap(trace, _numbered_axes(fig, trace)),
        "bar": _bars,
        "sunburst": _shares,
        "pie": _shares,
    }
    traces = [t for t in fig.data if t.type in (*kinds, "scatter", "scattergl", "scatter3d")]
    if not traces:
        return None
    first = traces[0]
    words: str | None
    try:
        if first.type in kinds:
            same = [t for t in traces if t.type == first.type]
            together = [t for t in same if first.type == "bar" and (t.xaxis, t.yaxis) == (first.xaxis, first.yaxis)]
            if len(together) > 1:  # bars grouped on one chart: each series by its name
                words = "; ".join(f"{_isolated(_plain(t.name))}: {_bars(t)}" for t in together)
            else:
                words = kinds[first.type](first)
                if words and len(same) > 1:
                    words += f" (the first of {len(same)} panels)"
        else:
            words = _series(traces)
    except (TypeError, ValueError):  # data that is not numbers (a category axis): no line rather than no page
        return None
    if words is None:
        return None
    title = _plain(fig.layout.title.text or "")
    return f"{title}: {words}." if title else f"{words[0].upper()}{words[1:]}."
