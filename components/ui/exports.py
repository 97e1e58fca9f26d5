"""Tables and charts that can always be taken away: CSV for tables, PNG for charts.

CSV cells that a spreadsheet would run as a formula (``=HYPERLINK(…)``, ``@SUM(…)``, a leading
``+ - TAB CR``) get a leading single quote, as OWASP recommends against CSV injection; plain
numbers (``-0.25``) stay numbers. Every download goes through ``safe_csv``.

PNG export uses plotly's own modebar button (rendered in the browser by BERT Lens's plotly.js,
``components/ui/plotly_chart.py``), so it works offline and needs no server-side image engine.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens.table_input import FORMULA_STARTS
from components.services.text import literal
from components.state.params import presenting
from components.ui import html_table
from components.ui.chart_words import describe, name
from components.ui.plotly_chart import plotly_chart

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig  # what st.column_config.*Column() returns

PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralised(cell: object) -> object:
    """A text cell that a spreadsheet would read as a formula, prefixed with ``'``; anything else unchanged."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def safe_csv(df: pd.DataFrame) -> bytes:
    """``df`` as UTF-8 CSV bytes, formula cells (and headers) neutralised. With a byte-order mark: without it, Excel
    reads the file in the computer's legacy code page ("—" and emoji garbled); pandas and our own uploads skip it."""
    safe = df.rename(columns=lambda name: neutralised(str(name)))
    text_columns = [c for c in safe.columns if safe[c].dtype == object or pd.api.types.is_string_dtype(safe[c])]
    safe[text_columns] = safe[text_columns].map(neutralised)
    # CRLF line ends (RFC 4180) also make the writer quote any cell holding a CR or LF: with "\n"
    # alone, a bare CR in a cell would end the row for a reader.
    csv: str = safe.to_csv(index=False, lineterminator="\r\n")
    return csv.encode("utf-8-sig")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-").lower() or "bertlens"


def _readable(filename: str) -> str:
    """A file name as words, naming its table or chart to a screen reader ("special-tokens" → "special tokens")."""
    return filename.replace("-", " ")


def png_config(filename: str, scale: int = 2) -> dict[str, Any]:
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": _slug(filename), "scale": scale},
    }


Table: TypeAlias = pd.DataFrame | Callable[[], pd.DataFrame]  # a function: built only when the button is clicked


def chart(
    fig: go.Figure,
    filename: str,
    key: str | None = None,
    words: str | None = None,
    data: Table | None = None,
    shared: bool = False,
    on_pick: Callable[[Any], None] | None = None,
) -> None:
    """A plotly chart named for screen readers by its title, with a 'Download plot as PNG' button named
    ``filename``.png, and the chart in words under it (its text equivalent): ``words``, or one line read from its
    data. ``data``: the chart's numbers as a table, offered as ``filename``.csv. ``fig`` is this run's own and
    is written to, unless ``shared`` (one figure for every session, from st.cache_resource: built as it is drawn).
    ``on_pick``: called with the ``customdata`` of a point the student clicks."""
    key = key or f"chart-{_slug(filename)}"
    if not shared:
        if fig.layout.dragmode is None:
            # A swipe that starts on a chart scrolls the page on a phone; dragging zoomed or panned the chart and
            # the page stuck. Zoom and Pan stay one click away in the chart's toolbar.
            fig.update_layout(dragmode=False)
        if presenting():
            for_the_back_row(fig)
        fit_title(fig)
    alt = name(fig, _readable(filename))  # its accessible name (role "figure")
    plotly_chart(fig, key=key, alt=alt, config=png_config(filename), on_pick=on_pick)
    if words := words or describe(fig):
        st.caption(f"In words — {literal(words)}")
    if data is not None:
        csv_download(
            data,
            filename,
            label=f"Download the chart's numbers (CSV): {literal(_readable(filename))}",
            key=f"csv-{key}",
        )


# Presentation mode's chart text, in px: Streamlit's chart theme sets 12 (ticks, legend) and 14 (axis titles);
# these are a third larger, for the back row. A chart with a set height grows with its text up to the room a
# 1280×720 projector leaves the picture under the page's title and the view's tabs, so that a short sentence's token
# labels (one per row) keep their room; a taller chart (a long sentence's heatmap) keeps its height (its labels
# would overlap), and scrolls.
THEME_TEXT, PROJECTOR_TEXT, PROJECTOR_TITLES, PROJECTOR_PICTURE = 12, 16, 19, 520


def for_the_back_row(fig: go.Figure) -> None:
    """Larger chart text for a projector (presentation mode), written to this run's own ``fig``. The sizes go where
    the chart theme sets its own, which a figure-wide font size would not override; colour bars and 3D axes
    follow the figure-wide size. Two updates: 5-10 ms a chart (one per part cost 17)."""
    text, titles = {"size": PROJECTOR_TEXT}, {"size": PROJECTOR_TITLES}
    # Every axis the layout lists (plotly lists xaxis and yaxis on any figure: on a sunburst they draw nothing).
    axes = [name for name in fig.layout if name.startswith(("xaxis", "yaxis"))]
    height = fig.layout.height
    fig.update_layout(
        {
            "font": text,
            "legend": {"font": text, "title": {"font": text}},
            "hoverlabel": {"font": text},
            "height": grown_height(height) if height else None,
            **({"title": {"font": titles}} if fig.layout.title.text else {}),
            **dict.fromkeys(axes, {"tickfont": text, "title": {"font": titles}}),
        }
    )
    fig.update_annotations(font_size=PROJECTOR_TITLES)  # subplot titles, and a label or two ("sentence B →")


