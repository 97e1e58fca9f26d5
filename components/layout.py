"""Page scaffolding shared by every page: title, active model, fallback banner, input notices."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError
from streamlit.runtime.pages_manager import PagesManager

from bertlens.analysis import Encoding, input_problem
from bertlens.models import ModelBundle
from components.model import active_bundle, fallback_banner
from components.params import read_link
from components.text import code_span


def run_inside_app() -> None:
    """Make a shared link open the page inside ``app.py`` (sidebar, wide layout) on a fresh server.

    The one place that touches Streamlit internals: 1.67 offers no setting to keep ``pages/`` without its
    old folder mode (see tests/test_pages_mode.py), and this is what ``st.navigation`` itself does.

    Until some session has run ``app.py``'s ``st.navigation``, Streamlit treats the ``pages/``
    folder as an old-style multipage app and runs a deep-linked page file directly. Switching
    that mode off and rerunning sends this session (same URL) through ``app.py``.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_header(title: str, intro: str, page: str) -> ModelBundle:
    """Title, one-line intro, the active model (loading it if needed) and any fallback banner.

    ``page`` is the page's scope in ``components.params`` (its file stem): a link's old parameter names
    are read as that page's parameters.
    """
    run_inside_app()
    read_link(page)
    st.title(title)
    st.caption(intro)
    bundle = active_bundle()
    fallback_banner(bundle)
    st.caption(f"Model: {code_span(bundle.name)} — {bundle.capabilities.summary()}")
    return bundle


def require_text(text: str) -> bool:
    """Show why ``text`` cannot be analysed; True when it can."""
    problem = input_problem(text)
    if problem:
        st.info(problem)
    return problem is None


def truncation_notice(encoding: Encoding) -> None:
    if encoding.truncated:
        st.warning(
            f"The input is {encoding.full_length} tokens long; the model reads at most {len(encoding)}. "
            f"Only the first {len(encoding)} tokens are analysed."
        )


def nav_link(page_file: str, label: str) -> None:
    """A link to another page; a plain URL link when the page runs outside ``app.py``'s navigation."""
    try:
        st.page_link(page_file, label=label)
    except StreamlitPageNotFoundError:
        st.markdown(f"[{label}](./{Path(page_file).stem})")
