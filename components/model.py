"""The one model-loading point, the model picker and the model's status.

Every page gets its model through ``active_bundle()``: it works the same whether the page runs
inside ``app.py`` or on its own (a shared link, ``AppTest.from_file("pages/x.py")``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit import config as st_config
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx, in_cached_function

from bertlens.engine import RequestTimeout, reporting_waits
from bertlens.models import BUNDLED_MODEL, LOAD_COUNTS, ModelBundle, is_folder, load_with_fallback, needs_download
from bertlens.serving import freeze_long_lived_objects
from bertlens.settings import (
    Settings,
    SettingsError,
    load_settings,
    merged_environment,
    secrets_table,
    unknown_variables,
)
from components.params import bound
from components.state import warn_bad_param
from components.text import code_span, literal

CUSTOM = "Custom Hub id or folder…"
MODEL_KEY, CUSTOM_KEY = "model", "custom_model"
MAX_MODEL_NAME_CHARS = 512  # a Hub id has at most 96 + 1 + 96; a folder path longer than this is not a model


HOSTED_RETRY_INTERVAL_SECONDS = 60.0  # hosted: a failed model is tried again at most this often

_load_finished: dict[str, float] = {}  # when each name's last load attempt ended
_loading: set[str] = set()  # names whose load is under way
_load_lock = threading.Lock()  # guards _loading and _load_finished
_custom_lock = threading.Lock()
_custom_loaded: set[str] = set()  # custom (not offered) models this process holds or is loading, within the budget
_custom_failed: set[str] = set()  # custom names whose load fell back to the bundled encoder: they hold no model


@st.cache_resource(show_spinner=False)
def cached_bundle(name: str) -> ModelBundle:
    """One frozen tokenizer+model per model name, shared by all sessions (never mutated).

    A model that cannot be loaded gives the bundled encoder with the reason (``load_with_fallback``
    catches every error), and that fallback is cached like any result: one attempt, not one per click.
    Derived results are keyed by ``bundle.name``, the model actually loaded, never by the request.
    """
    with _load_lock:
        _loading.add(name)
    try:
        bundle = load_with_fallback(name, load=cached_bundle)
        if not bundle.is_fallback:  # a fallback holds the bundled encoder's model, frozen when it was loaded
            freeze_long_lived_objects()
    finally:
        with _load_lock:
            _loading.discard(name)
            _load_finished[name] = time.monotonic()
    if name not in settings().model_options:
        with _custom_lock:  # a failed load gives its slot back
            if bundle.is_fallback:
                _custom_loaded.discard(name)
                _custom_failed.add(name)
            else:
                _custom_loaded.add(name)
                _custom_failed.discard(name)
    return bundle


def retry_load(name: str, min_interval: float) -> float:
    """Forget ``name``'s failed load so the next run tries again; 0.0 when done, else seconds to wait.

    Only ``name``'s own entries are dropped (``forget_model``: its bundle and its results): every derived
    result is keyed by the model actually loaded, so the bundled encoder's results stay valid for everybody. Not
    while a load of it is under way (clearing mid-load would discard it and start another), and none sooner than
    ``min_interval`` seconds after the last one ended: thirty students clicking Retry together start one load
    (the clicks before the next run loads it drop nothing more; Streamlit runs one load per name at a time).
    The state is "under way", not "no record yet": a click that landed after a load's end but before Streamlit
    stored its result once left no record for ever, and every later Retry waited for a load that never came.
    """
    with _load_lock:
        if name in _loading:
            return max(min_interval, 1.0)
        wait = _load_finished.get(name, -math.inf) + min_interval - time.monotonic()
        if wait > 0:
            return wait
    from components.cache import forget_model  # here: components.cache imports this module

    forget_model(name)
    return 0.0


# --- waiting for the model ---------------------------------------------------------------------


def queue_message(ahead: int, seconds: float) -> str:
    estimate = f"about {max(1, round(seconds))} s"
    if ahead == 0:
        return f"Running the model… {estimate} left."
    return f"The model is busy: {ahead} request{'s' if ahead != 1 else ''} ahead of you, {estimate}."


@contextlib.contextmanager
def _unrecorded() -> Iterator[None]:
    """``st`` calls here are not recorded by an enclosing cached function (so a cache hit never replays
    a queue notice). Streamlit records a cached function's elements while ``in_cached_function`` is set."""
    token = in_cached_function.set(False)
    try:
        yield
    finally:
        in_cached_function.reset(token)


