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

import hashlib
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
# The build's files, as one version in their URLs: a browser that kept an old entry file would ask for chunks a
# new build no longer has.
VERSION = hashlib.sha256(b"".join(path.read_bytes() for path in sorted(STATIC_FILES.iterdir()))).hexdigest()[:12]
# static/plotly/ from Streamlit's own bundle (static/js/…), so that a base path is kept; plotly.js's URL there,
# exactly as the charts import it (one module per tab, home's preload included).
STATIC_FROM_BUNDLE = "../../app/static/plotly/"
ENTRY_FROM_BUNDLE = f"{STATIC_FROM_BUNDLE}plotly.js?v={VERSION}"
_draw = st.components.v2.component(
    ELEMENT,
    js=Path(__file__)
    .with_name("plotly_chart.js")
    .read_text()
    .replace("__STATIC__", STATIC_FROM_BUNDLE)
    .replace("__BUILD__", VERSION),
    isolate_styles=False,
)


def figure_payload(fig: go.Figure, config: dict, alt: str, pick: bool = False) -> bytes:
    """What the browser gets: the figure as plotly JSON (typed arrays as base64), its plotly config, its name, and
    whether a click on a point picks it (otherwise a click reruns nothing)."""
    if missing := {trace.type for trace in fig.data} - TRACES:
        raise ValueError(f"static/plotly/ cannot draw {sorted(missing)}: add it to frontend/plotly and TRACES")
    figure = pio.to_json(fig, validate=False)
    rest = json.dumps({"config": config, "alt": alt, "pick": pick})[1:]
    return f"{FIGURE_FIRST}{figure},{rest}".encode()


def plotly_chart(
    fig: go.Figure, *, key: str, alt: str, config: dict, on_pick: Callable[[Any], None] | None = None
) -> None:
    """Draw ``fig`` as wide as its container (its own height); ``alt`` names it (role "figure"). ``on_pick``: called
    with a clicked point's ``customdata`` before the rerun that click causes."""
    picked = (lambda: on_pick(st.session_state[key]["pick"])) if on_pick else None
    _draw(
        data=figure_payload(fig, config, alt, pick=on_pick is not None),
        key=key,
        width="stretch",
        height="content",
        on_pick_change=picked,
    )
