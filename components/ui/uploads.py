"""Files the student uploads, within the upload budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from bertlens.table_input import TableInputError
from components.services.text import literal

Read = TypeVar("Read")

# Per file: the server's own limit (server.maxUploadSize = 2, which Streamlit counts in MiB), kept for a server run
# without that setting, and stated in the unit it counts in.
MAX_UPLOAD_MIB = 2
MAX_UPLOAD_BYTES = MAX_UPLOAD_MIB * 1024 * 1024


def uploaded(
    label: str, key: str, hint: str | None = None, types: tuple[str, ...] = ("csv",), most: int = 1
) -> list[UploadedFile]:
    """An upload widget for at most ``most`` files; the files chosen, none when none is chosen (``hint`` then says
    what to choose, unless ``read_upload`` still holds what the tab chose before) or they are over the budget (with
    a message)."""
    chosen = st.file_uploader(
        label, type=list(types), key=key, accept_multiple_files=most > 1, on_change=_forget_read, args=(key,)
    )
    files = [file for file in (chosen if isinstance(chosen, list) else [chosen]) if file is not None]
    if not files and hint and _kept(key) is None:
        st.info(hint)
    if len(files) > most:
        st.error(
            f"{len(files)} files are chosen; this takes at most {most}. Remove some." + (f" {hint}" if hint else "")
        )
        return []
    if any(file.size > MAX_UPLOAD_BYTES for file in files):
        st.error(f"A file is larger than {MAX_UPLOAD_MIB} MiB ({MAX_UPLOAD_BYTES:,} bytes), the upload limit.")
        return []
    return files


def _memo(key: str) -> tuple[tuple[str, ...], tuple[str, ...], object] | None:
    """What ``read_upload`` read from the tab's last choice of files for ``key``: (their ids, names, result)."""
    return st.session_state.get(f"_read_{key}")


def _kept(key: str) -> tuple[tuple[str, ...], tuple[str, ...], object] | None:
    """``_memo`` when its files could be read: what a page reads again after another page."""
    memo = _memo(key)
    return None if memo is None or isinstance(memo[2], TableInputError) else memo


def _forget_read(key: str) -> None:
    """The student chose other files, or removed them: what the earlier ones read is forgotten."""
    st.session_state.pop(f"_read_{key}", None)


def read_upload(key: str, files: list[UploadedFile], read: Callable[[dict[str, bytes]], Read]) -> Read | None:
    """``read`` of the files (by name), once per choice of files: the reruns that follow (each edit of a table it
    fills) reuse it, where a 2 MB file took 60-250 ms to read again. Raises the ``TableInputError`` it raised.

    With no file chosen: what the tab's last choice read, with a caption naming the files and a button to forget
    them (Streamlit forgets a page's uploaded files when the student visits another page; files removed in the box
    are forgotten here too), else None.
    """
    memo = _memo(key)
    if files:
        chosen = tuple(file.file_id for file in files)
        if memo is None or memo[0] != chosen:
            try:
                result: object = read({file.name: file.getvalue() for file in files})
            except TableInputError as error:
                result = error
            memo = (chosen, tuple(file.name for file in files), result)
            st.session_state[f"_read_{key}"] = memo  # this session's own, one choice at a time
    elif (memo := _kept(key)) is None:
        return None
    else:
        st.caption(
            f"Still reading {', '.join(literal(name) for name in memo[1])}, chosen earlier in this tab (the box "
            "forgets its files on another page): choose files again to replace them."
        )
        st.button("Forget these files", key=f"forget_{key}", on_click=_forget_read, args=(key,))
    if isinstance(memo[2], TableInputError):
        raise memo[2]
    return cast(Read, memo[2])


def upload_id(key: str) -> str:
    """One name for the choice of files ``read_upload`` last read for ``key`` (a widget keyed by it starts anew with
    each new choice), "" when none."""
    memo = _memo(key)
    return "-".join(memo[0]) if memo else ""