# A chart title's line, in characters: plotly never wraps a title, and at 16 px a 320-pixel screen (WCAG's reflow
# width) shows 36–40 of them (by the letters); a longer title is cut off at the chart's edge. Lines are set on every
# screen (the server does not know its width), counted in characters (text with no spaces, e.g. Chinese, stays one
# line), and kept at 36 in presentation mode's larger titles (a projector is wide). Then plotly's default top margin.
TITLE_LINE, TITLE_TEXT, PLOTLY_TOP_MARGIN = 36, 16, 100
TITLE_BREAKS = ("—", ":", ",", ";", "→")  # a two-line title breaks after one of these where it can


def title_lines(title: str) -> list[str]:
    """``title`` in as few lines of at most ``TITLE_LINE`` characters as it needs (a longer word gets a line of its
    own), as even as they can be; two lines break after a dash, colon, comma, semicolon or arrow where both fit."""
    fewest = textwrap.wrap(title, TITLE_LINE, break_long_words=False)  # filled greedily: the fewest lines
    if len(fewest) == 2:
        after_a_break = [i for i, c in enumerate(title) if c == " " and title[i - 1] in TITLE_BREAKS]
        if fits := [i for i in after_a_break if max(i, len(title) - i - 1) <= TITLE_LINE]:
            cut = min(fits, key=lambda i: abs(len(title) - 2 * i))  # the most even of them
            return [title[:cut], title[cut + 1 :]]
    for width in range(math.ceil(len(title) / len(fewest)), TITLE_LINE):  # the narrowest lines that keep that count
        if len(lines := textwrap.wrap(title, width, break_long_words=False)) <= len(fewest):
            return lines
    return fewest


def fit_title(fig: go.Figure) -> None:
    """A title longer than a phone's line, written to ``fig`` in lines (``title_lines``), with the top margin grown
    by a line for each line added. A title with markup of its own (``<``: a tag, or lines already set) stays."""
    title = fig.layout.title.text
    if not title or len(title) <= TITLE_LINE or "<" in title:
        return
    lines = title_lines(title)
    line_height = 1.3 * (fig.layout.title.font.size or TITLE_TEXT)  # plotly's line spacing
    top = PLOTLY_TOP_MARGIN if fig.layout.margin.t is None else fig.layout.margin.t
    fig.update_layout(title_text="<br>".join(lines), margin_t=top + round((len(lines) - 1) * line_height))


def grown_height(height: int) -> int:
    """A chart's height in presentation mode: grown with its text, within the picture's room on a projector."""
    return (
        height if height >= PROJECTOR_PICTURE else min(round(height * PROJECTOR_TEXT / THEME_TEXT), PROJECTOR_PICTURE)
    )


def csv_download(df: Table, filename: str, label: str = "Download CSV", key: str | None = None) -> None:
    """A CSV download button. Pass a function returning the table to build a large CSV only on click."""
    st.download_button(
        label,
        (lambda: safe_csv(df())) if callable(df) else safe_csv(df),
        file_name=f"{_slug(filename)}.csv",
        mime="text/csv",
        key=key or f"csv-{_slug(filename)}",
        icon=":material/download:",
        on_click="ignore",
    )


def labelled_matrix(matrix: np.ndarray, labels: list[str], rows_are: str) -> pd.DataFrame:
    """A square matrix as a table: a first column ``rows_are`` naming each row, then one column per label."""
    return pd.DataFrame(matrix, columns=labels).assign(**{rows_are: labels})[[rows_are, *labels]]


# Shares already rounded (padding %, % of total: to 2 decimals, a small one to 2 significant figures), shown as
# rounded: "48.75", not "48.7500"; "0.0014", not "0.00".
PERCENT_COLUMN = st.column_config.NumberColumn(format="%g")


def _number_formats(column_config: Mapping[str, Mapping[str, Any]] | None) -> dict[str, str | None]:
    """Each column's number format from Streamlit column configs (``NumberColumn(format=…)``)."""
    return {name: (config or {}).get("type_config", {}).get("format") for name, config in (column_config or {}).items()}


def show_table(
    df: pd.DataFrame,
    label: str,
    key: str | None = None,
    column_config: Mapping[str, ColumnConfig] | None = None,
    column_order: tuple[str, ...] | None = None,
    **grid_options: Any,
) -> None:
    """A small table as plain HTML (light for the browser, read well by screen readers), a larger one
    in Streamlit's interactive grid; ``label`` names the table for screen readers."""
    df = ordered(df, column_order)
    if html_table.fits(df):
        st.html(html_table.render_table(df, label, _number_formats(column_config)))
    else:
        st.dataframe(df, hide_index=True, key=key, column_config=column_config, **grid_options)


def ordered(df: pd.DataFrame, column_order: tuple[str, ...] | None) -> pd.DataFrame:
    """``df`` with the columns of ``column_order`` (those it has), in that order; all of them without one."""
    return df[[name for name in column_order if name in df.columns]] if column_order else df


def table(
    df: pd.DataFrame,
    filename: str,
    key: str | None = None,
    column_order: tuple[str, ...] | None = None,
    title: str | None = None,
    **kwargs: Any,
) -> None:
    """A table with its CSV download button underneath, its columns as shown (the CSV is built on click, not on
    every run). ``title`` names it to a screen reader and on its button (default: the file name as words)."""
    name = title or _readable(filename)
    show_table(df, name, key=key, column_order=column_order, **kwargs)
    csv_download(
        lambda: ordered(df, column_order),
        filename,
        label=f"Download CSV: {literal(name)}",  # several on a page: each says which (user text: literal)
        key=f"csv-{key}" if key else None,
    )
