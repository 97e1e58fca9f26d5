"""A plotly chart drawn by BERT Lens's own plotly.js, in place of ``st.plotly_chart``.

Streamlit draws plotly charts with the whole of plotly.js (a 4.7 MB chunk, every trace type there is), compiled
once per browser tab: a page with one three-point chart settled 2.6–3.4 × later than a bare page in a new tab.
``static/plotly/`` holds plotly.js built with only the traces BERT Lens draws (``frontend/plotly``: 1.3 MB, and
the 3D traces in a file of their own, fetched only for a 3D chart); ``static/plotly/theme.json`` is Streamlit's
chart theme as Streamlit draws it with this app's theme (``scripts/chart_theme.py``), so the charts look as
before. The element is a Streamlit custom component (``st.components.v2``, no iframe): the figure goes as
plotly JSON, a click on a point with ``customdata`` comes back as the chart's ``pick``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

STATIC_FILES = Path(__file__).resolve().parents[1] / "static" / "plotly"  # served at app/static/plotly/
ELEMENT = "bertlens_chart"  # the element's name, in its AppTest proto too (``component_name``)
FIGURE_FIRST = '{"figure":'  # the payload's start: the figure's JSON follows
# The trace types static/plotly/ draws (frontend/plotly/src/plotly.js registers them; scatter is plotly's core).
TRACES = frozenset({"scatter", "bar", "heatmap", "sunburst", "scatter3d"})
_draw = st.components.v2.component(
    ELEMENT, js=Path(__file__).with_name("plotly_chart.js").read_text(), isolate_styles=False
)


def figure_payload(fig: go.Figure, config: dict, alt: str) -> bytes:
    """What the browser gets: the figure as plotly JSON (typed arrays as base64), its plotly config, its name."""
    if missing := {trace.type for trace in fig.data} - TRACES:
        raise ValueError(f"static/plotly/ cannot draw {sorted(missing)}: add it to frontend/plotly and TRACES")
    figure = pio.to_json(fig, validate=False)
    return f'{FIGURE_FIRST}{figure},"config":{json.dumps(config)},"alt":{json.dumps(alt)}}}'.encode()


def plotly_chart(
    fig: go.Figure, *, key: str, alt: str, config: dict, on_pick: Callable[[Any], None] | None = None
) -> None:
    """Draw ``fig`` as wide as its container (its own height); ``alt`` names it (role "figure"). ``on_pick``: called
    with a clicked point's ``customdata`` before the rerun that click causes."""
    picked = (lambda: on_pick(st.session_state[key]["pick"])) if on_pick else None
    _draw(data=figure_payload(fig, config, alt), key=key, width="stretch", height="content", on_pick_change=picked)
