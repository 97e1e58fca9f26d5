"""The chart element's own plotly.js (static/plotly/, built from frontend/plotly) and what it is sent."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from components.ui import plotly_chart
from components.ui.plotly_chart import FIGURE_FIRST, TRACES, figure_payload
from tests.conftest import ROOT

BUILT = ROOT / "static" / "plotly"
SOURCE = ROOT / "frontend" / "plotly" / "src" / "plotly.js"


def test_the_bundle_registers_exactly_the_traces_the_element_accepts():
    """TRACES (checked before a figure is sent) and the build's trace list agree: a chart with a trace the bundle
    lacks would draw nothing in the browser."""
    source = SOURCE.read_text()
    registered = set(re.findall(r'from "plotly\.js/lib/(\w+)"', source)) - {"core"}
    later = set(re.findall(r"(\w+): \(\) => import\(", source))
    assert registered | later | {"scatter"} == TRACES, (registered, later)


def test_the_built_files_are_all_there():
    """The entry's imports (the shared chunk, the 3D traces fetched later) are files beside it, and each chunk of
    the build is used: a stale file from an earlier build, or a missing one, shows here."""
    entry = (BUILT / "plotly.js").read_text()
    imported = set(re.findall(r'"\./([\w-]+\.js)"', entry))
    assert any(name.startswith("scatter3d-") for name in imported) and any(n.startswith("chunk-") for n in imported)
    assert imported | {"plotly.js"} == {path.name for path in BUILT.glob("*.js")}
    assert (BUILT / "theme.json").exists()


def test_the_payload_is_the_figure_as_plotly_writes_it_less_its_template_with_its_config_and_name():
    fig = go.Figure(go.Heatmap(z=[[0.25, 0.75], [1.0, 0.0]]), layout_title_text="A <b>bold</b> “title”")
    payload = figure_payload(fig, {"displaylogo": False}, 'Heatmap: "A" & <b>')
    sent = json.loads(payload)
    assert payload.decode().startswith(FIGURE_FIRST)
    written = json.loads(pio.to_json(fig, validate=False))
    assert written["layout"].pop("template")  # the browser draws in Streamlit's theme (static/plotly/theme.json)
    assert sent == {"figure": written, "config": {"displaylogo": False}, "alt": 'Heatmap: "A" & <b>', "pick": False}
    assert fig.layout.template.layout  # the figure itself keeps its template (a shared one is never written to)
    assert json.loads(figure_payload(fig, {}, "picks", pick=True))["pick"] is True


def test_a_trace_the_bundle_cannot_draw_is_refused_by_name():
    with pytest.raises(ValueError, match=r"\['pie'\]"):
        figure_payload(go.Figure(go.Pie(values=[1, 2])), {}, "pie")


@pytest.mark.parametrize(
    ("pick", "passed"), [([1, 2], True), ([0, 1], True), ([2, 1], False), (0.5, False), ("01", False)]
)
def test_a_pick_reaches_the_callback_only_as_one_of_the_charts_points(monkeypatch, pick, passed):
    """Points with one value (a number) beside points with two: the callback was built (it raised on them), and a
    value no point has, or not a list, never reaches it."""
    fig = go.Figure([go.Scatter(x=[0], y=[0], customdata=[0.5]),
                     go.Scatter(x=[1, 2], y=[1, 2], customdata=np.array([[0, 1], [1, 2]]))])  # fmt: skip
    picked: list = []
    callback = plotly_chart._picking("chart", fig, picked.append)
    monkeypatch.setattr(plotly_chart.st, "session_state", {"chart": {"pick": pick}})
    callback()
    assert picked == ([pick] if passed else [])
