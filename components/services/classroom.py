"""The live classes' store, one per server process and shared by every session (``bertlens.rooms``)."""

from __future__ import annotations

import time
from contextlib import suppress

import streamlit as st

from bertlens.rooms import LIMITS, RoomError, RoomStore
from components.services.rooms import open_store
from components.services.settings import settings

PURGE_SECONDS = 600  # expired rooms are deleted this often (each read refuses them anyway)


@st.cache_resource(show_spinner=False)
def _store(url: str) -> RoomStore:
    return open_store(url, LIMITS)


_last_purge = 0.0


def room_store() -> RoomStore:
    """The store the settings name (``BERTLENS_CLASS_STORE``); rooms past their time deleted every ``PURGE_SECONDS``."""
    global _last_purge
    store = _store(settings().class_store)
    if (now := time.time()) - _last_purge > PURGE_SECONDS:
        _last_purge = now
        with suppress(RoomError):  # the store unreachable: expired rooms are refused anyway, and purged next time
            store.purge(now)
    return store