class QueueNotice:
    """The session's place in the model's queue, in a placeholder made when the wait starts.

    Its updates are ``st`` calls: a session that was closed or rerun stops there (Streamlit raises
    from its next ``st`` call), which takes its request out of the queue. It is redrawn when the place
    changes, else every ``REDRAW_SECONDS`` (with 30 students waiting, a redraw per report was 60
    messages a second for the server to send); so a closed tab leaves the queue within that time.
    """

    REDRAW_SECONDS = 2.0

    def __init__(self) -> None:
        self.slot: DeltaGenerator | None = None
        self.shown: int | None = None  # the place drawn last
        self.drawn_at = 0.0

    def __call__(self, ahead: int, seconds: float) -> None:
        now = time.monotonic()
        if self.shown == ahead and now - self.drawn_at < self.REDRAW_SECONDS:
            return
        with _unrecorded():
            if self.slot is None:
                self.slot = st.empty()
            self.slot.info(queue_message(ahead, seconds), icon=":material/hourglass_top:")
        self.shown, self.drawn_at = ahead, now

    def clear(self) -> None:
        if self.slot is not None:
            with _unrecorded():
                self.slot.empty()
            self.slot = None


@contextlib.contextmanager
def model_wait() -> Iterator[None]:
    """Around anything that runs the model: show the queue position while waiting (redrawn when the place
    changes, else every 2 s), and turn an exceeded time budget into an error message that ends the run."""
    if get_script_run_ctx(suppress_warning=True) is None:  # not a session (the warm-up thread)
        yield
        return
    notice = QueueNotice()
    try:
        with reporting_waits(notice):
            yield
    except RequestTimeout as error:
        notice.clear()
        with _unrecorded():
            st.error(str(error), icon=":material/timer_off:")
        from components.layout import stop_page  # here: components.layout imports this module

        stop_page()
    except Exception:
        with contextlib.suppress(Exception):
            notice.clear()
        raise
    notice.clear()


def settings() -> Settings:
    """Read per run: cheap, and the environment (or secrets) may change between runs.

    A ``[bertlens]`` table in Streamlit secrets sets the same values; a non-blank environment
    variable wins. A malformed setting fails closed: an error, and nothing else of the page runs.
    """
    name_unknown_variables()
    try:
        return load_settings(merged_environment(os.environ, _secret_settings()))
    except SettingsError as error:
        st.error(
            f"**This server's settings cannot be read, so it serves no page.** {literal(str(error))}",
            icon=":material/error:",
        )
        st.stop()


@functools.cache
def name_unknown_variables() -> None:
    """Once, as the server starts: the ``BERTLENS_…`` variables it does not read, in its log."""
    if unknown := unknown_variables(os.environ):
        logging.getLogger("bertlens").warning("Unknown settings, not read: %s.", ", ".join(unknown))


def _secret_settings() -> Mapping[str, Any]:
    """The ``[bertlens]`` secrets table; {} when there are no secrets. Secrets that exist but cannot be read are a
    ``SettingsError``: a TOML error (Streamlit raises it as ``FileNotFoundError``, as if there were none: a hosted
    server configured there would have served in local mode, no token cap, any model), a file not in UTF-8 or not
    to be opened (its traceback, with the file's path, was shown to visitors). Why is in the server's log."""
    try:
        return secrets_table(st.secrets)
    except FileNotFoundError as error:  # StreamlitSecretNotFoundError: none found, or found and unreadable
        if not any(Path(path).exists() for path in st_config.get_option("secrets.files")):
            return {}
        unreadable: Exception = error
    except (OSError, UnicodeDecodeError) as error:  # found: not to be opened (permissions), or not UTF-8
        unreadable = error
    logging.getLogger("bertlens").error("Streamlit's secrets cannot be read: %s", unreadable)
    raise SettingsError("Streamlit's secrets cannot be read (the server's log says why).") from None


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


