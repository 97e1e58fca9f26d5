"""The class link in app.py: one line in the sidebar, and the view it opens (a large dialog) with the link's QR code,
the link itself, what it carries, and a warning when its address is this computer's own.

The link is read on the home page's first run: later AppTest runs run the page alone, without app.py's sidebar
(tests/pages/test_lessons_page.py says why), so the button's click is given as the session state it sets.
``st.context.url`` is what the browser reports; AppTest reports none unless told (``AppTest.context``).
"""

from __future__ import annotations

import base64
import re
from urllib.parse import parse_qsl, urlsplit

from streamlit.testing.v1 import AppTest

from bertlens.class_link import QR_LABEL, qr_svg
from components.ui import layout
from components.ui.class_link import NO_COPY_BUTTON_CSS, SERVE_ON_THE_NETWORK, SHOW
from tests.conftest import APPTEST_TIMEOUT, ROOT

LOOPBACK = "Students' devices cannot open this link"


def app(monkeypatch, model, url: str | None, shown: bool = True, **params: str | list[str]) -> AppTest:
    """``app.py`` on the home page at ``url`` (as the browser reports it), the class link's button clicked."""
    monkeypatch.setattr(layout, "run_inside_app", lambda: None)  # see tests/pages/test_lessons_page.app
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(model))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(params)
    if url is not None:
        at.context["url"] = url
    if shown:
        at.session_state[SHOW] = True
    at.run()
    assert not at.exception
    return at


def view(at: AppTest):
    [dialog] = at.get("dialog")
    return dialog


def link_in(at: AppTest) -> str:
    [link] = [code.value for code in view(at).get("code")]
    return link


def qr_image_svg(at: AppTest) -> str | None:
    """The SVG of the view's QR code image (a data URI in an ``<img>``), with the image's alt text checked."""
    for html in view(at).get("html"):
        if found := re.search(
            r'<img class="bl-qr" alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)">', html.value
        ):
            assert found[1] == QR_LABEL
            return base64.b64decode(found[2]).decode()
    return None


def said(at: AppTest, kind: str) -> str:
    return " ".join(str(element.value) for element in view(at).get(kind))


def test_the_sidebar_has_one_line_for_the_class_link(monkeypatch, tiny_pretraining_dir):
    at = app(
        monkeypatch, tiny_pretraining_dir, "http://127.0.0.1:8501/?text=The+animal", shown=False, text="The animal"
    )
    first = next(iter(at.sidebar.children.values()))  # on the first screen, above the model picker
    assert first.type == "button" and first.label == "Show the class link" and first.key == "_class_link"
    assert at.get("dialog") == [] and at.get("code") == []  # no link drawn until asked for
    assert not any("http" in str(caption.value) for caption in at.sidebar.caption)


def test_the_view_shows_the_links_qr_code_the_link_and_that_127_0_0_1_is_this_computers(
    monkeypatch, tiny_pretraining_dir
):
    at = app(
        monkeypatch,
        tiny_pretraining_dir,
        "http://127.0.0.1:8501/?text=The+animal",
        text="The animal",
        attn_tab="Head view",
        heads=["1", "3"],
    )
    dialog = view(at)
    assert dialog.proto.dialog.title == "Class link" and dialog.proto.dialog.width == dialog.proto.dialog.LARGE
    link = link_in(at)
    # class_url's value: the page's address with every parameter of the link and the model pinned
    assert link.startswith("http://127.0.0.1:8501/?")
    expected = [("text", "The animal"), ("attn_tab", "Head view"), ("heads", "1"), ("heads", "3")]
    assert sorted(parse_qsl(urlsplit(link).query)) == sorted([*expected, ("model", str(tiny_pretraining_dir))])
    assert qr_image_svg(at) == qr_svg(link)  # the QR code of exactly that link (tests/core/test_class_link.py)
    warning = said(at, "warning")
    assert LOOPBACK in warning and "`127.0.0.1` is this computer's own address" in warning
    assert f"`{SERVE_ON_THE_NETWORK}`" in warning and "docs/running-a-class.md" in warning
    captions = said(at, "caption")
    assert "It opens every student on this page" in captions and "button at its top right" in captions
    assert not any(NO_COPY_BUTTON_CSS in html.value for html in dialog.get("html"))


def test_a_network_address_gets_no_warning_and_a_copy_without_the_clipboard_api(monkeypatch, tiny_pretraining_dir):
    """Over plain http to a network address the browser gives the page no clipboard API: Streamlit's copy button would
    do nothing, so it is hidden and the view says how to copy (one click selects the whole link)."""
    at = app(monkeypatch, tiny_pretraining_dir, "http://192.168.1.20:8501/", text="The animal")
    link = link_in(at)
    assert link.startswith("http://192.168.1.20:8501/?") and qr_image_svg(at) == qr_svg(link)
    assert LOOPBACK not in said(at, "warning") and not view(at).get("warning")
    assert "click the link to select it whole, then Ctrl+C" in said(at, "caption")
    assert any(NO_COPY_BUTTON_CSS in html.value for html in view(at).get("html"))


def test_a_link_too_long_for_a_qr_code_is_shown_without_one(monkeypatch, tiny_pretraining_dir):
    """A link may be up to 8,000 characters (params.LINK_CHARS); a QR code holds at most 2,953."""
    at = app(monkeypatch, tiny_pretraining_dir, "https://bertlens.example.org/", text="word " * 700)
    assert "text=word" in link_in(at) and len(link_in(at)) > 3_000
    assert qr_image_svg(at) is None
    assert "Too long for a QR code" in said(at, "info") and "share the link itself" in said(at, "info")
    assert not view(at).get("warning")  # https: a host students can open
