"""The server's settings as every run reads them: environment and Streamlit secrets, failing closed."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit import config as st_config

from bertlens.settings import (
    Settings,
    SettingsError,
    load_settings,
    merged_environment,
    secrets_table,
    unknown_variables,
)
from components.services.text import literal


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
    files = st_config.get_option("secrets.files")
    if getattr(st.secrets, "_secrets", None) is None and not any(Path(path).exists() for path in files):
        # None loaded and none to load. Reading st.secrets would look for its files again, under Streamlit's config
        # lock, on every run (py-spy, a class of 60 on one server: ~23 % of the server's time).
        return {}
    try:
        return secrets_table(st.secrets)
    except FileNotFoundError as error:  # StreamlitSecretNotFoundError: none found, or found and unreadable
        if not any(Path(path).exists() for path in files):
            return {}
        unreadable: Exception = error
    except (OSError, UnicodeDecodeError) as error:  # found: not to be opened (permissions), or not UTF-8
        unreadable = error
    logging.getLogger("bertlens").error("Streamlit's secrets cannot be read: %s", unreadable)
    raise SettingsError("Streamlit's secrets cannot be read (the server's log says why).") from None
