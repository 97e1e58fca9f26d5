"""Model bundles, one per checkpoint and shared by every session: loading, its bookkeeping and waiting for the model.

Every page gets its model through ``components.state.model_choice.active_bundle()``, which calls ``cached_bundle`` here."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx, in_cached_function

from bertlens.engine import RequestTimeout, reporting_waits
from bertlens.models import ModelBundle, load_with_fallback
from bertlens.serving import freeze_long_lived_objects
from components.services.page_flow import stop_page
from components.services.settings import settings
from components.services.text import code_span, literal

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


def custom_models_held() -> list[str]:
    """The custom models this process holds or is loading, by name."""
    with _custom_lock:
        return sorted(_custom_loaded)


def retry_wait(name: str, min_interval: float) -> float:
    """Seconds before ``name``'s failed load may be tried again (``cache.retry_load``); 0.0 when it may now.

    Not while a load of it is under way (clearing mid-load would discard it and start another), and none sooner than
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
    return 0.0


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

        stop_page()
    except Exception:
        with contextlib.suppress(Exception):
            notice.clear()
        raise
    notice.clear()


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


def offered_besides(name: str) -> list[str]:
    """The models this server offers, ``name`` left out: the choices for a second model beside it (loading one costs
    no more than picking it in the sidebar, and a hosted server's allowlist and budgets hold for it too)."""
    return [option for option in settings().model_options if option != name]


def second_bundle(name: str) -> ModelBundle | str:
    """A second model, beside the active one (the tokenizer's side-by-side, the two models compared), or why it
    cannot be loaded here (Markdown, the reason shown literally)."""
    bundle = cached_bundle(name)
    if bundle.is_fallback:
        return f"{code_span(name)} cannot be loaded here: {literal(bundle.fallback_reason or '')}"
    return bundle
