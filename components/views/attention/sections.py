"""Attention page: the widgets that choose what to show, and the sections that show it.

Figures are built in ``components.views.attention.figures`` (pure), cached results in ``components.services.cache``.
Sections read URL-bound widgets and draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd
import streamlit as st

from bertlens.analysis import Analysis, Encoding
from bertlens.attention import (
    PATTERNS,
    PRESETS,
    STATISTIC_BY_KEY,
    STATISTICS,
    VIEWS,
    Preset,
    find_head,
    focus_across_layers,
    layer_stack,
    matching_preset,
    preset_focus,
    preset_hint,
    statistics_table,
    thumbnail_size,
    token_labels,
)
from bertlens.family import in_model_tokens, layer_scope
from bertlens.models import ModelBundle
from bertlens.wording import plural
from components.services import cache
from components.services.cache import Query
from components.services.models import cached_bundle
from components.state.model_choice import active_model_name
from components.state.params import ALL_TOKENS, EVERY_TOKEN, bound, warn_bad_param, warn_bad_values
from components.state.widgets import bound_int_slider, control_row, lazy_tabs, set_shared_text
from components.ui.exports import chart, csv_download, labelled_matrix, table
from components.ui.layout import examples, how_to_read
from components.views.attention.figures import (
    Choice,
    FocusSide,
    default_focus,
    focus_layers_figure,
    focus_row_figure,
    head_view_figure,
    head_view_words,
    lines_per_row,
    matrix_figure,
    overview_figure,
    statistics_figure,
)

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_tab_container import TabContainer

TABS = (
    "Heatmap",
    "Head view",
    "All heads",
    "Head statistics",
    "Token focus",
    "Step by step",
    "Compare",
    "Mask and see",
)
FOCUS_SIDES = ("what it attends to", "who attends to it")  # the focused token as the query, as the key
STATISTICS_NOTE = (
    "Computed live from this model and this one input. Each value is a mean over the text's own tokens as "
    "queries ([CLS] and [SEP] rows are left out, and so are tokens a statistic does not apply to, e.g. a token "
    'that does not recur for "to same token elsewhere"; a sentence\'s first word has [CLS] (in sentence B, the '
    "[SEP] before it) as its previous token, and its last word [SEP] as its next); entropy is in bits (log base 2). "
    "Clark et al. (2019) report such "
    "statistics averaged over many text segments of a corpus: these describe this input only, so they change "
    "with the sentence. Click a cell to select that head."
)
LAYER_HELP = "Numbered from 0, as in bertviz: encoder layer L reads hidden state L and writes hidden state L + 1."
READING_NOTES = (
    "Each row is a token looking (the query), each column a token looked at (the key); a row's weights sum to 1. "
    f"{LAYER_HELP}\n\n**Attention is not explanation:** a weight says where a token looks, not why the model "
    "decides."
)
ROLLOUT_HELP = (
    "Rollout (Abnar & Zuidema, 2020) follows attention through the layers, counting the residual connection "
    "as attention to oneself; it is an approximation too."
)


@dataclass(frozen=True)
class PageInput:
    query: Query  # keys every cached result of the page
    analysis: Analysis

    @property
    def text(self) -> str:
        return self.query.text

    @property
    def text_b(self) -> str:
        return self.query.text_b

    @property
    def encoding(self) -> Encoding:
        return self.analysis.encoding


def matrices(page: PageInput, choice: Choice) -> np.ndarray:
    """(layers, query, key): what ``choice`` shows at every encoder layer."""
    if choice.view == "rollout":
        return cache.attention_rollout(page.query)
    return layer_stack(page.analysis.attentions, choice.head_or_mean)


# --- widgets and callbacks -----------------------------------------------------------------------


def _select_head(layer: int, head: int) -> None:
    st.session_state.update(attn_layer=layer, head=head, mean=False, view=VIEWS["raw"], attn_tab=TABS[0])


def _pick_head(picked: Any) -> None:
    """A head clicked in the overview or the statistics grid: its point's customdata is (layer, head)."""
    layer, head = picked
    _select_head(int(layer), int(head))


def _pick_token(picked: Any) -> None:
    """A token clicked in the head view: its point's customdata is (position, side)."""
    position, side = picked
    st.session_state.update(focus=int(position), focus_side=FOCUS_SIDES[int(side)])


def _every_head(heads: int) -> None:
    st.session_state["heads"] = [str(h) for h in range(heads)]


