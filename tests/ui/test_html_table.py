"""The light HTML tables: the text each cell shows (its rounding, separators, escaping), read from the markup."""

from __future__ import annotations

import re

import pandas as pd

from components.ui.html_table import read_table, render_table


def cell_texts(markup: str) -> list[str]:
    """The text between each ``<td …>`` and ``</td>``, as the browser receives it (still escaped)."""
    return re.findall(r"<td[^>]*>(.*?)</td>", markup)


def test_an_unformatted_float_shows_four_decimals():
    """A float column without a format showed 0.12 for 0.12345: the table lost the precision the page promises."""
    markup = render_table(pd.DataFrame({"x": [0.12345, 2.5]}), "floats")
    assert cell_texts(markup) == ["0.1235", "2.5000"]
    assert read_table(markup)["x"].tolist() == [0.12345, 2.5]  # the exact values ride along


def test_a_localized_count_shows_thousands_separators():
    """Parameter counts are shown "localized": 1234567 read as 1234567, hard to tell from 123456."""
    markup = render_table(pd.DataFrame({"parameters": [1234567, 12]}), "counts", {"parameters": "localized"})
    assert cell_texts(markup) == ["1,234,567", "12"]
    assert read_table(markup)["parameters"].tolist() == [1234567, 12]


def test_significant_figures_keep_their_zeros_so_a_column_reads_alike():
    """Fill-mask's probabilities read 0.000198 below 0.0002411: "%.4g" drops a last zero; a column keeps four figures."""
    markup = render_table(pd.DataFrame({"p": [0.0002411, 0.000198, 0.5, 1.0]}), "probabilities", {"p": "%.4g"})
    assert cell_texts(markup) == ["0.0002411", "0.0001980", "0.5000", "1.000"]
    assert read_table(markup)["p"].tolist() == [0.0002411, 0.000198, 0.5, 1.0]


def test_user_text_in_a_cell_is_shown_literally_not_as_html():
    """A typed ``<b>x</b>`` was drawn bold (and a script tag would have been markup too)."""
    markup = render_table(pd.DataFrame({"token": ["<b>x</b>", "a & b"]}), "tokens")
    assert cell_texts(markup) == ["&lt;b&gt;x&lt;/b&gt;", "a &amp; b"]
    assert "<b>" not in markup
    assert read_table(markup)["token"].tolist() == ["<b>x</b>", "a & b"]
