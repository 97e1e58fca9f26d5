"""Chart titles fitted to a phone's width (components.ui.exports.fit_title); the browser check is in
tests/browser/test_accessibility.py (every chart title inside its chart at 320 px)."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from components.ui.exports import PLOTLY_TOP_MARGIN, TITLE_LINE, fit_title, title_lines

TITLES = [
    "“field” — hidden state 2 (after encoder layer 1), PCA 2D",
    "Mean pairwise cosine: static embedding vs each hidden state",
    "Token 0 ([CLS]): its embeddings, dimension by dimension (each row on its own colour scale)",
    "Where 'supercalifragilisticexpialidociousnessandmore' looks — Encoder layer 11, head 11",
]


@pytest.mark.parametrize("title", TITLES)
def test_a_long_title_keeps_every_word_in_lines_that_fit(title):
    lines = title_lines(title)
    assert " ".join(lines) == title
    assert all(len(line) <= TITLE_LINE or " " not in line for line in lines)  # a longer word alone on its line
    assert len(lines) >= 2


def test_a_long_word_takes_a_line_of_its_own_and_the_others_keep_to_the_limit():
    title = (
        "the head of the encoder layer reads the token supercalifragilisticexpialidociousnessandmoremore "
        "and the other words of the sentence after it are long enough"
    )
    lines = title_lines(title)
    assert "supercalifragilisticexpialidociousnessandmoremore" in lines
    assert all(len(line) <= TITLE_LINE for line in lines if " " in line), lines


def test_two_lines_break_after_the_dash_or_colon_where_both_fit():
    assert title_lines("'10 it' → targets: head 1 in each encoder layer") == [
        "'10 it' → targets:",  # the most even of the breaks after "→" and ":"
        "head 1 in each encoder layer",
    ]
    assert title_lines("Where '10 it' looks — Encoder layer 0, head 0") == [
        "Where '10 it' looks —",
        "Encoder layer 0, head 0",
    ]
    assert title_lines(TITLES[0]) == ["“field” — hidden state 2 (after", "encoder layer 1), PCA 2D"]  # none fits: even


def test_three_lines_are_as_even_as_they_can_be():
    lengths = [len(line) for line in title_lines(TITLES[2])]
    assert len(lengths) == 3 and max(lengths) - min(lengths) <= 10, lengths


def test_fit_title_wraps_a_long_title_and_grows_the_top_margin_by_a_line():
    fig = go.Figure(layout={"title": TITLES[1], "margin": {"t": 50}})
    fit_title(fig)
    assert fig.layout.title.text == "Mean pairwise cosine: static<br>embedding vs each hidden state"
    assert fig.layout.margin.t == 50 + round(1.3 * 16)
    unset = go.Figure(layout={"title": TITLES[2], "title_font_size": 19})  # plotly's default margin, larger text
    fit_title(unset)
    assert unset.layout.margin.t == PLOTLY_TOP_MARGIN + round(2 * 1.3 * 19)
    flush = go.Figure(layout={"title": TITLES[1], "margin": {"t": 0}})  # a margin of 0 is a margin, not "unset"
    fit_title(flush)
    assert flush.layout.margin.t == round(1.3 * 16)


@pytest.mark.parametrize("title", ["Encoder layer 0, head 0", "A title <i>with its own markup</i> of some length here"])
def test_fit_title_leaves_a_short_title_or_one_with_markup_as_it_is(title):
    fig = go.Figure(layout={"title": title, "margin": {"t": 50}})
    fit_title(fig)
    assert (fig.layout.title.text, fig.layout.margin.t) == (title, 50)
