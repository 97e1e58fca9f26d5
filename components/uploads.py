"""Files the student uploads, within the upload budget."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

MAX_UPLOAD_BYTES = (
    2_000_000  # per file, as the server's own limit (server.maxUploadSize = 2 MB), for a server run without it
)


def uploaded(
    label: str, key: str, hint: str | None = None, types: tuple[str, ...] = ("csv",), most: int = 1
) -> list[UploadedFile]:
    """An upload widget for at most ``most`` files; the files chosen, none when none is chosen (``hint`` then says
    what to choose) or they are over the budget (with a message)."""
    chosen = st.file_uploader(label, type=list(types), key=key, accept_multiple_files=most > 1)
    files = [file for file in (chosen if isinstance(chosen, list) else [chosen]) if file is not None]
    if not files and hint:
        st.info(hint)
    if len(files) > most:
        st.error(f"Choose at most {most} files.")
        return []
    if any(file.size > MAX_UPLOAD_BYTES for file in files):
        st.error(f"A file is larger than {MAX_UPLOAD_BYTES // 1_000_000} MB.")
        return []
    return files