def claim_custom_slot(name: str) -> bool:
    """Whether ``name`` may be loaded: a model held, being loaded or failed (no slot needed), or a new one that
    a free slot of the custom-models budget is now reserved for. Under a lock, so that two new names chosen at
    the same instant cannot both take the last slot (the check alone let every session that asked before the
    first load ended through)."""
    config = settings()
    with _custom_lock:
        if name in config.model_options or name in _custom_loaded or name in _custom_failed:
            return True
        if len(_custom_loaded) >= config.budgets.custom_models:
            return False
        _custom_loaded.add(name)
        return True


def refuse_custom_over_budget() -> None:
    """Say so when the custom model chosen is not loaded because the server holds its budget of them."""
    config = settings()
    custom = chosen_custom_model() if chosen_option() == CUSTOM and config.allow_custom_models else ""
    if custom and not claim_custom_slot(custom):
        with _custom_lock:
            held = ", ".join(code_span(name) for name in sorted(_custom_loaded))
        st.warning(
            f"{code_span(custom)} is not loaded, and {code_span(config.default_model)} is used instead. This server "
            f"holds {held}: {config.budgets.limit('custom_models')}."
        )


def active_bundle() -> ModelBundle:
    """The active model; its first load also starts computing every page's presets in the background."""
    from components.warm_start import warm_up  # it imports the views, which import this module

    name = active_model_name()
    if LOAD_COUNTS[name] == 0:  # first load in this process: show progress naming the model
        action = "Downloading (first use) and loading" if needs_download(name) else "Loading"
        with st.status(f"{action} {literal(name)}…", expanded=False) as status:
            bundle = cached_bundle(name)
            status.update(label=f"Loaded {literal(bundle.name)} in {bundle.load_seconds:.1f} s", state="complete")
    else:
        bundle = cached_bundle(name)
    warm_up(bundle.name)  # what pages key their results by: after a fallback, not the model asked for
    return bundle


def picker_options() -> list[str]:
    config = settings()
    return [*config.model_options, *([CUSTOM] if config.allow_custom_models else [])]


def refuse_unoffered_model() -> None:
    """Say so when the link names a model this server does not offer (it is never loaded)."""
    custom = f" (or {CUSTOM} in the sidebar, then its Hub id or folder)" if settings().allow_custom_models else ""
    warn_bad_param(MODEL_KEY, lambda name: name in picker_options(), f"one of the models this server offers{custom}")


def model_picker() -> None:
    """The sidebar's model choice (bound to the URL as ``model``)."""
    refuse_unoffered_model()  # before the bound picker drops the link's value
    st.selectbox(
        "Model",
        picker_options(),
        **bound(MODEL_KEY),
        help="Any BERT checkpoint: a Hugging Face Hub id or a local folder. "
        f"{BUNDLED_MODEL} is bundled and works offline.",
    )
    if st.session_state.get(MODEL_KEY) == CUSTOM:
        st.text_input(  # in the link too: a class link opens every student on the same custom model
            "Hub id or local folder",
            **bound(CUSTOM_KEY),
            max_chars=MAX_MODEL_NAME_CHARS,
            placeholder="e.g. bert-base-uncased or /models/my-bert",
        )


def model_status(bundle: ModelBundle) -> None:
    """What is active and what it can do (sidebar)."""
    caps = bundle.capabilities
    st.markdown(f"**Active model:** {code_span(bundle.name)}")
    st.caption(caps.summary())
    if not caps.has_mlm_head or not caps.has_nsp_head:
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
