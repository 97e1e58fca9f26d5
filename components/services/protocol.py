"""What a browser tab may send, read defensively: Streamlit's protocol trusts its own frontend, a hosted link may not.

Two of Streamlit 1.67's message handlers act on a client's word alone, and any visitor can send their messages
(the hosted toolbar only hides the menu items that send them):

* ``clear_cache`` empties ``st.cache_resource`` and ``st.cache_data`` for every session of the server: each
  message cost the whole class a model reload. While the server is hosted (and before any run has read the
  settings: fail closed) it clears nothing shared and is logged; the one bounded reset is the model's Retry
  (``components.services.cache.retry_load``, at most once a minute when hosted).
* a widget's state is deserialised as the client sent it: a forged value of the wrong kind (a number for a text
  box) raised ``TypeError`` in the page or in Streamlit's own deserialiser, on that run and on every later run of
  the session. A value of another kind than its widget takes is dropped with a log line (the widget keeps its
  earlier value), one its deserialiser refuses becomes the widget's default, and the session's next run works.

A link over Streamlit's limits (1,000 parameters, 512 Ki characters) reaches the page as no link at all, in
silence; the page is told instead (one parameter, ``IGNORED_LINK``), says so and rewrites the address
(``ignored_link``). Only the server's first run comes before ``install`` and keeps the silence.

A hosted server also shows a visitor no traceback (they named the server's files): a page's error is a message,
its traceback goes to the server's log (``report_failure``), and Streamlit's own handler, for what fails outside
a page, shows its redacted text (``client.showErrorDetails = "none"``).

``install`` patches the three once per process (Streamlit has no setting for them); the tests send the
real protocol messages (tests/services/test_protocol.py), so a Streamlit upgrade that moves them fails there.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import urlencode

import streamlit as st
from streamlit import config as st_config
from streamlit.proto.WidgetStates_pb2 import WidgetState as WidgetStateProto
from streamlit.proto.WidgetStates_pb2 import WidgetStates as WidgetStatesProto
from streamlit.runtime import app_session
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.state.common import WidgetMetadata
from streamlit.runtime.state.query_params import (
    CLIENT_STATE_QUERY_STRING_MAX_FIELDS,
    CLIENT_STATE_QUERY_STRING_MAX_LENGTH,
    sanitize_query_string,
)
from streamlit.runtime.state.session_state import Serialized, SessionState, Value, WStates

LOG = logging.getLogger("bertlens")
IGNORED_LINK = "bertlens_ignored_link"  # in place of a link Streamlit ignored: its parameters and characters

FAILURE = "**This page ran into an error.** Change the input or reload the page; the server's log has the details."
ERROR_DETAILS = "client.showErrorDetails"
_configured_error_details = st_config.get_option(ERROR_DETAILS)  # the server's own setting (Streamlit's: "full")

_shared_caches_locked = True  # until a run has read the settings: a server is taken as hosted
_installed = False
_install_lock = threading.Lock()


def host(hosted: bool) -> None:
    """Every run, with the settings it read: a hosted server ignores a visitor's ``clear_cache`` and shows no
    error details; a local one keeps Streamlit's configured ``client.showErrorDetails``."""
    global _shared_caches_locked
    _shared_caches_locked = hosted
    details = "none" if hosted else _configured_error_details
    if st_config.get_option(ERROR_DETAILS) != details:
        st.set_option(ERROR_DETAILS, details)


def report_failure(error: Exception) -> None:
    """A hosted page's error: a message for the visitor, the traceback in the server's log."""
    LOG.error("A page failed; its visitor was shown a message.", exc_info=error)
    st.error(FAILURE, icon=":material/error:")


