"""Attention page: every layer and head as a heatmap, a head view and thumbnails; head statistics
that find the seeds' patterns; token focus; attention rollout; one head step by step; two sentences
compared; mask and see. Everything reads the one forward pass, except Compare (the second sentence's
pass) and Mask and see (one more pass per hidden token; every token in turn: one batched pass)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from components.services import cache
from components.state.widgets import sentence_pair
from components.ui.layout import explains_family_gaps, page_header, require_text, truncation_notice
from components.views.attention import compare
from components.views.attention import sections as views
from components.views.attention import steps as steps

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_tab_container import TabContainer

bundle, stage = page_header("Attention", "Who attends to whom, in every layer and head.", page="attention")
with stage.side:
    views.preset_buttons()
    text, text_b = sentence_pair("Sentence B (optional: makes a pair)")
    views.preset_questions(text, text_b, bundle.capabilities.num_layers)
with stage.picture:
    readable = require_text(text)

if readable:
    model_name = bundle.name  # the model actually loaded keys every cached result
    with stage.picture, st.spinner("Running the model…"):
        query = cache.query(model_name, text, text_b)  # keys every cached result of this run
        analysis = cache.analysis(query)
    with stage.picture:
        truncation_notice(analysis.encoding)
    page = views.PageInput(query, analysis)
    heads = bundle.capabilities.num_heads

    with stage.side:
        choice = views.controls(bundle)
    with stage.picture:
        heatmap, head_view, overview, statistics, focus, step, comparison, mask_and_see = views.open_tabs()
    # Each drawn inside its tab's panel, and only while that tab is open.
    sections: list[tuple[TabContainer, Callable[[], None]]] = [
        (heatmap, lambda: views.heatmap_section(page, choice, heads)),
        (head_view, lambda: views.head_view_section(page, choice, heads)),
        (overview, lambda: views.overview_section(page, choice, bundle)),
        (statistics, lambda: views.statistics_section(page, choice)),
        (focus, lambda: views.token_focus_section(page, choice, heads)),
        (step, lambda: steps.head_steps_section(page, choice)),
        (comparison, lambda: compare.attention_compare_section(page, choice, heads)),
        (mask_and_see, lambda: steps.mask_and_see_section(page, choice, heads)),
    ]
    for tab, draw in sections:
        if tab.open:
            with tab, explains_family_gaps():
                draw()