def _apply_preset(preset: Preset) -> None:
    bundle = cached_bundle(active_model_name())
    focus, targets = preset_focus(preset, cache.cached_analysis(bundle.name, preset.text, preset.text_b).encoding)
    set_shared_text(preset.text)
    set_shared_text(preset.text_b, "b")
    st.session_state.update(focus=EVERY_TOKEN, token=focus, targets=targets)
    if preset.layer is not None and preset.layer < bundle.capabilities.num_layers:
        st.session_state["attn_layer"] = preset.layer  # the layer seed 000 points to


def bound_choice(widget: Callable[..., Any], label: str, options: list[str], key: str, **kwargs: Any) -> str:
    """A URL-bound choice among strings, warning about a link value that is not one of them."""
    warn_bad_param(key, lambda raw: raw in options, "one of: " + ", ".join(options))
    chosen: str = widget(label, options, **bound(key), **kwargs)
    return chosen


def token_picker(
    widget: Callable[..., Any],
    label: str,
    encoding: Encoding,
    key: str,
    default: int | list[int],
    include_all: bool = False,
    positions: list[int] | None = None,
    offered: str = "a token of this input",
    **kwargs: Any,
) -> Any:  # st.selectbox's position (None for "all tokens"), st.multiselect's list of them
    """A URL-bound token picker (the link holds "position token"), kept valid for this input.

    ``widget`` is ``st.selectbox`` (``default``: a position) or ``st.multiselect`` (a list of them);
    ``include_all`` adds an option named "all tokens" (``EVERY_TOKEN``; the picker returns None for it);
    ``positions`` limits the choice to those, which ``offered`` names for a link value outside them.
    """
    names: dict[int, str] = {EVERY_TOKEN: ALL_TOKENS} if include_all else {}
    labels = token_labels(encoding)
    names.update((i, labels[i]) for i in (range(len(labels)) if positions is None else positions))
    options = list(names)
    warn_bad_values(key, lambda raw: raw in names.values(), offered)
    current = st.session_state.get(key)
    if isinstance(current, list):
        st.session_state[key] = [t for t in current if t in names]
    elif key in st.session_state and current not in names:
        del st.session_state[key]
    # The default even beside a set value: it is what a lesson step that leaves this picker out, and a browser's
    # Back, put back (params.bound_widget_defaults reads it from the widget).
    if widget is st.multiselect:
        kwargs["default"] = [d for d in cast("list[int]", default) if d in names]
    else:
        kwargs["index"] = options.index(default) if default in names else 0
    chosen = widget(label, options, format_func=names.__getitem__, **bound(key), **kwargs)
    return None if chosen == EVERY_TOKEN else chosen


# --- sections ------------------------------------------------------------------------------------


def preset_buttons() -> None:
    with examples():
        for i, preset in enumerate(PRESETS):
            st.button(preset.name, key=f"preset_{i}", on_click=_apply_preset, args=(preset,), type="tertiary")


def preset_questions(text: str, text_b: str, num_layers: int) -> None:
    """What seed 000 asks about this sentence, when it is one of the examples."""
    if (preset := matching_preset(text, text_b)) and (hint := preset_hint(preset, num_layers)):
        st.caption(f"**Try this:** {hint}")


def controls(bundle: ModelBundle) -> Choice:
    """View, averaging, layer and head — all in the URL."""
    caps = bundle.capabilities
    show, layer_column, head_column = control_row(1.2, 1, 1)
    with show:
        view_label = bound_choice(  # a default even beside a set value: a browser's Back resets to it
            st.segmented_control, "Show", list(VIEWS.values()), "view", required=True, help=ROLLOUT_HELP,
            default=VIEWS["raw"],
        )  # fmt: skip
        view: Literal["raw", "rollout"] = "rollout" if view_label == VIEWS["rollout"] else "raw"
        mean = st.toggle("Average the heads of the layer", **bound("mean"), disabled=view == "rollout")
    with layer_column:
        layer = bound_int_slider("Encoder layer", "attn_layer", 0, caps.num_layers - 1, help=LAYER_HELP)
        if scope := layer_scope(bundle.description, layer):
            st.caption(f"Encoder layer {layer} is {scope}.")
    with head_column:
        head = bound_int_slider("Head", "head", 0, caps.num_heads - 1, disabled=mean or view == "rollout")
    how_to_read(READING_NOTES)
    return Choice(layer=layer, head=head, mean=mean, view=view)


