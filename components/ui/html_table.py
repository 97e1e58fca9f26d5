"""Small tables as plain, semantic HTML: light for the browser, clear for screen readers.

Streamlit's interactive grid (``st.dataframe``) draws on a canvas and costs a browser about 0.3 s
per page it appears on (measured: a sidebar click to the Tokenizer page 479 ms with the grid, 153 ms
with this table; a bare Streamlit page 116–128 ms). A table of a few dozen rows needs no sorting
or virtual scrolling, so it is written as a ``<table>`` with column headers; larger ones keep the grid.

Every cell is escaped (user text is shown literally). Each number carries its exact value in
``data-value``, so ``read_table`` gives back the numbers that were drawn, not their rounded text
(tests and the class simulation compare them with references). No Streamlit import: scripts use
``read_table`` too.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from html.parser import HTMLParser

import numpy as np
import pandas as pd

from bertlens.wording import significant

MAX_ROWS = 50  # beyond this the grid's scrolling and sorting earn their start-up cost
MAX_CELLS = 1_500

# The box scrolls both ways; a shadow at an edge says more is there (a phone shows no scrollbar): each shadow
# is covered by a white band that scrolls with the table, and uncovered once the table runs past that edge. Its
# height is in lines of its own text, so that presentation mode's larger text keeps as many rows in view (about 14:
# a top 10, or bert-base's 13 hidden states).
STYLE = """<style>
.bl-table{font-size:.875rem;max-height:32em;overflow:auto;margin:0 0 .5rem 0;
background:linear-gradient(to right,#fff 40%,#fff0) left/2rem 100% no-repeat local,
linear-gradient(to left,#fff 40%,#fff0) right/2rem 100% no-repeat local,
linear-gradient(#fff 40%,#fff0) top/100% 2rem no-repeat local,
linear-gradient(to top,#fff 40%,#fff0) bottom/100% 2rem no-repeat local,
radial-gradient(farthest-side at 0 50%,#0003,#0000) left/.8rem 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/.8rem 100% no-repeat scroll,
radial-gradient(farthest-side at 50% 0,#0003,#0000) top/100% .8rem no-repeat scroll,
radial-gradient(farthest-side at 50% 100%,#0003,#0000) bottom/100% .8rem no-repeat scroll}
.bl-table table{border-collapse:collapse;font-variant-numeric:tabular-nums}
.bl-table th,.bl-table td{padding:.25rem .6rem;border-bottom:1px solid rgba(128,128,128,.3);text-align:left;
white-space:pre-wrap}
.bl-table td{max-width:40rem;overflow-wrap:break-word}
.bl-table th{font-weight:600}
.bl-table td.n{text-align:right;white-space:nowrap}
</style>"""


def fits(df: pd.DataFrame) -> bool:
    """Whether ``df`` is small enough to be drawn as HTML rather than in the interactive grid."""
    return len(df) <= MAX_ROWS and df.size <= MAX_CELLS


def _kind(value: object) -> str | None:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    return None


SIGNIFICANT = re.compile(r"%\.(\d+)g")  # a printf format of significant figures ("%.4g")


def _number_text(value: float | int | np.integer | np.floating, number_format: str | None) -> str:
    if isinstance(value, float | np.floating) and math.isnan(value):
        return ""
    if number_format == "localized":
        return f"{value:,}"
    if number_format:
        if figures := SIGNIFICANT.fullmatch(number_format):  # a column's numbers read alike: zeros kept
            return significant(float(value), int(figures.group(1)))
        return number_format % value
    if isinstance(value, int | np.integer):
        return str(value)
    size = abs(float(value))
    return f"{value:.4f}" if size == 0 or 1e-3 <= size < 1e6 else f"{value:.3e}"


def _cell(value: object, number_format: str | None) -> str:
    kind = _kind(value)
    if kind == "bool":
        return f'<td data-kind="bool" data-value="{str(bool(value)).lower()}">{value}</td>'
    if isinstance(value, int | float | np.integer | np.floating):
        exact = repr(int(value)) if kind == "int" else repr(float(value))
        text = _number_text(value, number_format)
        return f'<td class="n" data-kind="{kind}" data-value="{exact}">{html.escape(text)}</td>'
    return f"<td>{'' if value is None or value is pd.NA else html.escape(str(value))}</td>"  # missing: blank


def render_table(df: pd.DataFrame, label: str, formats: Mapping[str, str | None] | None = None) -> str:
    """``df`` (index left out) as an HTML table in a scrollable, keyboard-focusable region named ``label``.

    ``formats``: per column, a printf format ("%.4g", "%d") or "localized" (thousands separators).
    """
    formats = formats or {}
    head = "".join(f'<th scope="col">{html.escape(str(name))}</th>' for name in df.columns)
    columns = [formats.get(str(name)) for name in df.columns]
    rows = "".join(
        "<tr>" + "".join(_cell(value, fmt) for value, fmt in zip(row, columns, strict=True)) + "</tr>"
        for row in df.itertuples(index=False, name=None)
    )
    return (
        f'{STYLE}<div class="bl-table" role="region" aria-label="{html.escape(label)}" tabindex="0">'
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


class _Reader(HTMLParser):
    def __init__(self, shown: bool) -> None:
        super().__init__()
        self.shown = shown
        self.header: list[str] = []
        self.rows: list[list[object]] = []
        self._cell: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr" and self.header:
            self.rows.append([])
        if tag in ("th", "td"):
            self._cell, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("th", "td") or self._cell is None:
            return
        text, cell = "".join(self._text), self._cell
        self._cell = None
        if tag == "th":
            self.header.append(text)
            return
        self.rows[-1].append(text if self.shown else _exact(text, cell.get("data-kind"), cell.get("data-value") or ""))


def _exact(text: str, kind: str | None, exact: str) -> object:
    """A cell's value: the exact number or flag it was drawn from, else its text."""
    if kind == "int":
        return int(exact)
    if kind == "float":
        return float(exact)
    if kind == "bool":
        return exact == "true"
    return text


def read_table(markup: str, shown: bool = False) -> pd.DataFrame:
    """The table ``render_table`` wrote, with its exact numbers; ``shown``: every cell as the text on screen."""
    reader = _Reader(shown)
    reader.feed(markup)
    return pd.DataFrame(reader.rows, columns=reader.header).infer_objects()


def is_table(markup: str) -> bool:
    return 'class="bl-table"' in markup
