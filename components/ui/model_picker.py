"""The sidebar's model picker and status, and the fallback banner every page shows when a model could not be loaded."""

from __future__ import annotations

import streamlit as st

from bertlens.models import BUNDLED_MODEL, ModelBundle
from components.services.cache import retry_load
from components.services.models import claim_custom_slot, custom_models_held
from components.services.settings import settings
from components.services.text import code_span, literal
from components.state.model_choice import (
    CUSTOM,
    CUSTOM_KEY,
    MAX_MODEL_NAME_CHARS,
    MODEL_KEY,
    chosen_custom_model,
    chosen_option,
    picker_options,
    refuse_unoffered_model,
)
from components.state.params import bound

HOSTED_RETRY_INTERVAL_SECONDS = 60.0  # hosted: a failed model is tried again at most this often


def refuse_custom_over_budget() -> None:
    """Say so when the custom model chosen is not loaded because the server holds its budget of them."""
    config = settings()
    custom = chosen_custom_model() if chosen_option() == CUSTOM and config.allow_custom_models else ""
    if custom and not claim_custom_slot(custom):
        held = ", ".join(code_span(name) for name in custom_models_held())
        st.warning(
            f"{code_span(custom)} is not loaded, and {code_span(config.default_model)} is used instead. This server "
            f"holds {held}: {config.budgets.limit('custom_models')}."
        )


def model_picker() -> None:
    """The sidebar's model choice (bound to the URL as ``model``)."""
    refuse_unoffered_model()  # before the bound picker drops the link's value
    st.selectbox(
        "Model",
        picker_options(),
        **bound(MODEL_KEY),
        help="BERT or one of its family (DistilBERT, RoBERTa, XLM-RoBERTa, CamemBERT, ALBERT, ELECTRA, ModernBERT): "
        f"a Hugging Face Hub id or a local folder. {BUNDLED_MODEL} is bundled and works offline.",
    )
    if st.session_state.get(MODEL_KEY) == CUSTOM:
        st.text_input(  # in the link too: a class link opens every student on the same custom model
            "Hub id or local folder",
            **bound(CUSTOM_KEY),
            max_chars=MAX_MODEL_NAME_CHARS,
            placeholder="e.g. roberta-base or /models/my-bert",
        )


def model_status(bundle: ModelBundle) -> None:
    """What is active and what it can do (sidebar, right under the picker). When the model chosen could not be
    loaded, the picker still shows it as its choice (its value is the link's ``model``, which asks for it again): the
    first line says that it is not loaded and what runs instead."""
    if bundle.is_fallback:
        st.warning(
            f"**Not loaded:** {code_span(bundle.requested)}. Running the bundled {code_span(bundle.name)} instead.",
            icon=":material/warning:",
        )
    caps = bundle.capabilities
    st.markdown(f"**Active model:** {code_span(bundle.name)}")
    st.caption(caps.summary())
    if bundle.description.missing:
        st.caption("Pages that need a missing head explain why instead of showing predictions.")


WHY = "Why, and how to fix it"


def fallback_banner(bundle: ModelBundle) -> None:
    """When the requested model could not be loaded: one line on every page (a projector's first
    screen is for the page), the reason and the fix one click away."""
    refuse_unoffered_model()
    refuse_custom_over_budget()
    if not bundle.is_fallback:
        return
    headline = "**Offline**" if bundle.offline else f"**Could not load {literal(bundle.requested)}**"
    line, details = st.columns([5, 1.4], vertical_alignment="center")  # one row: the page keeps the screen
    line.warning(
        f"{headline} — running on the bundled encoder (no fill-mask or next-sentence heads).", icon=":material/warning:"
    )
    with details.popover(WHY, width="stretch"):
        st.markdown(
            f"Why: {literal(bundle.fallback_reason or '')}\n\n"
            "To fix: on a connected machine run `hf download bert-base-uncased` (it fills the Hugging Face "
            "cache, which works offline afterwards), or point BERT Lens at a model folder with "
            "`BERTLENS_MODEL=/path/to/folder streamlit run app.py`."
        )
        _retry_button(bundle)


def _retry_button(bundle: ModelBundle) -> None:
    if st.button("Retry loading", key="retry_model_load"):
        interval = HOSTED_RETRY_INTERVAL_SECONDS if settings().hosted else 0.0
        wait = retry_load(bundle.requested, interval)
        if not wait:
            st.rerun()
        st.info(f"{literal(bundle.requested)} was just tried; try again in {wait:.0f} s.")
