"""Landing page: what BERT is and what each page shows."""

import streamlit as st

from bertlens.pages import APP_TITLE
from components.ui.layout import how_to_read, page_header
from components.ui.lessons import lesson_list
from components.views.home.cards import page_cards, preload_charts
from components.views.home.live_class import live_class_section

bundle, _ = page_header(
    APP_TITLE, "See inside BERT: tokens, weights, predictions, attention and meaning.", page="home", staged=False
)
how_to_read(
    """
**BERT** (Devlin et al., 2019) is a stack of Transformer encoder layers pre-trained on two tasks:
guessing hidden words (*masked language modelling*) and telling whether sentence B follows
sentence A (*next sentence prediction*). Every token attends to every other token in both
directions, so each word's vector is shaped by its whole context. BERT Lens lets you look at
each step. The sentence you type follows you from page to page and lives in the link, so a
copied URL shows the same view.
""",
    label="What is BERT?",
)

st.header("Lessons", anchor=False)
lesson_list(bundle)

live_class_section(bundle)  # join by code, or start one

st.header("Pages", anchor=False)
page_cards()
preload_charts()  # in the background: the student's first chart page draws at once
