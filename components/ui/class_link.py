"""The class link: one button in the sidebar, and the view it opens for a projector.

The view is a large dialog: the link's QR code, as high as the screen allows, for a room of phones to scan; the link
in large type, to copy or type; what the link carries; and, when its address is this computer's own (127.0.0.1,
localhost), that students cannot open it and how to serve the class on the network. Drawn only while open: a code
block loads Streamlit's 1.5 MB syntax highlighter, which every fresh tab of every page would otherwise fetch.
"""

from __future__ import annotations

import html
from urllib.parse import urlencode, urlsplit

import streamlit as st

from bertlens.class_link import QR_LABEL, QR_MAX_BYTES, data_uri, only_this_computer, qr_svg, secure_context
from bertlens.pages import PAGE_TITLES
from components.services.settings import settings
from components.services.text import code_span
from components.state.model_choice import active_model_name
from components.state.params import PARAMS

PRIVATE = ("seat",)  # this tab's own: a live class's student id
SHOW = "_class_link_show"  # the button was clicked: the run it starts opens the view
SERVE_ON_THE_NETWORK = "streamlit run app.py --server.address 0.0.0.0"
WHERE_DOCUMENTED = "docs/running-a-class.md, “A class on the room's network”"

# Our own constant CSS. The QR code takes the dialog's height less its title and margins (at 1280×720 about 530 px);
# the link is large monospace, selected whole by one click (a copy without the clipboard API: over plain http to a
# network address a browser gives a page none), its copy button always shown (Streamlit shows it only under a mouse).
VIEW_CSS = """<style>
.bl-qr { display: block; width: min(100%, calc(100dvh - 11.5rem)); min-width: 12rem; height: auto; aspect-ratio: 1;
  margin-inline: auto; shape-rendering: crispEdges; }
.st-key-class_link_text code { font-size: 1.45rem !important; line-height: 1.35 !important; user-select: all;
  overflow-wrap: anywhere; }
.st-key-class_link_text pre { max-height: calc(100dvh - 26rem); min-height: 3rem; overflow-y: auto; }
.st-key-class_link_text [data-testid="stCode"] div:has([data-testid="stElementToolbarButton"]) {
  visibility: visible !important; opacity: 1 !important; }
</style>"""
# Over plain http to a network address the browser has no clipboard API: Streamlit's copy button would do nothing.
NO_COPY_BUTTON_CSS = """<style>
.st-key-class_link_text [data-testid="stElementToolbarButton"] { display: none !important; }
</style>"""


def class_link_button(key: str = "_class_link") -> None:
    """The sidebar's one line, drawn before the page runs (so that its place never changes during a run), and, in
    presentation mode, the same button beside the page's title (the sidebar is folded away); a click opens the view
    at the end of the run it starts (``show_class_link``), once the page has written its view to the URL."""
    st.button("Show the class link", icon=":material/qr_code_2:", key=key, width="stretch", on_click=_asked_for)


def _asked_for() -> None:
    st.session_state[SHOW] = True


def show_class_link(page_path: str, left_out: tuple[str, ...] = ()) -> None:
    """Open the class link (``class_url``) for the projector, if the button asked for it in this run: it carries this
    page, lesson step, sentence, view and model, but for the ``left_out`` parameters (``params.fit_link``'s: too long
    for a link). The next run closes it (it opens once per click, as a button's value is true once)."""
    if st.session_state.pop(SHOW, False):
        class_link_view(class_url(page_path), left_out)


@st.dialog("Class link", width="large", icon=":material/share:")
def class_link_view(url: str, left_out: tuple[str, ...]) -> None:
    """The link for a room: its QR code, the link itself, what it carries, and a warning when no student can open
    it. Streamlit's dialog takes focus, keeps it inside and closes with Escape or its close button."""
    qr, text = st.columns([5, 6], gap="medium")
    with qr:
        svg = qr_svg(url)
        image = f'<img class="bl-qr" alt="{html.escape(QR_LABEL)}" src="{data_uri(svg)}">' if svg else ""
        st.html(VIEW_CSS + ("" if secure_context(url) else NO_COPY_BUTTON_CSS) + image)
        if svg is None:
            st.info(
                f"Too long for a QR code ({len(url.encode()):,} characters; one holds at most {QR_MAX_BYTES:,}): "
                "share the link itself.",
                icon=":material/qr_code_2:",
            )
    with text:
        with st.container(key="class_link_text"):
            st.code(url, language=None, wrap_lines=True)
        st.caption(carries(left_out) + " " + how_to_copy(url))
        if only_this_computer(url):
            st.warning(loopback_warning(url), icon=":material/wifi_off:")


def carries(left_out: tuple[str, ...]) -> str:
    """What the link opens, for every student alike; or, when it is too long to share whole, what it leaves out."""
    if left_out:
        return (
            f"Too long to share whole: it leaves out {', '.join(map(code_span, left_out))} (see the notice on the "
            "page), so students open this page and view without it. Shorten it to share the same numbers."
        )
    return (
        "It opens every student on this page (and lesson step) with the same sentence, view and model; not uploaded "
        "files or edited tables (share those as files)."
    )


def how_to_copy(url: str) -> str:
    """How to copy the link where the browser shows ``url``: Streamlit's copy button needs the clipboard API."""
    if secure_context(url):
        return "Copy it with the button at its top right, or click the link to select it whole, then Ctrl+C."
    return "Copy it: click the link to select it whole, then Ctrl+C (over http the browser offers no copy button)."


def loopback_warning(url: str) -> str:
    """Why students cannot open ``url`` (its host is this computer's own), and what to do instead."""
    host = urlsplit(url).hostname or "this address"
    return (
        f"**Students' devices cannot open this link:** {code_span(host)} is this computer's own address. Serve BERT "
        f"Lens on the network ({code_span(SERVE_ON_THE_NETWORK)}), open it here at this computer's network address "
        "(the *Network URL* Streamlit prints, such as `http://192.168.1.20:8501`), then show the class link again. "
        f"How: {WHERE_DOCUMENTED}."
    )


def class_url(page_path: str) -> str:
    """The current page's URL with every declared parameter of the URL, and the active model pinned."""
    pairs: list[tuple[str, str]] = []
    for name in st.query_params:
        if name in PARAMS and name not in PRIVATE:
            pairs += [(name, value) for value in st.query_params.get_all(name)]
    model = active_model_name()
    if "model" not in st.query_params and model in settings().model_options:
        pairs.append(("model", model))
    query = urlencode(pairs)
    return f"{app_url()}/{page_path}" + (f"?{query}" if query else "")


def app_url() -> str:
    """The app's address as this browser opened it, without a page or a query."""
    base = (st.context.url or "").split("?")[0].rstrip("/")
    return base.rsplit("/", 1)[0] if base.rsplit("/", 1)[-1] in PAGE_TITLES else base
