"""Downloads in a real browser: a table's CSV is built when the button is clicked, and it is the
table's data, spreadsheet-safe (a cell that a spreadsheet would run as a formula gets a leading '). Every CSV of
every tab is read in the accessibility walk, which opens every tab (test_accessibility.py, ``spreadsheet_problems``)."""

from __future__ import annotations

import csv
import io

import pandas as pd
from transformers import AutoTokenizer

FORMULA_TEXT = '=HYPERLINK("http://evil.example") café <b>bold</b>'


def test_token_table_csv_is_the_tables_data_and_formula_safe(open_url, tiny_pretraining_dir):
    page = open_url("tokenizer", text=FORMULA_TEXT)
    with page.expect_download() as download_info:
        page.locator(".st-key-csv-token_table button").click()
    download = download_info.value
    assert download.suggested_filename == "tokens.csv"
    with open(download.path(), "rb") as handle:
        data = handle.read()
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8's byte-order mark: Excel reads "café" as café, not cafÃ©
    csv = pd.read_csv(io.BytesIO(data), keep_default_na=False)

    encoded = AutoTokenizer.from_pretrained(tiny_pretraining_dir)(FORMULA_TEXT)
    tokens = AutoTokenizer.from_pretrained(tiny_pretraining_dir).convert_ids_to_tokens(encoded["input_ids"])
    assert csv["id"].tolist() == encoded["input_ids"]
    # Every token as the tokenizer gives it, except the formula-starting ones, which are neutralised.
    assert csv["token"].tolist() == [("'" + t if t.startswith(("=", "+", "-", "@")) else t) for t in tokens]
    assert "'=" in csv["token"].tolist()  # the "=" token could not be run by a spreadsheet
    assert csv["word"].iloc[1] == "'="  # the word it came from, likewise


def test_a_chart_downloads_as_png_in_the_browser(open_url):
    """Plotly's own modebar button renders the PNG in the browser (offline, no server-side engine)."""
    page = open_url("attention", text="The cat sat on the mat.")
    chart = page.locator('[data-testid="stMain"] .js-plotly-plot').first
    chart.hover()
    with page.expect_download() as download_info:
        chart.locator('.modebar-btn[data-title^="Download plot"]').click()
    download = download_info.value
    assert download.suggested_filename.startswith("attention-") and download.suggested_filename.endswith(".png")
    with open(download.path(), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


CSV_BUTTONS = '[data-testid="stMain"] [class*="st-key-csv-"] button'
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV-injection starts


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return cell.strip() == cell


def downloaded_csvs(page) -> dict[str, bytes]:
    """Every CSV whose button is on screen, by its file name, as the browser received it."""
    files = {}
    buttons = page.locator(CSV_BUTTONS)
    for index in range(buttons.count()):
        button = buttons.nth(index)
        if not button.is_visible():
            continue
        with page.expect_download() as download_info:
            button.click()
        with open(download_info.value.path(), "rb") as handle:
            files[download_info.value.suggested_filename] = handle.read()
    return files


def spreadsheet_problems(name: str, data: bytes) -> tuple[list[str], int]:
    """What is wrong with one CSV as the browser saved it (a byte-order mark, UTF-8, CRLF rows as RFC 4180 has them,
    a header and a row, no cell, header included, that a spreadsheet would run as a formula), and how many of its
    cells were neutralised (a leading ')."""
    if not data.startswith(b"\xef\xbb\xbf"):
        return [f"{name}: no byte-order mark"], 0
    text = data[3:].decode("utf-8")
    problems = []
    if not text.endswith("\r\n") or "\n" in text.replace("\r\n", ""):
        problems.append(f"{name}: rows not ended by CRLF")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if len(rows) < 2:
        problems.append(f"{name}: no header and row")
    cells = [cell for row in rows for cell in row]
    problems += [
        f"{name}: {cell!r} runs as a formula"
        for cell in cells
        if cell.startswith(FORMULA_STARTS) and not is_number(cell)
    ]
    return problems, sum(cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) for cell in cells)