def open_tabs() -> list[TabContainer]:
    return lazy_tabs(TABS, "attn_tab")


def heatmap_section(page: PageInput, choice: Choice, heads: int) -> None:
    matrix = matrices(page, choice)[choice.layer]
    scope = layer_scope(cached_bundle(page.query.model).description, choice.layer) if choice.view == "raw" else None
    title = choice.title(heads) + (f" — {scope.split(':')[0].removeprefix('a ')}" if scope else "")
    chart(matrix_figure(matrix, page.encoding, title), f"attention-{choice.slug()}", key="heatmap")
    labels = list(token_labels(page.encoding))
    csv_download(
        lambda: labelled_matrix(matrix, labels, "query"),
        f"attention-{choice.slug()}",
        label="Download this matrix (CSV)",
    )


def head_view_section(page: PageInput, choice: Choice, heads: int) -> None:
    encoding = page.encoding
    token_column, side_column = st.columns(2)
    with token_column:
        focus = token_picker(
            st.selectbox, "Focus on a token (or click one)", encoding, "focus", EVERY_TOKEN, include_all=True
        )
    with side_column:
        side: FocusSide = "key" if bound_choice(
            st.radio, "Its lines", list(FOCUS_SIDES), "focus_side", horizontal=True,
            help="For the focused token: the keys it attends to, or the queries that attend to it.",
        ) == FOCUS_SIDES[1] else "query"  # fmt: skip  # never disabled: a greyed label fails contrast (WCAG 1.4.3)
    together = [] if choice.view == "rollout" else heads_together(heads)
    if together:
        drawn = [(f"head {h}", page.analysis.attentions[choice.layer, h]) for h in together]
        title = f"Encoder layer {choice.layer}, {plural(len(together), 'head')} together"
        name = f"head-view-layer{choice.layer}-heads-" + "-".join(map(str, together))
    else:
        drawn, title, name = (
            [("", matrices(page, choice)[choice.layer])],
            choice.title(heads),
            f"head-view-{choice.slug()}",
        )
    per_row = lines_per_row(len(encoding), len(drawn))
    if focus is None and per_row < len(encoding):
        st.caption(
            f"Each token shows its {per_row} strongest lines{' per head' if together else ''} here; "
            "focus a token to see all of its lines."
        )
    chart(
        head_view_figure(drawn, encoding, focus, title, side),
        name,
        key="head_view_pick",
        words=head_view_words(drawn, encoding, focus, title, side),
        on_pick=_pick_token,
    )


def heads_together(heads: int) -> list[int]:
    """The heads drawn together (bertviz's coloured heads): none means the head chosen above."""
    options = [str(h) for h in range(heads)]
    warn_bad_values("heads", lambda raw: raw in options, f"head numbers from 0 to {heads - 1}")
    if isinstance(current := st.session_state.get("heads"), list):  # e.g. after a switch to a model with fewer heads
        st.session_state["heads"] = [h for h in current if h in options]
    picked, every = st.columns([4, 1], vertical_alignment="bottom")
    chosen = picked.multiselect(
        "Heads drawn together, each in its own colour and dash (none: the view chosen above)",
        options,
        **bound("heads"),
        placeholder="Pick heads to compare, as in bertviz",
    )
    every.button(f"All {heads} heads", key="every_head", on_click=_every_head, args=(heads,))
    return sorted(int(h) for h in chosen)


def overview_section(page: PageInput, choice: Choice, bundle: ModelBundle) -> None:
    caps = bundle.capabilities
    size = thumbnail_size(len(page.encoding), caps.num_layers, caps.num_heads)
    grid = cache.thumbnails(page.query, size)
    note = (
        ""
        if size >= len(page.encoding)
        else (
            f", shrunk to {size}×{size}: each cell sums a block of keys and averages those sums over a block of "
            "queries (so each row still sums to 1)"
        )
    )
    st.caption(
        f"Raw attention of every head{note}. Click a head to open it in the heatmap (by keyboard: choose its "
        "*Encoder layer* and *Head* above, and open the *Heatmap* tab)."
    )
    fig = overview_figure(grid, size, caps.num_layers, caps.num_heads, (choice.layer, choice.head))
    peaks = page.analysis.attentions.max(axis=(2, 3))  # each head's largest weight
    layer, head = np.unravel_index(int(np.argmax(peaks)), peaks.shape)
    chart(
        fig,
        "attention-all-heads",
        key="overview_pick",
        words=(
            f"Every head's raw attention as a small heatmap: {caps.num_layers} encoder layers (rows, from 0) × "
            f"{caps.num_heads} heads (columns, from 0); the most concentrated is encoder layer {layer}, head {head}, "
            f"where one token gives {peaks[layer, head]:.1%} of its attention to a single token"
        ),
        on_pick=_pick_head,
    )


