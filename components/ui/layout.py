"""Page scaffolding shared by every page: title, active model, fallback banner, input notices."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitPageNotFoundError
from streamlit.runtime.pages_manager import PagesManager

from bertlens.analysis import Encoding, input_problem
from bertlens.models import ModelBundle
from bertlens.pages import APP_TITLE
from components.services.page_flow import stop_page
from components.services.settings import settings
from components.services.text import code_span
from components.state.model_choice import active_bundle
from components.state.params import bound, presenting, read_link, restore_page_state
from components.state.widgets import follow_history
from components.ui.lessons import forget_opened_step, keep_followed_lesson, lesson_panel
from components.ui.model_picker import fallback_banner
from components.ui.palette import INK


def run_inside_app() -> None:
    """Make a shared link open the page inside ``app.py`` (sidebar, wide layout) on a fresh server.

    It touches Streamlit internals (as do ``params.bound_widget_defaults`` and ``model._unrecorded``): 1.67 offers
    no setting to keep ``pages/`` without its old folder mode (see tests/ui/test_pages_mode.py), and this is what
    ``st.navigation`` itself does.

    Until some session has run ``app.py``'s ``st.navigation``, Streamlit treats the ``pages/``
    folder as an old-style multipage app and runs a deep-linked page file directly. Switching
    that mode off and rerunning sends this session (same URL) through ``app.py``.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


# What every page needs to meet WCAG 2.2 AA where Streamlit's own styles fall short. Our own constant CSS.
ACCESSIBLE_CSS = """
[data-testid="stApp"] :focus-visible, [data-testid="stApp"] label:has(input:focus-visible) {
  outline: 2px solid #1a1a1a !important; outline-offset: 2px; }
[data-testid="stApp"] [role="tab"]:focus-visible { outline-offset: -2px; }
[data-testid="stApp"] :is([data-testid="stTextInputRootElement"], [data-testid="stTextAreaRootElement"],
  [data-testid="stNumberInputContainer"], :is([data-testid="stSelectbox"], [data-testid="stMultiSelect"]) [role="group"]
  ):focus-within { border-color: #1a1a1a !important; }  /* Streamlit's was the theme's red: it read as an error */
[data-testid="stApp"] [role="tablist"] { gap: 0.5rem; margin-inline: -0.25rem; }
[data-testid="stApp"] [role="tab"] { padding-inline: 0.25rem; }
[data-testid="stSlider"] div:has(> div > input[type="range"]:focus-visible) {
  outline: 2px solid #1a1a1a; outline-offset: 2px; }
[data-testid="stCheckbox"] label:has(input[role="switch"]) > div:not([data-testid]) {
  box-shadow: inset 0 0 0 1px #6b6b6b; }
[data-testid="stMain"] .stMarkdownEllipsis, [data-testid="stMain"] .stMarkdownEllipsis p {
  white-space: normal !important; text-overflow: clip !important; overflow: visible !important; }
[data-testid="stButtonGroup"] button { height: auto !important; min-height: 2.5rem; }
[data-testid="stSidebar"][data-collapsed="true"] { visibility: hidden; transition: visibility 0s .3s; }
[data-testid="stMain"] { scroll-padding-top: 4.5rem; }
[data-testid="stApp"] :is(textarea, input[type="text"], [data-testid="stText"]) { unicode-bidi: plaintext; }
[data-testid="stSidebar"] [data-testid="stCode"] :has(> [data-testid^="stBaseButton-elementToolbar"]) {
  visibility: visible !important; opacity: 1 !important; }
.js-plotly-plot svg :is(.xtick, .ytick, .cbaxis, .cbtitle) text,
.js-plotly-plot svg :is(.xtitle, .ytitle, .gtitle, .legendtext, .legendtitletext) { fill: INK !important; }
""".replace("INK", INK)


# Presentation mode (URL ``present=true``): larger text and less space above the title, for the back
# row of a classroom; the page's intro, model line, offline banner and example buttons keep their reading size, so
# that the view starts on a 720-pixel projector's first screen. Our own constant CSS, never user text.
READING = "reading-"  # the key prefix of containers whose text presentation mode leaves at reading size
PRESENTATION_CSS = (
    "<style>"
    + ACCESSIBLE_CSS
    + """
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p, [data-testid="stMain"] li,
[data-testid="stMain"] label p, [data-testid="stMain"] input, [data-testid="stMain"] textarea,
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.3rem !important; }
[data-testid="stMain"] h1 { font-size: 2.8rem !important; }
[data-testid="stMain"] .bl-table { font-size: 1.2rem !important; }  /* the numbers a class reads */
[data-testid="stMain"] [data-testid="stMetricValue"] p { font-size: 2.6rem !important; }
[data-testid="stMain"] [data-testid="stSliderThumbValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 1rem !important; }  /* larger, the value sat on the thumb */
[data-testid="stMain"] [role="tab"] [data-testid="stMarkdownContainer"] p {
  font-size: 1.1rem !important; }  /* so Attention's eight tabs fit beside the sidebar at 1280 px */
[data-testid="stMainBlockContainer"] { padding-top: 2rem !important; }
"""
    + f"""[data-testid="stMain"] [class*="st-key-{READING}"] :is([data-testid="stMarkdownContainer"] p,
  [data-testid="stCaptionContainer"]) {{ font-size: 1rem !important; }}  /* so the view starts on the first screen */
</style>"""
)


