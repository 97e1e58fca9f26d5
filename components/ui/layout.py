"""Page scaffolding shared by every page: title, active model, fallback banner, input notices."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitPageNotFoundError
from streamlit.runtime.pages_manager import PagesManager

from bertlens.analysis import Encoding, input_problem
from bertlens.family import NotInThisFamily
from bertlens.lessons import Lesson
from bertlens.models import ModelBundle
from bertlens.pages import APP_TITLE
from components.services.page_flow import stop_page
from components.services.settings import settings
from components.services.text import code_span
from components.state.model_choice import active_bundle
from components.state.params import bound, presenting, read_link, restore_page_state
from components.state.widgets import follow_history
from components.ui.class_link import class_link_button
from components.ui.lessons import (
    InClass,
    follow_the_class,
    forget_opened_step,
    keep_followed_lesson,
    lesson_panel,
    linked_step,
)
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
.js-plotly-plot svg :is(.xaxislayer-above, .yaxislayer-above, .cbaxis, .cbtitle) text,  /* every axis's ticks */
.js-plotly-plot svg :is(.xtitle, .ytitle, .gtitle, .legendtext, .legendtitletext) { fill: INK !important; }
""".replace("INK", INK)


# Presentation mode (URL ``present=true``): the picture's text and numbers larger for the back row, the page's chrome
# (title, lead, controls' labels) compact, the sidebar folded away: a 1280×720 projector shows the picture and
# every control that changes it on one screen (``Stage``). Our own constant CSS, never user text.
PRESENTATION_CSS = (
    "<style>"
    + ACCESSIBLE_CSS
    + """
[data-testid="stMainBlockContainer"] { padding: 3.25rem 2rem 2rem !important; }  /* under the header bar */
[data-testid="stMain"] h1 { font-size: 1.9rem !important; padding: 0.25rem 0 !important; }
[data-testid="stMain"] h2 { font-size: 1.5rem !important; padding: 0.25rem 0 !important; }
[class*="st-key-picture"] [data-testid="stMarkdownContainer"] p { font-size: 1.2rem !important; }
[class*="st-key-lesson"] :is([data-testid="stMarkdownContainer"] p, li, label p) { font-size: 1.1rem !important; }
[data-testid="stMain"] .bl-table { font-size: 1.2rem !important; }  /* the numbers a class reads */
[data-testid="stMain"] [data-testid="stMetricValue"] p { font-size: 2.4rem !important; }
[data-testid="stMain"] [data-testid="stSliderThumbValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 1rem !important; }  /* the value sat on the thumb */
[data-testid="stMain"] [role="tab"] [data-testid="stMarkdownContainer"] p { font-size: 1.05rem !important; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.6rem; }
</style>"""
)


# Streamlit leaves 6rem above the title: on a 720-pixel screen that is space the views need.
COMPACT_CSS = (
    "<style>" + ACCESSIBLE_CSS + '[data-testid="stMainBlockContainer"] { padding-top: 2.5rem !important; }</style>'
)


@dataclass(frozen=True)
class Stage:
    """Where a page draws, decided here once for every page and view: ``side`` holds its inputs and the controls
    of its view, ``picture`` the view they change (tabs, charts, tables).

    Presenting, they are columns side by side (a lesson step is a column before both), so that a 1280×720
    projector shows the picture, its controls and the step's question together, without scrolling. Reading, they
    stack, controls first, full width: a chart keeps the page's width, and a phone stacks columns anyway."""

    side: DeltaGenerator
    picture: DeltaGenerator
    in_class: InClass | None = None  # this run's live class
    step: tuple[Lesson, int] | None = None  # the lesson step the address names


def _stage(with_lesson: bool) -> tuple[DeltaGenerator, Stage]:
    """The lesson step's place and the stage (keyed containers: presentation mode's CSS sizes their text)."""
    if not presenting():
        return st.container(key="lesson"), Stage(st.container(key="side"), st.container(key="picture"))
    if with_lesson:
        lesson, side, picture = st.columns([1.2, 0.95, 2.05], gap="medium")
    else:
        lesson = st.container()
        side, picture = st.columns([1, 2.3], gap="medium")
    return lesson.container(key="lesson"), Stage(side.container(key="side"), picture.container(key="picture"))


@contextmanager
def examples() -> Iterator[None]:
    """Where a page's example buttons go: a row after a caption, or, in presentation mode's narrow side column, a
    popover (a row of them there wraps over three lines)."""
    if presenting():
        with st.popover("Examples", icon=":material/list:"):
            yield
    else:
        with st.container(horizontal=True, gap="small", vertical_alignment="center"):
            st.caption("Examples:", width="content")
            yield


def _unstaged() -> tuple[DeltaGenerator, Stage]:
    return st.container(key="lesson"), Stage(st.container(), st.container())


def how_to_read(text: str, label: str = "How to read this") -> None:
    """An explanation one click away (a popover), so that it never stands between a student and the picture."""
    with st.popover(label, icon=":material/help:"):
        st.markdown(text)


def presentation_switch() -> None:
    """The sidebar's switch for presentation mode, bound to the URL so a class link can turn it on."""
    st.toggle(
        "Presentation mode",
        **bound("present"),
        help="Laid out for a projector: the picture and its controls on one screen, larger text.",
    )


def page_header(title: str, lead: str, page: str, staged: bool = True) -> tuple[ModelBundle, Stage]:
    """Title, the page's one-line lead, the active model (loading it if needed), any fallback banner and the link's
    lesson step; then the stage the page draws its controls and picture on.

    ``page`` is the page's scope in ``components.state.params`` (its file stem): a link's old parameter names
    are read as that page's parameters. ``staged=False``: a page with no picture to control (home) is laid out
    full width, a lesson step above it.
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
    if presenting():  # the sidebar is folded away: its class link beside the title
        heading, link = st.columns([5, 1.4], vertical_alignment="center")
        heading.title(title, anchor=False)
        with link:
            class_link_button(key="_class_link_presenting")
    else:
        st.title(title, anchor=False)
    header = st.empty()
    header.caption(lead)  # shown while the model loads
    bundle = active_bundle()
    model = f"Model: {code_span(bundle.name)}"
    # Presenting, one line: what the model can do is in the sidebar's status.
    header.caption(f"{lead} · {model}" if presenting() else f"{lead}  \n{model} — {bundle.capabilities.summary()}")
    fallback_banner(bundle)
    in_class = follow_the_class(bundle, page)  # a student's page goes where the teacher's step is
    step = linked_step(page)
    lesson, stage = _stage(with_lesson=step is not None) if staged else _unstaged()
    if step is not None:
        with lesson:
            if lesson_panel(bundle, page, step, stage.picture, in_class):
                stop_page()  # its question first: the page would show the answer
    return bundle, replace(stage, in_class=in_class, step=step)


@contextmanager
def explains_family_gaps() -> Iterator[None]:
    """Run a view; where it needs a part the model's family does not have (``NotInThisFamily``), show why instead."""
    try:
        yield
    except NotInThisFamily as gap:
        st.info(str(gap), icon=":material/info:")


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
