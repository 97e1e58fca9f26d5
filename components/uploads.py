"""Files the student uploads, within the upload budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from bertlens.table_input import TableInputError

Read = TypeVar("Read")

# Per file: the server's own limit (server.maxUploadSize = 2 MB), kept for a server run without that setting.
MAX_UPLOAD_BYTES = 2_000_000


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
        st.error(
            f"{len(files)} files are chosen; this takes at most {most}. Remove some." + (f" {hint}" if hint else "")
        )
        return []
    if any(file.size > MAX_UPLOAD_BYTES for file in files):
        st.error(f"A file is larger than {MAX_UPLOAD_BYTES // 1_000_000} MB.")
        return []
    return files


def read_once(key: str, files: list[UploadedFile], read: Callable[[dict[str, bytes]], Read]) -> Read:
    """``read`` of the files (by name), once per choice of files: the reruns that follow (each edit of a table it
    fills) reuse it, where a 2 MB file took 60-250 ms to read again. Raises the ``TableInputError`` it raised."""
    chosen = tuple(file.file_id for file in files)
    memo: tuple[tuple[str, ...], Read | TableInputError] | None = st.session_state.get(f"_read_{key}")
    if memo is None or memo[0] != chosen:
        try:
            memo = (chosen, read({file.name: file.getvalue() for file in files}))
        except TableInputError as error:
            memo = (chosen, error)
        st.session_state[f"_read_{key}"] = memo  # this session's own, one choice at a time
    if isinstance(memo[1], TableInputError):
        raise memo[1]
    return memo[1]
