"""Fill-mask: BERT's guesses at each [MASK], how likely it found the true word, the guesses after every
layer, and two sentences compared."""

import streamlit as st

from bertlens import mlm
from bertlens.mlm import MAX_K, mask_notices, missing_mask_message
from components import cache, compare_views
from components import prediction_views as views
from components.layout import page_header, require_text, stop_page, truncation_notice
from components.state import (
    bound_int_slider,
    int_in_range,
    keep_in_range,
    lazy_tabs,
    linked_text,
    note_b_not_read,
    shared_text,
    warn_bad_param,
)

bundle = page_header(
    "Fill-mask",
    "Masked language modelling, BERT's first pre-training task: hide a word behind [MASK] and let BERT guess it.",
    page="fill_mask",
)
text = shared_text(help="Put [MASK] (in capitals) where BERT should guess a word; several masks are allowed.")
note_b_not_read("fill-mask reads this one sentence")
if not views.has_head(bundle, "fill-mask"):
    views.no_head_explanation(bundle, "fill-mask")
    stop_page()
if not require_text(text):
    stop_page()

missing = missing_mask_message(text)
learning = views.pretraining_shown()  # pre-training chooses its own tokens: it needs no [MASK]
if missing and not learning:
    st.info(missing)
with st.expander("Mask a word of the sentence", expanded=missing is not None and not learning):
    views.mask_word_helper(text)
views.pretraining_section(cache.query(bundle.name, text))
if missing:
    stop_page()  # no forward pass until there is something to predict

model_name = bundle.name  # the model actually loaded keys every cached result
query = cache.query(model_name, text)  # keys every cached result of this run
analysis = cache.analysis(query)
truncation_notice(analysis.encoding)
for note in mask_notices(text, analysis):
    st.warning(note)
if not analysis.mask_positions:
    stop_page()  # every mask is beyond the cut (said above)

k = bound_int_slider("Top-k guesses per mask", "k", 1, MAX_K, default=10)
guesses = cache.mask_guesses(query, k)
word_column, mask_column = st.columns([3, 1])
with word_column:
    typed = linked_text(
        st.text_input,
        "Original word — or one per mask, separated by commas (for the true-word checks)",
        "true_word",
        placeholder="e.g. paris",
    )
mask_number = 1
if len(guesses) > 1:
    warn_bad_param("at_mask", int_in_range(1, len(guesses)), f"a mask number from 1 to {len(guesses)}")
    keep_in_range("at_mask", 1, len(guesses))
    with mask_column:
        mask_number = st.selectbox("At mask", range(1, len(guesses) + 1), key="at_mask", bind="query-params")
words, problem = mlm.true_words(typed, len(guesses), mask_number)
if problem:
    st.warning(problem)
word = words.get(mask_number, "")

guesses_tab, layers_tab, compare_tab = lazy_tabs(views.FILL_MASK_TABS, "fill_tab")
if guesses_tab.open:
    with guesses_tab:
        views.guesses_section(query, guesses, words)
        views.true_word_section(query, word, mask_number, bundle.capabilities.vocab_size)
if layers_tab.open:
    with layers_tab:
        views.layer_guesses_view(cache.guesses_by_layer(query, k, mask_number, word))
if compare_tab.open:
    with compare_tab:
        compare_views.fill_mask_compare_section(model_name, text, analysis, k, mask_number)
