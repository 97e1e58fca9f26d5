"""The class link's pure parts: its QR code, drawn as SVG, and whether its address is this computer's own.

The QR code comes from segno (pure Python, no dependencies): a QR code proper, never a Micro QR code, which many
phone cameras do not read. Error correction is the lowest level, L, raised by segno where that costs no larger
symbol: fewer, larger modules are what a phone at the back of a room needs, and a projected screen is not dirty
or torn. The symbol keeps the standard's quiet zone of four modules, in white, also where the page is not.
"""

from __future__ import annotations

import base64
import html
import io
import ipaddress
from urllib.parse import urlsplit

import segno

QR_LABEL = "QR code of the class link"  # its text equivalent: the link itself is written beside it
QUIET_ZONE = 4  # modules of white around the symbol (ISO/IEC 18004)
QR_MAX_BYTES = 2_953  # what the largest QR code (version 40) holds at level L, in byte mode


def qr_svg(url: str, label: str = QR_LABEL) -> str | None:
    """The QR code of ``url`` as an SVG document (``role="img"``, named by ``label``, sized by whatever shows it), or
    None when ``url`` is too long for any QR code (over ``QR_MAX_BYTES``)."""
    try:
        code = segno.make_qr(url, error="l")
    except segno.DataOverflowError:
        return None
    out = io.BytesIO()
    code.save(
        out, kind="svg", xmldecl=False, nl=False, omitsize=True, border=QUIET_ZONE, dark="#000", light="#fff",
        title=label, svgclass=None, lineclass=None,
    )  # fmt: skip
    svg = out.getvalue().decode()
    return svg.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1)


def data_uri(svg: str) -> str:
    """``svg`` as a data URI, for an ``<img>``: Streamlit's ``st.html`` removes inline SVG (its sanitizer keeps
    HTML only)."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def only_this_computer(url: str) -> bool:
    """Whether ``url``'s host is this computer's own address (localhost, 127.x.x.x, ::1, or the unspecified
    0.0.0.0 or ::), which no other device can open. A URL without a host (a relative one) is not."""
    host = urlsplit(url).hostname
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a name: the network's, as far as a link can tell
        return False
    return address.is_loopback or address.is_unspecified


def secure_context(url: str) -> bool:
    """Whether a browser showing ``url`` gives the page the clipboard API: over https, or on this computer's own
    address (browsers treat http://localhost and http://127.0.0.1 as secure, http://192.168.1.20 not)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    loopback = host == "localhost" or host.endswith(".localhost") or host == "::1" or host.startswith("127.")
    return parts.scheme == "https" or loopback  # never 0.0.0.0: not a secure context (W3C Secure Contexts)
