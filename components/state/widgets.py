"""Widgets bound to the URL, so a copied link reproduces the view.

Page-local choices use Streamlit's ``bind="query-params"`` (the widget key is the parameter
name); it silently drops invalid URL values, so ``warn_bad_param`` says so first. Integer
sliders (``bound_int_slider``), free text (``linked_text``: a long value can then be left out of
the link) and text shared across pages (``shared_text``) keep their value in session state and
write it to the URL themselves.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import RerunException

from bertlens.compare import SEED_FIRST
from bertlens.wording import plural
from components.services.budgeted import within_chars_budget
from components.state.params import (
    FROM_HISTORY,
    KEPT,
    LINKED,
    declared,
    drop_foreign,
    page_params,
    presenting,
    warn_bad_param,
)

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.elements.lib.mutable_tab_container import TabContainer  # what st.tabs returns: a tab with .open

REWRITTEN = "_rewritten_"  # + key: (a shared text as it was, as rewritten for the model: ``rewrite_shared_text``)
DEFAULT_TEXT = SEED_FIRST  # the pages' example sentence: seed 000's
SHARED_TEXTS = ("text", "a", "b")  # the texts that follow the student from page to page
REMEMBERED = "_shared_"  # session: + a shared text's key, its last value (kept across page switches)
DRAWN_TEXTS = "_shared_drawn"  # the shared texts the running page has drawn (each writes its own to the URL)
Line = TypeVar("Line")  # a line of an input: a sentence, or a sentence with its sense
WHOLE_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)")


def int_in_range(lo: int, hi: int) -> Callable[[str], bool]:
    """A check of a link's whole number, written as the page writes it: "2", not "02", " 2", "+2", "1_0" or "٢"
    (Python's ``int`` reads those too, and a select box that matches the text would not)."""

    def valid(raw: str) -> bool:
        return WHOLE_NUMBER.fullmatch(raw) is not None and lo <= int(raw) <= hi

    return valid


def keep_in_range(key: str, lo: int, hi: int) -> None:
    """Clamp a bound widget's stored value, e.g. after switching to a model with fewer layers."""
    value = st.session_state.get(key)
    if isinstance(value, int) and not lo <= value <= hi:
        st.session_state[key] = min(max(value, lo), hi)


def _strict_int(key: str, lo: int, hi: int, default: int) -> int:
    """Put the link's integer ``key`` in session state once, read strictly (a message for a malformed or
    out-of-range value, then ``default``), and keep it in range. Returns ``default`` kept in range."""
    drop_foreign(key)  # e.g. a string another page left under this name
    default = min(max(default, lo), hi)
    if key not in st.session_state:
        valid = int_in_range(lo, hi)
        warn_bad_param(key, valid, f"a whole number from {lo} to {hi}")
        raw = st.query_params.get(key)
        st.session_state[key] = int(raw) if raw and valid(raw) else default
    if isinstance(value := st.session_state[key], int):
        # Written back on every run, in range: a widget whose range changed (another model's layers, a longer
        # sentence's positions) is a new widget to Streamlit, which started it at its minimum (layer 5 became 0).
        st.session_state[key] = min(max(value, lo), hi)
    return default


def bound_int_slider(label: str, key: str, lo: int, hi: int, default: int = 0, **kwargs: Any) -> int:
    """A slider for an integer URL parameter, with a message for malformed or out-of-range links.

    Not ``bind="query-params"``, which would quietly round ``2.5`` or drop ``abc``: the link's
    value is read strictly once, kept in session state, and written back to the URL unless it is the default
    (each change of the URL from the server is a step in the browser's history: a page opened with its
    defaults written was two Back presses deep before the student had done anything).
    """
    default = _strict_int(key, lo, hi, default)
    if lo == hi:  # a slider needs a range; a one-value choice is just shown
        st.caption(f"{label}: {lo}")
        return lo
    value: int = st.slider(label, lo, hi, key=key, **kwargs)
    _link_text(key, str(value), str(default))
    return value


def bound_int_input(label: str, key: str, lo: int, hi: int, default: int, **kwargs: Any) -> int:
    """A number box for an integer URL parameter, read as strictly as ``bound_int_slider``'s."""
    default = _strict_int(key, lo, hi, default)
    value = int(st.number_input(label, lo, hi, step=1, key=key, **kwargs))
    _link_text(key, str(value), str(default))
    return value


def linked_text(widget: Callable[..., str | None], label: str, key: str, default: str = "", **kwargs: Any) -> str:
    """A free-text widget (``st.text_input``, ``st.text_area``, or a column's) whose value lives in the URL as
    ``key``.

    Not ``bind="query-params"``: Streamlit refuses to drop a bound widget's value from the URL, so a long paste
    made the link too long to reload. Written here, ``fit_link`` can leave it out of the link, and says so.
    """
    drop_foreign(key)
    if key not in st.session_state:  # after another page or tab, ``restore_page_state`` has put the text back
        start = st.query_params.get(key, default)
        if getattr(widget, "__name__", "") == "text_input":  # st.text_input or a column's
            start = one_line(start)
        limit = kwargs.get("max_chars")
        if limit and len(start) > limit:
            st.info(
                f"The link's `{key}` has {len(start):,} characters; this box takes {limit:,}: the first {limit:,} are used."
            )
        st.session_state[key] = start[:limit] if limit else start
    value = widget(label, key=key, **kwargs) or ""
    _link_text(key, value, default)
    return value


def one_line(text: str) -> str:
    """A link's text for a one-line input: its line breaks as spaces. The browser's input drops them, which
    joined words the page analysed apart (a line break between "line" and "second" showed "linesecond")."""
    return re.sub(r"[\r\n]+", " ", text)


def _link_text(key: str, value: str, default: str) -> None:
    """Put a text's non-default value in the URL (the default needs none)."""
    if value == default:
        st.query_params.pop(key, None)
    else:
        set_in_link(key, value)


def set_in_link(key: str, value: str) -> None:
    """``st.query_params[key] = value``, only when that changes the URL.

    Each write sends the browser the whole address as the server holds it, which can be older than the browser's:
    Streamlit's frontend writes a bound widget's change (a tab, a choice) straight into the address, and the run
    it starts can set off with the address from before it. A write on every run could then put the old address
    back: the likely cause of a Step by step choice seen leaving the link 0.3 s after it entered it (once, in a full
    browser run; not reproduced since)."""
    if st.query_params.get_all(key) != [value]:
        st.query_params[key] = value


def lazy_tabs(labels: Sequence[str], key: str) -> list[TabContainer]:
    """Tabs whose choice lives in the URL as ``key``; only the open tab's content runs and is sent.

    Bound tabs run lazily in Streamlit 1.67: each tab's ``.open`` says whether to draw it, so a page
    sends (and the browser renders) only what the student is looking at.
    """
    warn_bad_param(key, lambda raw: raw in labels, "one of: " + ", ".join(labels))
    drop_foreign(key)
    if st.session_state.get(key) not in (None, *labels):  # e.g. an old link's value, adopted unchecked
        del st.session_state[key]
    tabs = list(st.tabs(list(labels), key=key, bind="query-params"))
    st.html(SHOW_SELECTED_TAB, unsafe_allow_javascript=True)
    return tabs


# On a phone the tab strip scrolls sideways, and a tab chosen by a link or a lesson step could sit out of view
# ("Toke›"): scroll each strip to its selected tab. Our own constant script, no user text.
SHOW_SELECTED_TAB = """<script data-bertlens="show-selected-tab">
setTimeout(() => document.querySelectorAll('[role="tablist"]').forEach((list) => {
  const tab = list.querySelector('[role="tab"][aria-selected="true"]');
  if (!tab) return;
  const shown = list.getBoundingClientRect(), at = tab.getBoundingClientRect();
  if (at.left < shown.left || at.right > shown.right) list.scrollLeft += at.left - shown.left - 16;
}), 100);
</script>"""


def _remember(key: str, keeps: str | None = None) -> None:
    if keeps is not None and not has_shared_text(key) and keeps in st.session_state:
        st.session_state.setdefault(REMEMBERED + keeps, st.session_state[keeps])  # as shown beside the first change
    st.session_state[REMEMBERED + key] = st.session_state[key]


def has_shared_text(key: str) -> bool:
    """Whether the student has given the shared text ``key`` (on any page, or by a link), blank or not."""
    return REMEMBERED + key in st.session_state or key in st.query_params


def brought_from_another_page(key: str) -> bool:
    """Whether the student brings the shared text ``key`` from another page: they have it, and this page's link
    does not (a sidebar click opens a page without the last page's link)."""
    return REMEMBERED + key in st.session_state and key not in st.query_params


def set_shared_text(value: str, key: str = "text") -> None:
    """Replace a shared text, e.g. from a button's callback (before its input is drawn)."""
    st.session_state[REMEMBERED + key] = value


def rewrite_shared_text(rewrite: Callable[[str], str], key: str = "text") -> str | None:
    """Rewrite the student's shared text (theirs, or the link's) before its input is drawn. Returns the text as it
    was before ``rewrite`` changed it, for as long as the text is still the rewritten one (a rerun included); else
    None."""
    current = st.session_state.get(REMEMBERED + key)
    if current is None and key in st.query_params:
        current = one_line(st.query_params[key])
    if current is not None and (rewritten := rewrite(current)) != current:
        set_shared_text(rewritten, key)
        st.session_state[REWRITTEN + key] = (current, rewritten)
        return str(current)
    before, after = st.session_state.get(REWRITTEN + key, (None, None))
    return before if after is not None and after == current else None


def forget_shared_text(key: str = "text") -> None:
    """Drop a shared text: each page shows its own default again (a link's value aside)."""
    st.session_state.pop(REMEMBERED + key, None)


def follow_history(page: str) -> bool:
    """After the browser's Back or Forward the address is the view: drop what the session remembers of the
    page's settings and of the shared texts, so that every widget reads the address (a setting it leaves out:
    its default). Without this, the session's newer sentence and settings overwrote the entry Back opened.
    Call it before the page draws any widget. True when the run comes from Back or Forward."""
    if FROM_HISTORY not in st.query_params:
        return False
    del st.query_params[FROM_HISTORY]
    for name in [*(param.name for param in page_params(page)), *SHARED_TEXTS]:
        for key in (name, KEPT + name, REMEMBERED + name):
            st.session_state.pop(key, None)
    st.session_state.pop(LINKED + page, None)  # an older link's settings are not this entry's
    # The entry's texts are the student's again: a page that does not show one kept it only in its address, and
    # the next page switch lost it.
    _take_linked_texts(only_missing=False)
    return True


def _take_linked_texts(only_missing: bool) -> None:
    """The address's shared texts as the student's (one line each, as their inputs hold them); ``only_missing``:
    those the session has already stay."""
    for key in SHARED_TEXTS:
        if (linked := st.query_params.get(key)) and not (only_missing and REMEMBERED + key in st.session_state):
            set_shared_text(one_line(linked), key)


@contextlib.contextmanager
def shared_texts_in_link() -> Iterator[None]:
    """Run a page; then put in its URL every shared text the student has that it does not show.

    The texts follow the student from page to page, and so does the link: on Next sentence (which reads A and B,
    not ``text``) a reload or the class link once lost the sentence every other page showed. A link's texts are
    taken in before the page runs: a link to Next sentence with ``text`` lost it at the first page switch."""
    st.session_state[DRAWN_TEXTS] = set()
    _take_linked_texts(only_missing=True)  # a link's texts are the student's from the first page on, drawn or not
    replaced = False
    try:
        yield
    except RerunException:  # a new run replaces this one (a lesson step, a page switch): it writes the link
        replaced = True
        raise
    finally:
        drawn = st.session_state.get(DRAWN_TEXTS, set())
        for key in SHARED_TEXTS:
            if not replaced and key not in drawn and (value := st.session_state.get(REMEMBERED + key)):
                set_in_link(key, value)


def remembered_shared_text(key: str = "text", default: str = DEFAULT_TEXT) -> str:
    """The shared text on a page that does not show it."""
    return st.session_state.get(REMEMBERED + key) or one_line(st.query_params.get(key, "")) or default


def note_b_not_read(reads: str) -> None:
    """On a page that reads no sentence B, say so when the student has one from another page (it stays in the
    link, and comes back on the pages that read it)."""
    if remembered_shared_text("b", ""):
        st.caption(f"Sentence B, from another page, is not read here: {reads}.")


def shared_text(
    label: str = "Sentence",
    key: str = "text",
    default: str = DEFAULT_TEXT,
    keeps: str | None = None,
    **kwargs: Any,
) -> str:
    """Text that follows the user from page to page and lives in the URL as ``key``: a one-line input,
    so Enter applies it (a text area needs Ctrl+Enter, which students do not guess). ``keeps``: the shared
    text drawn beside it whose default depends on this one; it keeps the value it was shown with when the student
    first gives this one (instead of changing under their eyes).

    Not ``bind="query-params"``: a page switch drops the URL's parameters, and a bound widget
    then falls back to its default. What the user typed (or a link brought) is kept in session
    state; until then each page shows its own default. The URL carries every non-default value.
    """
    declared(key)
    remembered = REMEMBERED + key
    if remembered not in st.session_state and key in st.query_params:
        st.session_state[remembered] = one_line(st.query_params[key])
    st.session_state[key] = st.session_state.get(remembered, default)
    value = st.text_input(label, key=key, on_change=_remember, args=(key, keeps), **kwargs)
    _link_text(key, value, default)
    st.session_state.setdefault(DRAWN_TEXTS, set()).add(key)
    return within_chars_budget(value, label)


def typed_text(key: str = "text") -> str:
    """A shared text as typed: ``shared_text`` gives what pages read of it (at most the characters budget)."""
    typed: str = st.session_state.get(key, "")
    return typed


def without_repeats(lines: Sequence[Line], counts_once: str) -> tuple[Line, ...]:
    """``lines`` with each repeat left out, and a caption saying how many were (``counts_once``: "each sentence")."""
    unique = tuple(dict.fromkeys(lines))
    if len(unique) < len(lines):
        st.caption(f"{plural(len(lines) - len(unique), 'repeated line')} left out: {counts_once} counts once.")
    return unique


def control_row(*widths: float, **kwargs: Any) -> list[DeltaGenerator]:
    """Controls that share a row (``st.columns``: ``widths`` and ``kwargs``) when they have the page's width, and
    stack in presentation mode's side column (``components.ui.layout.Stage``), too narrow for a row."""
    return [st.container() for _ in widths] if presenting() else list(st.columns(widths, **kwargs))


def sentence_pair(b_label: str = "Sentence B (optional)", **kwargs: Any) -> tuple[str, str]:
    """The shared sentence and the optional sentence B side by side (stacked on a narrow screen)."""
    left, right = control_row(1, 1)
    with left:
        text = shared_text(**kwargs)
    with right:
        return text, sentence_b(b_label)


def sentence_b(label: str = "Sentence B (optional)", default: str = "", **kwargs: Any) -> str:
    """The optional second sentence of a pair (URL ``b``), shared like the first; blank means none."""
    return shared_text(label, key="b", default=default, **kwargs).strip()
