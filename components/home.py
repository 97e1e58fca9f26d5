"""The home page's list of pages: a thumbnail of each page's view, its name (a link) and a one-line promise."""

from __future__ import annotations

from html import escape
from pathlib import Path

import streamlit as st

from components.layout import nav_link
from components.params import PAGE_TITLES

# Made by scripts/thumbnails.py; served by Streamlit's static serving (.streamlit/config.toml), so the
# browser caches them and no visit carries their bytes again.
THUMBNAILS = Path(__file__).resolve().parents[1] / "static" / "thumbnails"
THUMBNAIL_URL = "app/static/thumbnails"  # relative: right under any base path
THUMBNAIL_WIDTH = 480  # pixels; shown at the card's width (about a third of the page)
PROMISES = (  # page (file stem), what it shows in one line
    ("tokenizer", "how text becomes WordPiece tokens, ids, segments and attention masks; the vocabulary; padding."),
    ("anatomy", "the configuration, where the parameters are, and the embeddings and pooler checked live."),
    ("fill_mask", "BERT's guesses for each `[MASK]`, with probabilities and the loss of the true word."),
    ("next_sentence", "does B follow A? Probabilities, ranking of candidates, and an evaluation table."),
    ("attention", "every layer and head as heatmaps and lines, head statistics, rollout."),
    ("senses", "one word in many sentences: where does its meaning separate, layer by layer?"),
)


def page_cards(per_row: int = 3) -> None:
    """The pages as cards, ``per_row`` to a row (stacked on a phone). The thumbnail is decorative
    (``alt=""``): the link's words say where it goes."""
    for start in range(0, len(PROMISES), per_row):
        for column, (stem, promise) in zip(st.columns(per_row), PROMISES[start : start + per_row]):
            with column.container(border=True):
                st.html(thumbnail(stem))
                nav_link(f"pages/{stem}.py", f"**{PAGE_TITLES[stem]}**")
                st.caption(promise[0].upper() + promise[1:])


def thumbnail(stem: str) -> str:
    src = escape(f"{THUMBNAIL_URL}/{stem}.png")
    return f'<img src="{src}" alt="" width="{THUMBNAIL_WIDTH}" height="{THUMBNAIL_WIDTH * 9 // 16}" style="width:100%;height:auto">'