def statistics_section(page: PageInput, choice: Choice) -> None:
    stats = cache.statistics(page.query)
    how_to_read(
        in_model_tokens(STATISTICS_NOTE, cached_bundle(page.query.model).description), "How to read these statistics"
    )
    labels = [s.label for s in STATISTICS]
    label = bound_choice(st.selectbox, "Statistic", labels, "stat", index=labels.index(STATISTIC_BY_KEY["next"].label))
    statistic = next(s.key for s in STATISTICS if s.label == label)
    st.caption(STATISTIC_BY_KEY[statistic].explanation)
    if np.isnan(stats[statistic]).all():  # an empty grid with the chosen head marked in it said nothing
        st.info(f"No head has a value for this statistic: it {missing_pattern_reason(statistic, page.text_b)}.")
    else:
        fig = statistics_figure(stats[statistic], statistic, (choice.layer, choice.head))
        chart(
            fig,
            f"head-statistics-{statistic}",
            key="stats_pick",
            on_pick=_pick_head,
        )
    st.markdown("**Find the head** — the strongest head for each pattern of the notebooks, here:")
    for pattern in PATTERNS:
        found = find_head(stats, pattern.statistic)
        if found is None:
            st.button(
                f"{pattern.name}: {missing_pattern_reason(pattern.statistic, page.text_b)}",
                disabled=True,
                key=f"find_{pattern.statistic}",
            )
            continue
        value = stats[pattern.statistic][found]
        st.button(
            f"{pattern.name}: encoder layer {found[0]}, head {found[1]} ({STATISTIC_BY_KEY[pattern.statistic].label}: {value:.2f})",
            key=f"find_{pattern.statistic}",
            on_click=_select_head,
            args=found,
            help=f"For comparison, {pattern.seed_note}.",
        )
    table(statistics_table(stats), "attention-head-statistics", key="stats_table")


def missing_pattern_reason(statistic: str, text_b: str) -> str:
    """Why no head can show a pattern for this input (its statistic has no query to average over)."""
    if statistic == "other_sentence":
        return "needs a word that occurs in both sentences" if text_b else "needs a sentence B (a pair)"
    if statistic == "same_token":
        return "needs a token that occurs twice in the text"
    return "needs more tokens of text"


def token_focus_section(page: PageInput, choice: Choice, heads: int) -> None:
    encoding = page.encoding
    stack = matrices(page, choice)
    matrix = stack[choice.layer]
    focus, targets = default_focus(encoding, matching_preset(page.text, page.text_b), matrix)
    token = token_picker(st.selectbox, "Token", encoding, "token", focus)
    chosen = token_picker(st.multiselect, "Follow its attention to", encoding, "targets", targets)
    title = choice.title(heads)
    labels = list(token_labels(encoding))
    chart(
        focus_row_figure(matrix[token], encoding, token, chosen, title),
        f"token-focus-{choice.slug()}",
        key="focus_row",
        data=lambda: pd.DataFrame({"key token": labels, f"attention from {labels[token]}": matrix[token]}),
    )
    st.caption("Bars: dotted grey = the token looking, crossed red = the targets you chose, plain blue = the others.")
    if chosen:
        if choice.view == "raw" and not choice.mean:
            st.caption(
                f"Across layers this follows head {choice.head} of every layer; heads with the same number in "
                "different layers are unrelated. Average the heads, or switch to Rollout, for a layer-wide view."
            )
        values = focus_across_layers(stack, token, chosen)
        chart(
            focus_layers_figure(values, encoding, token, chosen, choice.layer, choice.across_layers(heads)),
            "token-focus-layers",
            key="focus_layers",
            data=lambda: pd.DataFrame(
                {"encoder layer": range(len(values))} | {labels[t]: values[:, i] for i, t in enumerate(chosen)}
            ),
        )
    else:
        st.info("Choose target tokens to follow this token's attention to them across the layers.")
