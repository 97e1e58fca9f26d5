"""Charts a colour-blind student can read: no group told by colour alone, every mark visible on white."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from bertlens.analysis import encode
from components.ui.palette import CELL_TEXT, INK, LIGHT_BLUES, line_style
from components.views.attention.figures import FOCUS_KINDS, focus_row_figure, matrix_figure
from components.views.senses.sections import PALETTE, SYMBOLS, sense_marker


def luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    """WCAG 2.2 contrast ratio of two sRGB colours."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def contrast_on_white(hex_colour: str) -> float:
    return contrast(hex_colour, "#ffffff")


def test_numbers_in_heatmap_cells_read_at_8_to_1_on_every_cell():
    """Plotly's own pick of #444 or white on a full blue scale gave 3.1-3.2:1 on its middle blues; the light scale's
    ends bound every cell's colour (luminance is monotonic between them)."""
    assert min(contrast(CELL_TEXT["color"], cell) for _, cell in LIGHT_BLUES) >= 8


def test_each_sense_has_its_own_shape_and_colour():
    markers = [sense_marker(n) for n in range(len(PALETTE) * len(SYMBOLS))]
    assert len({(m["color"], m["symbol"]) for m in markers}) == len(markers)
    assert len({m["symbol"] for m in markers[: len(SYMBOLS)]}) == len(
        SYMBOLS
    )  # the first 8 senses differ by shape alone


def test_sense_colours_are_visible_on_white_and_not_red_against_green():
    assert all(contrast_on_white(colour) >= 3 for colour in PALETTE)  # WCAG 1.4.11: graphical objects
    assert "#EF553B" not in PALETTE and "#00CC96" not in PALETTE  # plotly's default red and green


def test_the_shapes_work_in_the_3d_map_too():
    for symbol in SYMBOLS:
        go.Scatter3d(x=[0], y=[0], z=[0], marker={"symbol": symbol})  # plotly rejects a 2D-only symbol
    assert SYMBOLS.index("x") == len(SYMBOLS) - 1  # 3D draws it as ❌, an empty box without an emoji font: the
    # default preset's fifth sense (Domain) showed as a box in Debian's Chromium


def test_the_focus_row_tells_its_bar_kinds_apart_by_pattern_as_well_as_colour(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, "the cat sat on the mat", max_length=32)
    row = np.full(len(encoding), 1 / len(encoding))
    bar = focus_row_figure(row, encoding, token=2, targets=[3, 5], title="t").data[0]
    kinds = list(bar.customdata)
    assert kinds[2] == "the token looking" and kinds[3] == kinds[5] == "a target" and kinds[1] == "other token"
    shapes = dict(zip(kinds, bar.marker.pattern.shape))
    colours = dict(zip(kinds, bar.marker.color))
    assert len(set(shapes.values())) == len(FOCUS_KINDS) == len(set(colours.values()))  # pattern alone suffices
    assert "%{customdata}" in bar.hovertemplate  # and the hover names the kind


def test_heads_drawn_together_differ_in_dash_as_well_as_colour():
    styles = [line_style(n) for n in range(20)]
    assert len(set(styles)) == 20
    assert all(a[0] != b[0] and a[1] != b[1] for i, a in enumerate(styles[:4]) for b in styles[i + 1 : 4])


def test_the_sentence_b_label_is_ink_on_white_over_a_heatmap(tiny_bundle):
    """QA: over the heatmap's blue cells the label was the chart theme's grey, mostly unreadable ("ntence B →")."""
    encoding = encode(tiny_bundle.tokenizer, "I went to the store.", "I bought milk.", max_length=32)
    fig = matrix_figure(np.full((len(encoding), len(encoding)), 1 / len(encoding)), encoding, "t")
    [label] = [a for a in fig.layout.annotations if a.text == "sentence B →"]
    assert label.font.color == INK and label.bgcolor.startswith("rgba(255, 255, 255")
    assert contrast_on_white(INK) >= 4.5
