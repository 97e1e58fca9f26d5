"""The one model-loading point, the model picker and the model's status.

Every page gets its model through ``active_bundle()``: it works the same whether the page runs
inside ``app.py`` or on its own (a shared link, ``AppTest.from_file("pages/x.py")``).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import streamlit as st

from bertlens.analysis import Analysis, analyze
from bertlens.models import BUNDLED_MODEL, LOAD_COUNTS, ModelBundle, load_with_fallback, needs_download
from bertlens.serving import freeze_long_lived_objects
from bertlens.settings import Settings, SettingsError, load_settings, merged_environment
from components.state import warn_bad_param
from components.text import code_span, literal

CUSTOM = "Custom Hub id or folder…"
MODEL_KEY, CUSTOM_KEY = "model", "custom_model"


@st.cache_resource(show_spinner=False)
def cached_bundle(name: str) -> ModelBundle:
    """One frozen tokenizer+model per model name, shared by all sessions (never mutated)."""
    bundle = load_with_fallback(name, load=cached_bundle)
    freeze_long_lived_objects()
    return bundle


def cached_analysis(model_name: str, text: str, text_b: str = "") -> Analysis:
    """The one forward pass for (model, input), under the deployment's token cap."""
    return _cached_analysis(model_name, text, text_b, settings().token_cap)


@st.cache_resource(show_spinner=False, max_entries=8, ttl=3600)
def _cached_analysis(model_name: str, text: str, text_b: str, token_cap: int | None) -> Analysis:
    """``cache_resource`` rather than ``cache_data``: at 512 tokens the attentions alone are
    150 MB, which ``cache_data`` would copy (pickle) on every rerun. The arrays are read-only."""
    return analyze(cached_bundle(model_name), text, text_b or None, token_cap)


def settings() -> Settings:
    """Read per run: cheap, and the environment (or secrets) may change between runs.

    A ``[bertlens]`` table in Streamlit secrets sets the same values; a non-blank environment
    variable wins. A malformed setting fails closed: an error, and nothing else of the page runs.
    """
    try:
        return load_settings(merged_environment(os.environ, _secret_settings()))
    except SettingsError as error:
        st.error(f"**This server's settings cannot be read, so it serves no page.** {literal(str(error))}",
                 icon=":material/error:")
        st.stop()


def _secret_settings() -> Mapping[str, Any]:
    try:
        return st.secrets.get("bertlens") or {}
    except FileNotFoundError:  # no secrets file: nothing to read
        return {}


def active_model_name() -> str:
    """Sidebar choice, else the link's ``model`` (when it is one of the offered models), else the default."""
    config = settings()
    chosen = st.session_state.get(MODEL_KEY) or st.query_params.get(MODEL_KEY)
    if chosen == CUSTOM and config.allow_custom_models:
        return (st.session_state.get(CUSTOM_KEY) or "").strip() or config.default_model
    return chosen if chosen in config.model_options else config.default_model


def active_bundle() -> ModelBundle:
    name = active_model_name()
    if LOAD_COUNTS[name] == 0:  # first load in this process: show progress naming the model
        action = "Downloading (first use) and loading" if needs_download(name) else "Loading"
        with st.status(f"{action} {literal(name)}…", expanded=False) as status:
            bundle = cached_bundle(name)
            status.update(label=f"Loaded {literal(bundle.name)} in {bundle.load_seconds:.1f} s", state="complete")
        return bundle
    return cached_bundle(name)


def picker_options() -> list[str]:
    config = settings()
    return [*config.model_options, *([CUSTOM] if config.allow_custom_models else [])]


def refuse_unoffered_model() -> None:
    """Say so when the link names a model this server does not offer (it is never loaded)."""
    warn_bad_param(MODEL_KEY, lambda name: name in picker_options(), "one of the models this server offers")


def model_picker() -> None:
    """The sidebar's model choice (bound to the URL as ``model``)."""
    refuse_unoffered_model()  # before the bound picker drops the link's value
    st.selectbox(
        "Model",
        picker_options(),
        key=MODEL_KEY,
        bind="query-params",
        help="Any BERT checkpoint: a Hugging Face Hub id or a local folder. "
        f"{BUNDLED_MODEL} is bundled and works offline.",
    )
    if st.session_state.get(MODEL_KEY) == CUSTOM:
        st.text_input("Hub id or local folder", key=CUSTOM_KEY, placeholder="e.g. bert-base-uncased or /models/my-bert")


def model_status(bundle: ModelBundle) -> None:
    """What is active and what it can do (sidebar)."""
    caps = bundle.capabilities
    st.markdown(f"**Active model:** {code_span(bundle.name)}")
    st.caption(caps.summary())
    if not caps.has_mlm_head or not caps.has_nsp_head:
        st.caption("Pages that need a missing head explain why instead of showing predictions.")


def fallback_banner(bundle: ModelBundle) -> None:
    """Say loudly when the requested model could not be loaded, why, and how to fix it."""
    refuse_unoffered_model()
    if not bundle.is_fallback:
        return
    headline = (
        "**Offline** — the app is running on the bundled encoder"
        if bundle.offline
        else f"**Could not load {literal(bundle.requested)}** — the app is running on the bundled encoder"
    )
    st.warning(
        f"{headline} `{BUNDLED_MODEL}` (6 layers, no fill-mask or next-sentence heads).\n\n"
        f"Why: {literal(bundle.fallback_reason or '')}\n\n"
        "To fix: on a connected machine run `hf download bert-base-uncased` (it fills the Hugging Face "
        "cache, which works offline afterwards), or point BERT Lens at a model folder with "
        "`BERTLENS_MODEL=/path/to/folder streamlit run app.py`.",
        icon="⚠️",
    )
    if st.button("Retry loading", key="retry_model_load"):
        # Results are cached under the requested name: drop the fallback model's along with it.
        cached_bundle.clear(bundle.requested)
        _cached_analysis.clear()
        st.cache_data.clear()
        st.rerun()
