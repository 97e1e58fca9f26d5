"""Write Streamlit's chart theme, as Streamlit draws it with this app's theme, to static/plotly/theme.json.

    python -m scripts.chart_theme

BERT Lens draws its charts with its own plotly.js (components/ui/plotly_chart.py), so Streamlit's chart theme is not
applied by Streamlit. That theme is Python's "streamlit" plotly template with placeholder colours, which
Streamlit's frontend replaces by the page theme's colours and completes with fonts, grid and margins. This script
reads the finished template from a chart drawn by ``st.plotly_chart`` in Chromium (with .streamlit/config.toml's
theme) and saves it. Run it again after a Streamlit upgrade or a theme change;
tests/browser/test_charts.py fails until then.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from scripts.server import running_server
from scripts.visits import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
THEME = ROOT / "static" / "plotly" / "theme.json"
PROBE = (
    "import plotly.graph_objects as go\nimport streamlit as st\n\nst.plotly_chart(go.Figure(go.Scatter(y=[1, 3, 2])))\n"
)
TEMPLATE = "() => document.querySelector('.js-plotly-plot .main-svg') && document.querySelector('.js-plotly-plot').layout.template"


def streamlit_theme(browser: Browser) -> dict[str, Any]:
    """The template of a chart drawn by ``st.plotly_chart`` in ``browser`` (Playwright's Chromium), on a server run
    from the repository (so with its .streamlit/config.toml)."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.py"
        probe.write_text(PROBE)
        with running_server("unused", Path(tmp) / "server.log", script=str(probe)) as server:
            tab = browser.new_page()
            try:
                tab.goto(server.url)
                theme: dict[str, Any] = tab.wait_for_function(TEMPLATE, timeout=60_000).json_value()
                return theme
            finally:
                tab.close()


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        THEME.write_text(json.dumps(streamlit_theme(browser), indent=1, sort_keys=True) + "\n")
        browser.close()
    print(THEME)


if __name__ == "__main__":
    main()
