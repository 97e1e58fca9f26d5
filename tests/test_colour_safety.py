"""Charts a colour-blind student can read: no group told by colour alone, every mark visible on white."""

from __future__ import annotations

import plotly.graph_objects as go

from components.senses_views import PALETTE, SYMBOLS, sense_marker


def contrast_on_white(hex_colour: str) -> float:
    """WCAG 2.2 contrast ratio of an sRGB colour against white."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


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
