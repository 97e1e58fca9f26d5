"""Fill-mask: the model's guesses at each of its mask tokens ([MASK], RoBERTa's <mask>), how likely it found the
true word, the guesses after every layer, and two sentences compared; ELECTRA's discriminator: which tokens look
replaced."""

import streamlit as st

from bertlens.mlm import DEFAULT_K, MAX_K, mask_notices, missing_mask_message, with_mask_token
from components.services import cache
from components.services.page_flow import stop_page
from components.state.widgets import (
    bound_int_slider,
    lazy_tabs,
    note_b_not_read,
    rewrite_shared_text,
    shared_text,
    typed_text,
)
from components.ui.layout import page_header, require_text, truncation_notice
from components.ui.predictions import no_head_explanation
from components.views.fill_mask import compare as compare_views
from components.views.fill_mask import sections as views

bundle, stage = page_header(
    "Fill-mask", "Masked language modelling: hide a word behind the mask token and let the model guess it.",
    page="fill_mask",
)  # fmt: skip
mask = bundle.description.mask_token
rewritten_from = rewrite_shared_text(lambda typed: with_mask_token(typed, mask))  # a link or lesson's [MASK]
with stage.side:
    text = shared_text(help=f"Put {mask} where the model should guess a word; several masks are allowed.")
    if rewritten_from is not None:
        views.mask_token_rewritten(bundle.description, rewritten_from)
    note_b_not_read("fill-mask reads this one sentence")
with stage.picture:
    if bundle.description.has("RTD"):  # ELECTRA's discriminator: no masks, but it tells replaced tokens
        views.replaced_tokens_section(bundle.name, text)
        stop_page()
    if not bundle.capabilities.predicts("MLM"):
        no_head_explanation(bundle, "MLM")
        stop_page()
    if not require_text(text):
        stop_page()
    missing = missing_mask_message(text, typed_text(), mask)
    learning = views.pretraining_shown()  # pre-training chooses its own tokens: it needs no [MASK]
    if missing and not learning:
        st.info(missing)
expanded = missing is not None and not learning
with stage.side, st.container(key="mask_helper"), st.expander("Mask a word of the sentence", expanded=expanded):
    views.mask_word_helper(text, mask)  # in a keyed part: once its button has masked, focus goes to the part's summary
with stage.picture:
    query = cache.query(bundle.name, text)  # the model actually loaded keys every cached result of this run
    views.pretraining_section(query)
    if missing:
        stop_page()  # no forward pass until there is something to predict
    analysis = cache.analysis(query)
    truncation_notice(analysis.encoding)
    for note in mask_notices(text, analysis, mask):
        st.warning(note)
    if not analysis.mask_positions:
        stop_page()  # every mask is beyond the cut (said above)

with stage.side:
    k = bound_int_slider("Top-k guesses per mask", "k", 1, MAX_K, default=DEFAULT_K)
guesses = cache.mask_guesses(query, k)
with stage.side:
    words, mask_number = views.true_word_choice(len(guesses))
word = words.get(mask_number, "")

with stage.picture:
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
        compare_views.fill_mask_compare_section(query.model, text, analysis, k, mask_number)
