"""Downloads in a real browser: a table's CSV is built when the button is clicked, and it is the
table's data, spreadsheet-safe (a cell that a spreadsheet would run as a formula gets a leading ')."""

from __future__ import annotations

import csv
import io

import pandas as pd
from transformers import AutoTokenizer

from bertlens.pages import TOOL_PAGES
from tests.browser.conftest import wait_for_run

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


PAGES = TOOL_PAGES  # every page that shows the model (the registry, bertlens.pages)
CSV_BUTTONS = '[data-testid="stMain"] [class*="st-key-csv-"] button'
MAIN_TABS = '[data-testid="stMain"] [role="tab"]'
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


def test_every_csv_download_is_utf8_with_a_bom_crlf_and_formula_safe(open_url):
    """Each page's every tab, every CSV button on screen, read byte for byte as the browser saved it: a byte-order
    mark, UTF-8, CRLF rows (RFC 4180), and no cell (header included) that a spreadsheet would run as a formula."""
    files: dict[str, bytes] = {}
    for name in PAGES:
        page = open_url(name, text=FORMULA_TEXT + " [MASK] 2.")
        tabs = page.locator(MAIN_TABS).count()
        for tab in range(max(tabs, 1)):
            if tabs:
                page.locator(MAIN_TABS).nth(tab).click()
                wait_for_run(page)
            files |= {f"{name}/{file}": data for file, data in downloaded_csvs(page).items()}
    assert len(files) >= 8, sorted(files)
    neutralised = 0
    for name, data in files.items():
        assert data.startswith(b"\xef\xbb\xbf"), name
        text = data[3:].decode("utf-8")
        assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", ""), name
        rows = list(csv.reader(io.StringIO(text, newline="")))
        assert len(rows) >= 2, name  # a header and at least one row
        for cell in (cell for row in rows for cell in row):
            assert not cell.startswith(FORMULA_STARTS) or is_number(cell), (name, cell)
            neutralised += cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS)
    assert neutralised, "the formula in the sentence reached no CSV: nothing was checked"
