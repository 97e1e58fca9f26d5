"""A CSV file the student uploads, within the upload budget."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

MAX_CSV_BYTES = 2_000_000  # as the server's own limit (server.maxUploadSize = 2 MB), for a server run without it


def uploaded_csv(label: str, key: str, hint: str | None = None) -> UploadedFile | None:
    """A CSV upload widget; the file, or None when none is chosen (``hint`` then says what to choose) or it is over
    the budget (with a message)."""
    upload = st.file_uploader(label, type="csv", key=key)
    if upload is None:
        if hint:
            st.info(hint)
        return None
    if upload.size > MAX_CSV_BYTES:
        st.error(f"The file is larger than {MAX_CSV_BYTES // 1_000_000} MB.")
        return None
    return upload
