"""A student's CSV file, read strictly: its messages name rows and columns, never the file's own text."""

from __future__ import annotations

import csv
import io

from bertlens.wording import agree, listed

# What a spreadsheet runs as a formula at the start of a cell: our CSV downloads prefix such a cell with ' (OWASP),
# and our uploads take the ' off again, so that a download loads back as it was.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def as_written(cell: str) -> str:
    """A cell as the student wrote it: a download's neutralising ' before a formula start taken off."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


class TableInputError(ValueError):
    """A file that cannot be read; the message says where and why."""


def decoded(data: bytes, what: str) -> str:
    """A file's text: UTF-8, with or without a byte-order mark; else a message naming ``what`` the file is."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TableInputError(f"The {what} is not UTF-8 text.") from error


def _columns(names: tuple[str, ...]) -> str:
    return listed([f"`{name}`" for name in names])


def read_rows(
    data: bytes | str, columns: tuple[str, ...], optional: tuple[str, ...] = (), rows_are: str = "rows"
) -> list[dict[str, str]]:
    """The rows of a CSV file with a header row naming ``columns`` (and maybe ``optional`` ones; names ignore case,
    other columns are ignored), each as {column: stripped cell}; blank rows skipped, an optional column missing
    from the file reads as "". UTF-8, with or without a byte-order mark. The n-th row read is the file's row n + 2
    (the header is row 1), blank rows not counted. ``rows_are``: what the rows hold, for a message."""
    if isinstance(data, bytes):
        data = decoded(data, "CSV file")
    try:
        rows = list(csv.reader(io.StringIO(data, newline=""), strict=True))
    except csv.Error as error:
        raise TableInputError(f"The CSV file cannot be read: {error}.") from error
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise TableInputError("The CSV file is empty.")
    header = [cell.strip().lower() for cell in rows[0]]
    if missing := [name for name in columns if name not in header]:
        wanted = f"a {_columns(columns)} column" if len(columns) == 1 else f"the columns {_columns(columns)}"
        also = f" (and optionally {_columns(optional)})" if optional else ""
        lacks = (
            f": {_columns(tuple(missing))} {agree(len(missing), 'is', 'are')} missing"
            if missing != list(columns)
            else ""
        )
        separator = next((s for s in (";", "\t", "|") if len(rows[0]) == 1 and s in rows[0][0]), None)
        hint = f" Its cells are separated by {separator!r}: save it with commas." if separator else ""
        raise TableInputError(f"The CSV file needs a header row with {wanted}{also}{lacks}.{hint}")
    at = {name: header.index(name) for name in (*columns, *optional) if name in header}
    read = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise TableInputError(f"CSV row {number} has {len(row)} cells; the header has {len(header)}.")
        read.append({name: as_written(row[at[name]].strip()) if name in at else "" for name in (*columns, *optional)})
    if not read:
        raise TableInputError(f"The CSV file has a header but no {rows_are}.")
    return read
