"""Colours and marks every chart can tell apart with any colour vision (no plotly or Streamlit needed).

Okabe–Ito hues, only those with ≥ 3:1 contrast on white (WCAG 1.4.11); a chart that tells groups apart
pairs each colour with a shape (markers) or a dash (lines), so no group is told by colour alone.
"""

from __future__ import annotations

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000")
# "x" last: in a 3D map plotly draws it as the glyph ❌ (U+274C), which many systems' fonts lack (an empty box)
SYMBOLS = ("circle", "square", "diamond", "cross", "circle-open", "square-open", "diamond-open", "x")
DASHES = ("solid", "dash", "dot", "dashdot")  # plotly line dashes; 4 and 5 colours share no factor


def rgba(hex_colour: str, alpha: float) -> str:
    """``#rrggbb`` at opacity ``alpha``, as plotly reads it."""
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha:.2f})"


def line_style(n: int) -> tuple[str, str]:
    """Colour and dash of the n-th line group: any two of the first 20 differ in dash or colour, any two
    of the first 4 in both (so no group is told by colour alone)."""
    return PALETTE[n % len(PALETTE)], DASHES[n % len(DASHES)]


INK = "#31333F"  # the page's own text colour: 12.6:1 on white
# Heatmaps that print their numbers in the cells: light blues under black text, at least 8:1 in every cell (plotly's
# own pick of #444 or white on a full blue scale gave 3.1-3.2:1 on its middle blues).
LIGHT_BLUES = [[0.0, "#f7fbff"], [1.0, "#6baed6"]]
CELL_TEXT = {"color": "#000000"}
