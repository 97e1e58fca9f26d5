"""Widgets bound to the URL, so a copied link reproduces the view.

Page-local settings use Streamlit's ``bind="query-params"`` (the widget key is the parameter
name). It silently drops invalid URL values; ``warn_bad_param`` says so instead. Text shared
across pages uses ``shared_text``.
"""

from __future__ import annotations

from typing import Callable

import streamlit as st

from components.text import literal

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
TEXT_HEIGHT = 100


def warn_bad_param(param: str, valid: Callable[[str], bool], expected: str) -> None:
    """Warn about a malformed URL parameter (before its bound widget drops it)."""
    raw = st.query_params.get(param)
    if raw is not None and raw != "" and not valid(raw):
        st.warning(f"The link's `{param}` parameter ({literal(raw[:80])}) is not {expected}; using the default.")


def int_in_range(lo: int, hi: int) -> Callable[[str], bool]:
    def valid(raw: str) -> bool:
        try:
            return lo <= int(raw) <= hi
        except ValueError:
            return False

    return valid


def keep_in_range(key: str, lo: int, hi: int) -> None:
    """Clamp a bound widget's stored value, e.g. after switching to a model with fewer layers."""
    value = st.session_state.get(key)
    if isinstance(value, int) and not lo <= value <= hi:
        st.session_state[key] = min(max(value, lo), hi)


def bound_int_slider(label: str, key: str, lo: int, hi: int, default: int = 0, **kwargs) -> int:
    """A slider for an integer URL parameter, with a message for malformed or out-of-range links."""
    warn_bad_param(key, int_in_range(lo, hi), f"a whole number from {lo} to {hi}")
    keep_in_range(key, lo, hi)
    if lo == hi:  # a slider needs a range; a one-value choice is just shown
        st.caption(f"{label}: {lo}")
        return lo
    return st.slider(label, lo, hi, min(max(default, lo), hi), key=key, bind="query-params", **kwargs)


def _remember(key: str) -> None:
    st.session_state[f"_shared_{key}"] = st.session_state[key]


def set_shared_text(value: str, key: str = "text") -> None:
    """Replace the shared sentence, e.g. from a button's callback (before its text area is drawn)."""
    st.session_state[f"_shared_{key}"] = value


def remembered_shared_text(key: str = "text") -> str | None:
    """The shared sentence on a page that does not show it (None before any page has)."""
    return st.session_state.get(f"_shared_{key}") or st.query_params.get(key)


def shared_text(label: str = "Sentence", key: str = "text", default: str = DEFAULT_TEXT, **kwargs) -> str:
    """Text that follows the user from page to page and lives in the URL as ``key``.

    Not ``bind="query-params"``: a page switch drops the URL's parameters, and a bound widget
    then falls back to its default. The value is kept in session state (seeded once from the
    link) and written back to the URL on every run, so the link always reproduces the view.
    """
    remembered = f"_shared_{key}"
    if remembered not in st.session_state:
        st.session_state[remembered] = st.query_params.get(key, default)
    st.session_state[key] = st.session_state[remembered]
    value = st.text_area(
        label, key=key, on_change=_remember, args=(key,), height=kwargs.pop("height", TEXT_HEIGHT), **kwargs
    )
    st.query_params[key] = value
    return value