# Streamlit leaves 6rem above the title: on a 720-pixel projector that is space the views need.
COMPACT_CSS = (
    "<style>" + ACCESSIBLE_CSS + '[data-testid="stMainBlockContainer"] { padding-top: 2.5rem !important; }</style>'
)


def reading_size(name: str) -> DeltaGenerator:
    """A container whose text presentation mode keeps at reading size (a page's intro, its example buttons, a
    caveat): the view below is what a projector is for, and should start on its first screen."""
    return st.container(key=READING + name)


def presentation_switch() -> None:
    """The sidebar's switch for presentation mode, bound to the URL so a class link can turn it on."""
    st.toggle("Presentation mode", **bound("present"), help="Larger text for a projector.")


def page_header(title: str, intro: str, page: str) -> ModelBundle:
    """Title, one-line intro, the active model (loading it if needed) and any fallback banner.

    ``page`` is the page's scope in ``components.state.params`` (its file stem): a link's old parameter names
    are read as that page's parameters.
    """
    run_inside_app()
    read_link(page)
    if follow_history(page):  # the browser's Back or Forward: the address, not the session, is the view
        forget_opened_step()  # an entry with a bare lesson link opens the step's view again
    else:
        keep_followed_lesson()  # a sidebar page switch dropped it from the address
    restore_page_state(page)  # before any widget of the page is drawn
    st.set_page_config(page_title=title if title == APP_TITLE else f"{title} · {APP_TITLE}")  # 2.4.2: unique
    st.html(PRESENTATION_CSS if presenting() else COMPACT_CSS)
    st.title(title, anchor=False)
    with reading_size("intro"):
        header = st.empty()
        header.caption(intro)  # shown while the model loads
        bundle = active_bundle()
        header.caption(f"{intro}  \nModel: {code_span(bundle.name)} — {bundle.capabilities.summary()}")
        fallback_banner(bundle)
    if lesson_panel(bundle, page):  # the link's lesson step, if any, above the live page
        stop_page()  # its question first: the page would show the answer
    return bundle


def require_text(text: str) -> bool:
    """Show why ``text`` cannot be analysed; True when it can."""
    problem = input_problem(text)
    if problem:
        st.info(problem)
    return problem is None


def truncation_notice(encoding: Encoding, subject: str = "The input", pair_subject: str = "The pair") -> None:
    """Say what the model reads of an input over the token limit; ``subject`` names the input (``pair_subject`` when
    it is a pair): a second input's box is named, e.g. "The second sentence"."""
    if encoding.truncated:
        budgets = settings().budgets
        cap = budgets.tokens is not None and len(encoding) <= budgets.tokens  # this server's budget, not the model's
        reads = f"the limit is {budgets.limit('tokens')}" if cap else f"the model reads at most {len(encoding)}"
        if not encoding.full_length_b:
            st.warning(
                f"{subject} is {encoding.full_length} tokens long; {reads}. {len(encoding)} tokens are analysed: "
                f"[CLS], the text's first {len(encoding) - 2} tokens and [SEP]; the rest of the text is left out."
            )
            return
        kept_a, kept_b = encoding.sequence_ids.count(0), encoding.sequence_ids.count(1)
        st.warning(  # transformers cuts a pair longest-first: the longer sentence loses its end, token by token
            f"{pair_subject} is {encoding.full_length} tokens long; {reads}. {len(encoding)} tokens are analysed: the "
            f"longer sentence lost its end first (A keeps {kept_a} of its {encoding.full_length_a} tokens, B {kept_b} of "
            f"{encoding.full_length_b})."
        )


def nav_link(page_file: str, label: str) -> None:
    """A link to another page; a plain URL link when the page runs outside ``app.py``'s navigation."""
    try:
        st.page_link(page_file, label=label)
    except StreamlitPageNotFoundError:
        st.markdown(f"[{label}](./{Path(page_file).stem})")
