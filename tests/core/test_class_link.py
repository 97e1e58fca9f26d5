"""The class link's QR code is segno's QR code of the exact link (read back from the SVG's own drawing, and decoded by
zxing-cpp, a decoder independent of segno), and a link on this computer's own address is told apart."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import segno

from bertlens.class_link import QR_LABEL, QR_MAX_BYTES, QUIET_ZONE, data_uri, only_this_computer, qr_svg, secure_context

SVG = "{http://www.w3.org/2000/svg}"
LINK = (
    "http://192.168.1.20:8501/attention?present=true&lesson=discover&step=4"
    "&text=The+animal+didn%27t+cross+the+street+because+it+was+too+tired.&attn_tab=Token+focus&attn_layer=11"
    "&model=bert-base-uncased"
)


def drawn_modules(svg: str) -> np.ndarray:
    """The dark modules the SVG draws (quiet zone included), read from its path: segno draws each row's runs of
    dark modules as horizontal strokes ("M4 4.5h7m2 0h1…": move, then a run of 7, …)."""
    root = ET.fromstring(svg)
    size = int(root.get("viewBox", "").split()[2])
    [path] = [p for p in root.iter(f"{SVG}path") if p.get("stroke") == "#000"]
    grid = np.zeros((size, size), dtype=bool)
    x = y = 0.0
    for move, dx, dy, run in re.findall(r"([Mm])(-?[\d.]+) (-?[\d.]+)h(\d+)", path.get("d", "")):
        x, y = (float(dx), float(dy)) if move == "M" else (x + float(dx), y + float(dy))
        grid[int(y - 0.5), int(x) : int(x) + int(run)] = True
        x += int(run)
    return grid


def test_the_svg_draws_segnos_qr_code_of_the_exact_link():
    svg = qr_svg(LINK)
    assert svg is not None
    expected = np.pad(np.array(segno.make_qr(LINK, error="l").matrix, dtype=bool), QUIET_ZONE)
    assert np.array_equal(drawn_modules(svg), expected)


def test_the_svg_decodes_to_the_link():
    zxingcpp = pytest.importorskip("zxingcpp")
    svg = qr_svg(LINK)
    assert svg is not None
    modules = drawn_modules(svg)
    image = np.kron(np.where(modules, 0, 255), np.ones((6, 6))).astype(np.uint8)  # 6 px a module, white quiet zone
    assert [result.text for result in zxingcpp.read_barcodes(image)] == [LINK]


def test_the_svg_is_an_image_named_as_the_qr_code_of_the_link():
    svg = qr_svg(LINK)
    assert svg is not None
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("aria-label") == QR_LABEL == "QR code of the class link"
    assert root.findtext(f"{SVG}title") == QR_LABEL
    assert root.get("width") is None and root.get("height") is None  # sized by whatever shows it
    background = next(p for p in root.iter(f"{SVG}path") if p.get("fill"))
    assert background.get("fill") == "#fff"  # the quiet zone is white on any page
    assert base64.b64decode(data_uri(svg).removeprefix("data:image/svg+xml;base64,")).decode() == svg


def test_a_link_too_long_for_any_qr_code_has_none():
    """A link may have up to 8,000 characters (params.LINK_CHARS); the largest QR code holds 2,953 bytes."""
    assert qr_svg("http://h/?" + "x" * (QR_MAX_BYTES - 10)) is not None
    assert qr_svg("http://h/?" + "x" * (QR_MAX_BYTES - 9)) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8501/attention?text=x",
        "http://localhost:8501/",
        "http://LOCALHOST:8501/",
        "http://[::1]:8501/",
        "http://127.0.1.1:8501/",  # Debian's name for the machine itself
        "http://0.0.0.0:8501/",  # where the server listens, typed into a browser
        "http://app.localhost:8501/",
    ],
)
def test_this_computers_own_addresses_are_told_apart(url):
    assert only_this_computer(url)
    # The clipboard: loopback and localhost are secure contexts, 0.0.0.0 (no address of its own) is not.
    assert secure_context(url) == (not url.startswith("http://0.0.0.0"))


@pytest.mark.parametrize(
    "url",
    [
        "http://192.168.1.20:8501/attention?text=x",
        "http://10.0.0.5:8501/",
        "http://[fe80::1]:8501/",
        "http://classroom-pc.local:8501/",
        "https://bertlens.example.org/",
        "/attention?text=x",  # no host at all (AppTest's link)
    ],
)
def test_a_network_address_is_not_this_computers_own(url):
    assert not only_this_computer(url)


def test_the_clipboard_needs_https_or_this_computer():
    assert secure_context("https://bertlens.example.org/")
    assert not secure_context("http://192.168.1.20:8501/")