def install() -> None:
    """Guard ``clear_cache``, widget states and links over Streamlit's limits (once per process; later calls return
    at once)."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if _installed:
            return
        _guard_clear_cache()
        _name_ignored_links()
        _guard_widget_states()
        _installed = True


def _guard_clear_cache() -> None:
    clear_for_everyone = AppSession._handle_clear_cache_request

    def clear_cache(session: AppSession) -> None:
        if _shared_caches_locked:
            LOG.warning("Ignored a clear_cache message from session %s: the caches are shared (hosted).", session.id)
            return
        clear_for_everyone(session)

    AppSession._handle_clear_cache_request = clear_cache  # type: ignore[method-assign,assignment]


def _name_ignored_links() -> None:
    def sanitized(query_string: str) -> str:
        kept = sanitize_query_string(query_string)
        if query_string and not kept:
            return urlencode({IGNORED_LINK: f"{query_string.count('&') + 1},{len(query_string)}"})
        return kept

    app_session.sanitize_query_string = sanitized


def ignored_link() -> str | None:
    """The notice for a link Streamlit ignored whole, after rewriting the address to the view the page shows (a
    reload or a copy of it would be ignored again); None for a link read as usual."""
    if IGNORED_LINK not in st.query_params:
        return None
    sizes = re.fullmatch(r"([0-9]{1,9}),([0-9]{1,9})", st.query_params.get_all(IGNORED_LINK)[-1])
    if sizes is None:  # not ours: typed into a link by hand
        del st.query_params[IGNORED_LINK]
        return None
    fields, chars = map(int, sizes.groups())
    st.query_params.clear()
    if fields > CLIENT_STATE_QUERY_STRING_MAX_FIELDS:
        size = f"{fields:,} parameters; a link may carry at most {CLIENT_STATE_QUERY_STRING_MAX_FIELDS:,}"
    else:
        size = f"{chars:,} characters; a link may have at most {CLIENT_STATE_QUERY_STRING_MAX_LENGTH:,}"
    return f"**This link was ignored:** it has {size}. The page opens as a new visit, with its defaults."


def _guard_widget_states() -> None:
    """A client's widget value of another kind than its widget takes is dropped where it comes in (a rerun's widget
    states), or, for a widget this session has not drawn yet (a reconnecting tab), where the widget is drawn; a
    value of the right kind that its deserialiser refuses becomes the widget's default."""
    will_rerun = SessionState.on_script_will_rerun
    set_metadata = SessionState._set_widget_metadata
    deserialised = WStates.__getitem__

    def on_script_will_rerun(state: SessionState, fresh: WidgetStatesProto | None, **kwargs: Any) -> None:
        if fresh is not None:
            known = state._new_widget_state.widget_metadata
            kept = [w for w in fresh.widgets if w.id not in known or _of_its_kind(w, known[w.id].value_type)]
            if len(kept) < len(fresh.widgets):
                fresh = WidgetStatesProto(widgets=kept)
        will_rerun(state, fresh, **kwargs)

    def set_widget_metadata(state: SessionState, metadata: WidgetMetadata[Any]) -> None:
        set_metadata(state, metadata)
        stored = state._new_widget_state.states.get(metadata.id)
        if isinstance(stored, Serialized) and not _of_its_kind(stored.value, metadata.value_type):
            del state._new_widget_state.states[metadata.id]

    def getitem(states: WStates, widget_id: str) -> Any:
        try:
            return deserialised(states, widget_id)
        except KeyError:
            raise
        except Exception as error:  # any deserialiser's error is the client's value, not a bug here
            metadata = states.widget_metadata[widget_id]
            LOG.warning("Ignored a widget state from the client for %s (%s).", widget_id, type(error).__name__)
            states.states[widget_id] = Value(default := metadata.deserializer(None))  # in place: callers iterate
            return default

    SessionState.on_script_will_rerun = on_script_will_rerun  # type: ignore[method-assign,assignment]
    SessionState._set_widget_metadata = set_widget_metadata  # type: ignore[method-assign,assignment]
    WStates.__getitem__ = getitem  # type: ignore[method-assign]


def _of_its_kind(state: WidgetStateProto, value_type: str) -> bool:
    """Whether a client's widget state holds the kind of value its widget takes (or none); logged when not."""
    sent = state.WhichOneof("value")
    if sent is None or sent == value_type:
        return True
    LOG.warning(
        "Ignored a widget state from the client for %s: a %s where the widget takes a %s.", state.id, sent, value_type
    )
    return False
