"""Next sentence: does B follow A? The verdict, the segments, a ranking of candidates, an evaluation. ALBERT's
sentence-order head: are A and B in order? A model without a pair head: why not."""

import streamlit as st

from bertlens.family import pair_head
from bertlens.nsp import next_sentence, sentence_order
from bertlens.wording import blank
from components.services import budgeted
from components.services.cache import cached_analysis
from components.services.page_flow import stop_page
from components.state.widgets import lazy_tabs
from components.ui.layout import page_header, truncation_notice
from components.ui.predictions import no_head_explanation
from components.views.next_sentence import sections as views

bundle, stage = page_header(
    "Next sentence", "Pre-training on sentence pairs: does sentence B follow sentence A?", page="next_sentence"
)
head = pair_head(bundle.description)  # NSP (BERT), SOP (ALBERT) or none
with stage.side:
    a, b = views.sentence_pair_inputs()

with stage.picture:
    if head is None:
        no_head_explanation(bundle, "NSP")
        stop_page()
    if blank(a) or blank(b):
        st.info("Type both sentences: A, and the B that may or may not follow it.")
        stop_page()

    model_name = bundle.name  # the model actually loaded keys every cached result
    analysis = cached_analysis(model_name, a, b)
    truncation_notice(analysis.encoding)
    verdict_tab, ranking_tab, evaluation_tab = lazy_tabs(views.NSP_TABS, "nsp_tab")
    if verdict_tab.open:
        with verdict_tab:
            if (verdict := next_sentence(analysis)) is not None:  # None without an NSP head
                views.verdict_view(verdict)
            if (order := sentence_order(analysis)) is not None:  # ALBERT: in order or swapped, never IsNext
                views.order_view(order, bundle.description.cls_token)
            views.segments_section(analysis, bundle.description)

    if head == "SOP":
        for tab in (ranking_tab, evaluation_tab):
            if tab.open:
                with tab:
                    views.no_is_next_scores(bundle.description)
    elif ranking_tab.open:
        with ranking_tab:
            st.caption("Which B follows A best? Each candidate is scored with A by the NSP head.")
            candidates = views.candidate_inputs()
            if candidates:
                with st.spinner("Scoring the candidates…"):
                    views.ranking_view(budgeted.ranking(model_name, a.strip(), candidates), model_name)
            else:
                st.info("Type at least one candidate B, one per line.")

    if head == "NSP" and evaluation_tab.open:
        with evaluation_tab:
            pairs = views.labelled_pairs()
            with st.spinner("Scoring the pairs…"):
                result = budgeted.evaluation(model_name, list(map(tuple, pairs.itertuples(index=False))))
            if result is None:
                st.info("No pair to score: every row needs sentence A, sentence B and a label.")
            else:
                views.evaluation_view(result, model_name)
