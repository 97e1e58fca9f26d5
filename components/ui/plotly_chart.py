"""A plotly chart drawn by BERT Lens's own plotly.js, in place of ``st.plotly_chart``.

Streamlit draws plotly charts with the whole of plotly.js (a 4.7 MB chunk, every trace type there is), compiled
once per browser tab: a page with one three-point chart settled 2.6–3.4 × later than a bare page in a new tab.
``static/plotly/`` holds plotly.js built with only the traces BERT Lens draws (``frontend/plotly``: 1.3 MB, and
the 3D traces in a file of their own, fetched only for a 3D chart); ``static/plotly/theme.json`` is Streamlit's
chart theme as Streamlit draws it with this app's theme (``scripts/chart_theme.py``), so the charts look as
before. The element is a Streamlit custom component (``st.components.v2``, no iframe) whose code is
``static/plotly_chart.js``: the figure goes as plotly JSON, a click on a point with ``customdata`` comes back as
the chart's ``pick``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

STATIC = Path(__file__).resolve().parents[2] / "static"  # served at app/static/ (.streamlit/config.toml)
STATIC_FILES = STATIC / "plotly"  # the plotly.js build
ELEMENT_CODE = STATIC / "plotly_chart.js"  # what draws a chart in the browser
ELEMENT = "bertlens_chart"  # the element's name, in its AppTest proto too (``component_name``)
FIGURE_FIRST = '{"figure":'  # the payload's start: the figure's JSON follows
# The trace types static/plotly/ draws (frontend/plotly/src/plotly.js registers them; scatter is plotly's core).
TRACES = frozenset({"scatter", "bar", "heatmap", "sunburst", "scatter3d"})
# The build's files and the element's code, as one version in their URLs: a browser that kept an old entry file
# would ask for chunks a new build no longer has.
VERSION = hashlib.sha256(
    b"".join(path.read_bytes() for path in [*sorted(STATIC_FILES.iterdir()), ELEMENT_CODE])
).hexdigest()[:12]
# app/static/ from Streamlit's own bundle (static/js/…), so that a base path is kept; plotly.js's URL there,
# exactly as the element's code imports it (one module per tab, home's preload included).
STATIC_FROM_BUNDLE = "../../app/static/"
ENTRY_FROM_BUNDLE = f"{STATIC_FROM_BUNDLE}plotly/plotly.js?v={VERSION}"
# What goes with every chart (Streamlit sends an element's code with each of its messages): only a loader of
# static/plotly_chart.js, which the browser fetches once per tab and keeps in its cache (the code itself, 4.5 kB,
# went with every chart of every run), and of plotly.js beside it (the module the code imports: not one fetch
# after the other). A chart whose code or plotly.js cannot be fetched says so beside it.
ENTRY = """
const bundle = document.querySelector('script[src*="/static/js/"]');
const fetched = (path) => import(new URL(path, bundle ? bundle.src : document.baseURI).href);
const element = fetched("CODE");
fetched("PLOTLY").catch(() => {});
function failed(parentElement, error) {
  const message = parentElement.querySelector(".bl-chart-error") ?? parentElement.appendChild(document.createElement("p"));
  message.className = "bl-chart-error";
  message.textContent = `This chart could not be drawn (${error}): reload the page to try again.`;
}
export default function (component) {
  const fail = (error) => failed(component.parentElement, error);
  const drawn = element.then(({ draw }) => draw(component, fail));
  drawn.catch(fail);
  return () => drawn.then((leave) => leave(), () => {});
}
""".replace("CODE", f"{STATIC_FROM_BUNDLE}{ELEMENT_CODE.name}?v={VERSION}").replace("PLOTLY", ENTRY_FROM_BUNDLE)
_draw = st.components.v2.component(ELEMENT, js=ENTRY, isolate_styles=False)


def figure_payload(fig: go.Figure, config: dict[str, Any], alt: str, pick: bool = False) -> bytes:
    """What the browser gets: the figure as plotly JSON (typed arrays as base64) less its template (the browser
    draws in Streamlit's theme, static/plotly/theme.json: a template is 3.4 kB), its plotly config, its name, and
    whether a click on a point picks it (otherwise a click reruns nothing)."""
    if missing := {trace.type for trace in fig.data} - TRACES:
        raise ValueError(f"static/plotly/ cannot draw {sorted(missing)}: add it to frontend/plotly and TRACES")
    written = fig.to_dict()  # a copy: a shared figure is never written to
    written["layout"].pop("template", None)
    figure = pio.to_json(written, validate=False)
    rest = json.dumps({"config": config, "alt": alt, "pick": pick})[1:]
    return f"{FIGURE_FIRST}{figure},{rest}".encode()


def plotly_chart(
    fig: go.Figure, *, key: str, alt: str, config: dict[str, Any], on_pick: Callable[[Any], None] | None = None
) -> None:
    """Draw ``fig`` as wide as its container (its own height); ``alt`` names it (role "figure"). ``on_pick``: called
    with a clicked point's ``customdata`` (a list of its values) before the rerun that click causes."""
    _draw(
        data=figure_payload(fig, config, alt, pick=on_pick is not None),
        key=key,
        width="stretch",
        height="content",
        on_pick_change=_picking(key, fig, on_pick) if on_pick else None,
    )


def _picking(key: str, fig: go.Figure, on_pick: Callable[[Any], None]) -> Callable[[], None]:
    """The pick callback of the chart drawn as ``fig``: a pick that is not one of its points' customdata (only a
    forged message sends one) is dropped, so that ``on_pick`` never sees a value the chart could not send."""
    points = {
        tuple(point)
        for trace in fig.data
        if trace.customdata is not None
        for point in trace.customdata
        if isinstance(point, list | tuple | np.ndarray)  # a point with one value (a number, a word) picks nothing
    }

    def picked() -> None:
        value = st.session_state[key]["pick"]
        if isinstance(value, list) and all(isinstance(v, int | float | str) for v in value) and tuple(value) in points:
            on_pick(value)

    return picked
