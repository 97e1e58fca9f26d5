"""The class link on a 1280×720 projector, in Chromium: the sidebar's button opens a dialog with the link's QR code
(scanned back from a screenshot, it is the link), the link in large type, and the warning that 127.0.0.1 is this
computer's own address; all of it on the first screen. The test server listens on 127.0.0.1, as a teacher's laptop
that runs ``streamlit run app.py`` and is opened at localhost."""

from __future__ import annotations

import io
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from tests.browser.conftest import open_tab, wait_for_layout, wait_for_run
from tests.browser.test_projector import keep

FOLD = 720
SENTENCE = "The teacher shared this sentence with the whole class."


@pytest.fixture
def projector(browser) -> Page:
    context = browser.new_context(viewport={"width": 1280, "height": FOLD})
    page = open_tab(context)
    yield page
    context.close()


def open_class_link(page: Page):
    """Click the sidebar's one line (in presentation mode, the same button beside the title); the dialog, once its
    QR code and link are drawn."""
    page.get_by_role("button", name="Show the class link").locator("visible=true").first.click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("img", name="QR code of the class link")).to_be_visible()
    expect(dialog.locator('[data-testid="stCode"] code')).to_be_visible()
    return dialog


def decoded(png: bytes) -> list[str]:
    """The texts of the QR codes in a screenshot (zxing-cpp, a decoder independent of segno)."""
    zxingcpp = pytest.importorskip("zxingcpp")
    image = np.array(Image.open(io.BytesIO(png)).convert("L"))
    return [result.text for result in zxingcpp.read_barcodes(image)]


def test_the_class_link_fills_a_projectors_first_screen(projector, server_url, tiny_pretraining_dir):
    projector.goto(f"{server_url}/attention?{urlencode({'text': SENTENCE, 'attn_layer': '1', 'present': 'true'})}")
    wait_for_run(projector)
    wait_for_layout(projector)
    sidebar = projector.locator('[data-testid="stSidebar"]')
    button = projector.locator('[data-testid="stMain"]').get_by_role("button", name="Show the class link")
    box = button.bounding_box()  # presenting, the sidebar is folded away: the button stands beside the title
    assert box is not None and box["y"] + box["height"] <= FOLD and box["height"] < 60  # one line, on the first screen
    expect(sidebar.locator('[data-testid="stCode"]')).to_have_count(0)  # no wrapped link in the sidebar

    dialog = open_class_link(projector)
    keep(projector, "class-link")  # BERTLENS_SCREENSHOTS=folder keeps it
    qr = dialog.get_by_role("img", name="QR code of the class link")
    code = dialog.locator('[data-testid="stCode"] code')
    link = code.inner_text().strip()
    # The page's class URL: its address and every parameter of it, with the model pinned.
    address, shown = urlsplit(projector.url), urlsplit(link)
    assert (shown.scheme, shown.netloc, shown.path) == (address.scheme, address.netloc, "/attention")
    assert sorted(parse_qsl(shown.query)) == sorted([*parse_qsl(address.query), ("model", str(tiny_pretraining_dir))])
    assert ("text", SENTENCE) in parse_qsl(shown.query) and ("present", "true") in parse_qsl(shown.query)

    qr_box = qr.bounding_box()
    assert qr_box is not None and qr_box["height"] >= 300, qr_box  # from the back of a room
    assert decoded(qr.screenshot()) == [link]  # the QR code is the link, exactly
    warning = dialog.get_by_text("Students' devices cannot open this link")
    expect(warning).to_be_visible()  # the test server's address is 127.0.0.1
    expect(dialog.get_by_text("--server.address 0.0.0.0")).to_be_visible()
    bottoms = dialog.evaluate(
        """d => [...d.querySelectorAll('[data-testid="stVerticalBlock"] *')]
             .filter(e => e.getClientRects().length).map(e => e.getBoundingClientRect().bottom)"""
    )
    assert max(bottoms) <= FOLD, f"the dialog's content ends at {max(bottoms):.0f} px"
    dialog_box = dialog.bounding_box()
    assert dialog_box is not None and dialog_box["y"] + dialog_box["height"] <= FOLD + 1, dialog_box
    assert qr_box["height"] >= 0.6 * dialog_box["height"], (qr_box, dialog_box)  # most of the dialog's height

    code.click()  # one click selects the whole link: a copy without the clipboard API (Ctrl+C)
    assert projector.evaluate("() => getSelection().toString().trim()") == link
    copy = dialog.locator('[data-testid="stCode"] [data-testid^="stBaseButton-elementToolbar"]')
    expect(copy).to_be_visible()  # on 127.0.0.1 the browser has the clipboard API: Streamlit's button works

    projector.keyboard.press("Escape")
    expect(projector.get_by_role("dialog")).to_have_count(0)
