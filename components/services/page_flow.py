"""How a page ends early, having said why: every layer may stop the page (a missing head, a time budget)."""

from __future__ import annotations

from typing import NoReturn

from streamlit.runtime.scriptrunner_utils.exceptions import StopException


class PageStopped(StopException):
    """A page ends here, having said why (no [MASK], a missing head, …). ``app.py`` catches it, runs what
    follows every page (the link's notice, the class link), then raises it again: Streamlit sees an early stop,
    as with ``st.stop()``. ``st.stop()`` itself would end the whole run: once a stop is requested every later
    ``st`` call raises. A page run on its own ends here as with ``st.stop()``."""


def stop_page() -> NoReturn:
    """End the page here (instead of ``st.stop()``: see ``PageStopped``)."""
    raise PageStopped
