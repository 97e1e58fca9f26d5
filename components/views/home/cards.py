"""The home page's list of pages (a thumbnail of each page's view, its name as a link, a one-line promise), and
plotly.js fetched while the student reads it."""

from __future__ import annotations

from html import escape
from pathlib import Path

import streamlit as st

from bertlens.pages import PAGES
from components.ui import plotly_chart
from components.ui.layout import nav_link

# Made by scripts/thumbnails.py; served by Streamlit's static serving (.streamlit/config.toml), so the
# browser caches them and no visit carries their bytes again.
THUMBNAILS = Path(__file__).resolve().parents[3] / "static" / "thumbnails"
THUMBNAIL_URL = "app/static/thumbnails"  # relative: right under any base path
THUMBNAIL_WIDTH = 480  # pixels; shown at the card's width (about a third of the page)
CARDS = tuple(page for page in PAGES if page.blurb)  # the registry's pages that promise something


# A tab fetches and compiles plotly.js (static/plotly/plotly.js, 1.3 MB: components/ui/plotly_chart.py) when a page
# first draws a chart. Home draws no chart, so once the student is reading (1 s in, when the browser is idle) it
# imports it; the first chart page then starts drawing at once. Found beside Streamlit's own bundle, at the URL the
# charts import (the same module, compiled once).
PRELOAD_CHARTS = """<script>
(() => {
  const bundle = document.querySelector('script[src*="/static/js/"]');
  if (!bundle || window.bertlensChartsPreloaded || navigator.connection?.saveData) return;
  window.bertlensChartsPreloaded = true;
  const idle = window.requestIdleCallback || ((work) => setTimeout(work, 0));
  setTimeout(() => idle(() => import(new URL("ENTRY", bundle.src)).catch(() => {})), 1000);
})();
</script>"""


def preload_charts() -> None:
    """Fetch and compile plotly.js in the background (``PRELOAD_CHARTS``); once per tab, whatever the reruns."""
    st.html(PRELOAD_CHARTS.replace("ENTRY", plotly_chart.ENTRY_FROM_BUNDLE), unsafe_allow_javascript=True)


def page_cards(per_row: int = 3) -> None:
    """The pages as cards, ``per_row`` to a row (stacked on a phone). The thumbnail is decorative
    (``alt=""``): the link's words say where it goes."""
    for start in range(0, len(CARDS), per_row):
        for column, page in zip(st.columns(per_row), CARDS[start : start + per_row]):
            with column.container(border=True):
                st.html(thumbnail(page.stem))
                nav_link(page.file, f"**{page.title}**")
                st.caption(page.blurb[0].upper() + page.blurb[1:])


def thumbnail(stem: str) -> str:
    src = escape(f"{THUMBNAIL_URL}/{stem}.png")
    return f'<img src="{src}" alt="" width="{THUMBNAIL_WIDTH}" height="{THUMBNAIL_WIDTH * 9 // 16}" style="width:100%;height:auto">'
