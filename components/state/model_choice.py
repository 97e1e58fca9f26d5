"""Which model this session uses: the picker's choice, else the link's ``model``, else the server's default."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from bertlens.comparison import default_partner
from bertlens.models import LOAD_COUNTS, ModelBundle, is_folder, needs_download
from components.services import warm_start
from components.services.models import cached_bundle, claim_custom_slot, offered_besides
from components.services.settings import settings
from components.services.text import literal
from components.state.params import warn_bad_param

CUSTOM = "Custom Hub id or folder…"
MODEL_KEY, CUSTOM_KEY = "model", "custom_model"
MAX_MODEL_NAME_CHARS = 512  # a Hub id has at most 96 + 1 + 96; a folder path longer than this is not a model


def active_model_name() -> str:
    """Sidebar choice, else the link's ``model`` (when it is one of the offered models), else the default."""
    config = settings()
    chosen = chosen_option()
    if chosen == CUSTOM and config.allow_custom_models:
        custom = chosen_custom_model()
        return custom if custom and claim_custom_slot(custom) else config.default_model
    return chosen if chosen in config.model_options else config.default_model


def chosen_option() -> str | None:
    """The picker's choice, or the link's ``model`` before the picker is drawn."""
    return st.session_state.get(MODEL_KEY) or st.query_params.get(MODEL_KEY)


def chosen_custom_model() -> str:
    """The Hub id or folder typed as the custom model (or a link's), "" when none. A folder is named by its resolved
    path: /models/bert/ and ../models/bert are one model (loaded once, counted once)."""
    name = (st.session_state.get(CUSTOM_KEY) or st.query_params.get(CUSTOM_KEY) or "")[:MAX_MODEL_NAME_CHARS].strip()
    return str(Path(name).expanduser().resolve()) if name and is_folder(name) else name


def active_bundle() -> ModelBundle:
    """The active model; its first load also starts computing every page's presets in the background."""

    name = active_model_name()
    if LOAD_COUNTS[name] == 0:  # first load in this process: show progress naming the model
        action = "Downloading (first use) and loading" if needs_download(name) else "Loading"
        with st.status(f"{action} {literal(name)}…", expanded=False) as status:
            bundle = cached_bundle(name)
            status.update(label=f"Loaded {literal(bundle.name)} in {bundle.load_seconds:.1f} s", state="complete")
    else:
        bundle = cached_bundle(name)
    warm_start.warm_up(bundle.name)  # what pages key their results by: after a fallback, not the model asked for
    return bundle


def picker_options() -> list[str]:
    config = settings()
    return [*config.model_options, *([CUSTOM] if config.allow_custom_models else [])]


def refuse_unoffered_model() -> None:
    """Say so when the link names a model this server does not offer (it is never loaded)."""
    custom = f" (or {CUSTOM} in the sidebar, then its Hub id or folder)" if settings().allow_custom_models else ""
    warn_bad_param(MODEL_KEY, lambda name: name in picker_options(), f"one of the models this server offers{custom}")


SECOND_MODEL = "second_model"  # the link's parameter: the model set beside the active one (Model anatomy, Two models)


def second_model_choice(bundle: ModelBundle) -> str:
    """The model set beside ``bundle`` (the two models compared, and a comparison question's second model): the
    page's or the link's choice when this server offers it, else ``bertlens.comparison.default_partner``; "" when the
    server offers no other model."""
    offered = offered_besides(bundle.name)
    chosen = st.session_state.get(SECOND_MODEL, st.query_params.get(SECOND_MODEL))
    if chosen in offered:
        return str(chosen)
    return default_partner(bundle.name, bundle.description.family, offered) or ""
