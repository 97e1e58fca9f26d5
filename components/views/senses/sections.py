"""Word-senses page: its inputs (preset, pasted lines or CSV), cached results and figures.

Hover texts and legend names are plotly pseudo-HTML, not Markdown: user text goes through
``components.services.text.chart_text`` there, and through ``literal`` everywhere Streamlit renders Markdown.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from sklearn.metrics.pairwise import cosine_similarity

from bertlens.budgets import Budgets, select_occurrences
from bertlens.sense_presets import DEFAULT_PRESET, PRESETS, SensePreset
from bertlens.senses import (
    MAX_WORD_CHARS,
    PROJECTIONS,
    STRESS_VERDICTS,
    LabelledSentence,
    Projection,
    SenseInputError,
    WordVectors,
    at_layer,
    drawn_at_random,
    layer_label,
    layer_option_name,
    layer_options,
    layer_range,
    like_pairs,
    nearest_neighbours,
    parse_lines,
    read_sentence_files,
    spellings,
    static_vs_contextual,
    stress_verdict,
    uploaded_word,
    word_problem,
)
from bertlens.table_input import TableInputError
from bertlens.wording import MAX_LISTED, agree, blank, listed, plural, shortened
from components.services import cache
from components.services.budgeted import MAX_REFERENCES, lines_within_chars_budget
from components.services.cache import Query
from components.services.models import cached_bundle
from components.services.text import chart_text, literal
from components.state.params import bound, warn_bad_param
from components.state.widgets import DEFAULT_TEXT, control_row, linked_text, without_repeats
from components.ui import exports
from components.ui.palette import INK, PALETTE, SYMBOLS  # each sense: a colour and a marker shape (2D and 3D)
from components.ui.uploads import read_upload, uploaded

TABS = ("Map", "Separation by layer", "Similarity", "Static vs contextual", "Reference words")
SOURCES = ("Preset", "Paste lines", "Upload CSV")
YOUR_SENSE = "your sentence"
NO_LABEL = "(no label)"
MAX_SENSE_CHARS = 60
CONTEXT = 120  # characters each side of the word in tables and hovers
LABEL_CHARS = 40  # a sense label's characters in legends and axis labels (tables keep it whole)


# The 3D map's axes drawn: all three (turned by dragging), or a pair of them flat, which a keyboard can choose.
AXES_SHOWN = {"All three": (0, 1, 2), "PC1 × PC2": (0, 1), "PC1 × PC3": (0, 2), "PC2 × PC3": (1, 2)}


@dataclass(frozen=True)
class SenseRequest:
    word: str
    items: tuple[LabelledSentence, ...]
    references: tuple[str, ...]


def _seed_from_preset(name: str, only_unset: bool = False) -> None:
    """Set the word and reference words to the preset's (when switching preset, or on first load)."""
    preset = _preset(name)
    for key, value in (("senses_word", preset.word), ("refs", ", ".join(preset.references))):
        if not only_unset or (key not in st.session_state and key not in st.query_params):
            st.session_state[key] = value


def _preset(name: str) -> SensePreset:
    return PRESETS.get(name, PRESETS[DEFAULT_PRESET])


def _preset_items() -> tuple[LabelledSentence, ...]:
    warn_bad_param("preset", lambda raw: raw in PRESETS, f"one of the presets ({', '.join(PRESETS)})")
    name = st.selectbox(
        "Preset",
        list(PRESETS),
        **bound("preset"),
        on_change=lambda: _seed_from_preset(st.session_state["preset"]),
    )
    st.caption(PRESETS[name].description)
    return PRESETS[name].sentences


def _pasted_items() -> tuple[LabelledSentence, ...] | None:
    default = "\n".join(f"{s.sentence} | {s.sense}" for s in PRESETS[DEFAULT_PRESET].sentences)
    text = linked_text(
        st.text_area,
        "One sentence per line: `sentence | sense` (the sense is optional)",
        "senses_lines",
        default,
        height=200,
    )
    try:
        return tuple(parse_lines(text))
    except SenseInputError as error:
        st.error(str(error))  # our own message: numbers and column names, no user text
        return None


def _uploaded_items() -> tuple[LabelledSentence, ...] | None:
    files = uploaded(
        "A CSV file with the columns `sentence` and `sense`, or CoarseWSD-20's files for one word",
        "csv_upload",
        hint=(
            "Choose a CSV file (a header row `sentence,sense`, then one sentence per row), or, as the BERT chapter's "
            "hands-on notebook does, CoarseWSD-20's files for one word: `train.data.txt` with `train.gold.txt` and "
            "`classes_map.txt`."
        ),
        types=("csv", "txt"),
        most=3,  # CoarseWSD-20's data, gold and classes map
    )
    try:
        read = read_upload("csv_upload", files, _read_sentences_and_their_word)
    except TableInputError as error:
        st.error(str(error))  # our own message: numbers and column names, no user text
        return None
    if read is None:
        return None
    st.caption(
        "Uploaded files stay in this tab, not in the link: a reload or the class link opens the page without them."
    )
    items, word = read
    if word and st.session_state.get("senses_word", "").strip().casefold() == word:
        st.caption(f"Word to follow: “{literal(word)}”, the word at the files' word positions.")
    return tuple(items)


def _read_sentences_and_their_word(read: dict[str, bytes]) -> tuple[list[LabelledSentence], str | None]:
    """The uploaded sentences, and the word their files are about (CoarseWSD-20's), which becomes the word to
    follow: once per choice of files (``read_upload`` reads each choice once), then the student's to change."""
    items, word = read_sentence_files(read), uploaded_word(read)
    if word:
        st.session_state["senses_word"] = word  # before its box is drawn, below
    return items, word


def sentence_input(budgets: Budgets, own_sentence: Callable[[], str]) -> tuple[SenseRequest | None, str]:
    """Source, sentences, target word, reference words and (drawn by ``own_sentence`` in the same row) the
    student's own sentence; the request is None (with a message) when unusable."""
    warn_bad_param("source", lambda raw: raw in SOURCES, f"one of {', '.join(SOURCES)}")
    choose, give = control_row(1, 2)  # side by side: the views start higher on the screen
    source = choose.radio("Sentences", SOURCES, **bound("source"), horizontal=True)  # 2.5.8: 24 px apart
    with give:
        items = {"Preset": _preset_items, "Paste lines": _pasted_items, "Upload CSV": _uploaded_items}[source]()
    preset_name = st.session_state.get("preset") or st.query_params.get("preset", "")
    _seed_from_preset(preset_name, only_unset=True)
    left, mid, right = control_row(1, 1.3, 2)  # one row: the views start higher on the screen
    # The preset's word and references are the defaults: a link holds them only when changed (the page once
    # wrote them into every link it opened, two more steps in the browser's history).
    preset = _preset(preset_name)
    word = linked_text(left.text_input, "Word to follow", "senses_word", preset.word, max_chars=200).strip()
    preset_refs = ", ".join(preset.references)
    refs = linked_text(mid.text_input, "Reference words (comma-separated)", "refs", preset_refs)
    if word and word.casefold() != preset.word.casefold() and _words(refs) == preset.references:
        mid.caption(  # under the box: the words in it, not the sentences (pasted ones are the student's own)
            f"The reference words {', '.join(preset.references)} are the “{preset.word}” preset's example words, "
            f"chosen for “{preset.word}”; for “{literal(word)}”, type your own above, such as a word for each of its "
            "senses."
        )
    with right:
        own = own_sentence()
    if items is None:
        return None, own
    if problem := word_problem(word):
        st.info(problem)
        return None, own
    items = _within_budgets(items, source, budgets)
    if items is None:
        return None, own
    return SenseRequest(word, items, _reference_words(refs)), own


def _within_budgets(
    items: Sequence[LabelledSentence], source: str, budgets: Budgets
) -> tuple[LabelledSentence, ...] | None:
    """The sentences a request reads: each once, within the sentences and characters budgets, sense labels cut
    to MAX_SENSE_CHARS (each cut said); None, with a message, when fewer than two are given."""
    items = without_repeats(items, "each sentence")
    if len(items) < 2:
        st.info("Give at least two sentences: one sentence gives nothing to compare.")
        return None
    if source == "Upload CSV" and len(items) > (most := budgets.sentences):
        st.warning(
            f"{len(items):,} different sentences uploaded; {most:,} of them are drawn at random (the same draw every "
            f"time, in the file's order), as the BERT chapter's hands-on notebook draws 100 of CoarseWSD-20's: "
            f"{budgets.limit('sentences')}."
        )
        items = drawn_at_random(items, most)
    elif over := budgets.first_only("sentences", len(items), "sentences"):
        st.warning(over)
        items = items[: budgets.sentences]
    sentences = lines_within_chars_budget([item.sentence for item in items], "Sentences", "sentence")
    items = tuple(LabelledSentence(sentence, item.sense) for sentence, item in zip(sentences, items, strict=True))
    if long := [i for i, item in enumerate(items, start=1) if len(item.sense) > MAX_SENSE_CHARS]:
        st.warning(
            f"{plural(len(long), 'sense label')} (of sentence {_numbers(long)}) {agree(len(long), 'is', 'are')} "
            f"longer than {MAX_SENSE_CHARS} characters and {agree(len(long), 'is', 'are')} cut there: a sense is a short name, such as “river”."
        )
        items = tuple(LabelledSentence(item.sentence, item.sense[:MAX_SENSE_CHARS]) for item in items)
    return items


def _words(refs: str) -> tuple[str, ...]:
    """The comma-separated words of ``refs``, as typed (spaces around them dropped)."""
    return tuple(r.strip() for r in refs.split(",") if r.strip())


def _reference_words(refs: str) -> tuple[str, ...]:
    """The comma-separated reference words: each once, at most MAX_REFERENCES of at most MAX_WORD_CHARS each (a
    caption says what was left out)."""
    references = tuple(dict.fromkeys(_words(refs)))
    if long_words := [r for r in references if len(r) > MAX_WORD_CHARS]:
        st.caption(f"{plural(len(long_words), 'reference word')} longer than {MAX_WORD_CHARS} characters left out.")
        references = tuple(r for r in references if len(r) <= MAX_WORD_CHARS)
    if len(references) > MAX_REFERENCES:
        st.caption(f"Only the first {MAX_REFERENCES} of {len(references)} reference words are read.")
    return references[:MAX_REFERENCES]


def _numbers(names: Iterable[int]) -> str:
    """'1, 4, 9' (the first MAX_LISTED, then how many more)."""
    return listed(map(str, names))


def view_controls(num_layers: int) -> tuple[str, str]:
    """The hidden state (URL ``senses_layer``: 0 … last, or ``lastK``) and the projection (URL ``projection``)."""
    options = layer_options(num_layers)
    warn_bad_param(
        "senses_layer",
        lambda raw: raw in options,
        f"a hidden state from 0 to {num_layers} or one of {', '.join(o for o in options if o.startswith('last'))}",
    )
    warn_bad_param("projection", lambda raw: raw in PROJECTIONS, f"one of {', '.join(PROJECTIONS)}")
    if st.session_state.get("senses_layer", options[0]) not in options:  # e.g. after switching to a smaller model
        st.session_state["senses_layer"] = options[num_layers]
    left, right = st.columns(2)  # two short controls: a row in the side column too
    layer = left.selectbox(
        "Hidden state",
        options,
        index=num_layers,  # the last hidden state; given even beside a set value (see token_picker)
        **bound("senses_layer"),
        help="0 = the embeddings output (before any attention); h = the output of encoder layer h − 1 "
        "(encoder layers are numbered from 0, as on the Attention page). lastK = the mean of the last K "
        "hidden states, a common choice for word vectors (the BERT chapter's hands-on notebook uses the last four).",
    )
    projection = right.radio(
        "Projection",
        PROJECTIONS,
        **bound("projection"),
        horizontal=True,
        help="PCA keeps the directions of largest variance; MDS approximates the cosine distances "
        "(its stress, shown under the map, says how well). PCA 3D turns by dragging; its 'Axes shown' draws any "
        "two of its three axes flat (PC1 × PC2 is PCA 2D's map).",
    )
    left.caption(f"Showing {layer_label(layer, num_layers)}.")
    return layer, projection


def sentences_to_read(
    query: Query, request: SenseRequest, own_sentence: str, budgets: Budgets
) -> tuple[tuple[str, ...], list[str], int] | None:
    """The sentences to read, their labels, and how many are the user's listed ones (the shared
    sentence joins last when it contains the word); None when the budgets leave nothing to read.

    Occurrences are counted before any forward pass, so a link with the word hundreds of times per
    line is answered with the limits it breaks, not with minutes of work.
    """
    sentences = [item.sentence for item in request.items]
    labels = [item.sense or NO_LABEL for item in request.items]
    own = "" if blank(own_sentence) else own_sentence.strip()
    if own and own not in sentences:
        if cache.occurrences_in(query, own, request.word):
            sentences, labels = [*sentences, own], [*labels, YOUR_SENSE]
        elif own != DEFAULT_TEXT:  # left out in silence, a student who typed one looked for its star in vain
            st.caption(
                f"Your own sentence's “{literal(request.word)}” comes after the first {query.max_length:,} tokens, "
                "which are all the model reads, so it is not on the map."
                if cache.occurrences_in(query, own, request.word, past_the_cut=True)
                else f"Your own sentence has no “{literal(request.word)}” (as a whole word), so it is not on the map."
            )
    counts = [cache.occurrences_in(query, sentence, request.word) for sentence in sentences]
    chosen = select_occurrences(counts, budgets.occurrences_per_sentence, budgets.occurrences)
    word = literal(request.word)
    if chosen.over_per_sentence:
        over = chosen.over_per_sentence
        numbered = [i + 1 for i in over if labels[i] != YOUR_SENSE]
        which = [f"{agree(len(numbered), 'sentence', 'sentences')} {_numbers(numbered)}"] if numbered else []
        which += [YOUR_SENSE] if any(labels[i] == YOUR_SENSE for i in over) else []
        st.warning(
            f"“{word}” occurs more than {budgets.occurrences_per_sentence:,} times in {' and '.join(which)} (up to "
            f"{max(counts[i] for i in over):,} times); {agree(len(over), 'it is', 'they are')} "
            f"left out: {budgets.limit('occurrences_per_sentence')}."
        )
    if chosen.beyond_total:
        st.warning(
            f"“{word}” occurs {sum(counts) - sum(counts[i] for i in chosen.over_per_sentence):,} times in the "
            f"sentences; only the first {plural(len(chosen.kept), 'sentence')}, with "
            f"{plural(chosen.occurrences, 'occurrence')}, {agree(len(chosen.kept), 'is', 'are')} "
            f"read (sentence {chosen.beyond_total[0] + 1} onwards is left out): {budgets.limit('occurrences')}."
        )
    if not chosen.kept:
        st.info("Nothing left to read within this server's limits: use fewer occurrences of the word.")
        return None
    listed = sum(1 for i in chosen.kept if labels[i] != YOUR_SENSE)
    return tuple(sentences[i] for i in chosen.kept), [labels[i] for i in chosen.kept], listed


def found_enough(words: WordVectors, listed: int) -> bool:
    """Say which sentences lack the word (listed, not dropped silently); True when there is something to plot."""
    missing = [i for i in words.missing if i < listed]
    if missing:
        past_the_cut = " (cut: the model reads only its start, and the word may come after)"
        lines = "\n".join(
            f"- {literal(shortened(words.sentences[i], 200))}{past_the_cut if i in words.truncated else ''}"
            for i in missing[:MAX_LISTED]
        )
        more = f"\n\n…and {len(missing) - MAX_LISTED} more." if len(missing) > MAX_LISTED else ""
        where = "any of the sentences" if len(missing) == listed else f"{len(missing)} of {plural(listed, 'sentence')}"
        st.warning(f"“{literal(words.word)}” was not found (as a whole word) in {where}:\n\n{lines}{more}")
    cut = [i for i in words.truncated if i < listed]
    if cut:
        st.caption(
            f"{plural(len(cut), 'sentence')} {agree(len(cut), 'was', 'were')} longer than the model reads and "
            f"{agree(len(cut), 'was', 'were')} cut; "
            "a word after the cut is not found."
        )
    if len(words.occurrences) < 2:
        if words.occurrences:
            st.info(f"“{literal(words.word)}” occurs only once: a map needs at least two occurrences.")
        return False
    return True


def _short(text: str) -> str:
    return shortened(text, LABEL_CHARS)


def excerpt(sentence: str, start: int, end: int, marks: tuple[str, str] = ("", "")) -> str:
    """The sentence around one occurrence: CONTEXT characters each side (… where cut), the word between ``marks``.

    Tables and hovers show this rather than whole sentences, so what the page sends stays small."""
    cut_before, cut_after = start > CONTEXT, end + CONTEXT < len(sentence)
    return (
        ("…" if cut_before else "")
        + sentence[max(0, start - CONTEXT) : start]
        + marks[0]
        + sentence[start:end]
        + marks[1]
        + sentence[end : end + CONTEXT]
        + ("…" if cut_after else "")
    )


def excerpts(words: WordVectors) -> list[str]:
    """Each occurrence's ``excerpt``, in occurrence order."""
    return [excerpt(words.sentences[o.sentence_index], o.start, o.end) for o in words.occurrences]


def _hover(sentence: str, start: int, end: int, sense: str) -> str:
    """The occurrence's excerpt, wrapped, with the word in bold; escaped (plotly renders a few HTML tags)."""
    marked = excerpt(sentence, start, end, ("\ue000", "\ue001"))
    body = chart_text("\n".join(textwrap.wrap(marked, 70))).replace("\n", "<br>")
    return f"<b>{chart_text(_short(sense))}</b><br>" + body.replace("\ue000", "<b>").replace("\ue001", "</b>")


def _span(values: np.ndarray) -> str:
    low, high = f"{values.min():.3f}", f"{values.max():.3f}"
    return f"{low} for every pair" if low == high else f"{low} – {high}"


def points_table(words: WordVectors, labels: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": range(1, len(words.occurrences) + 1),
            "sense": labels,
            "sentence": excerpts(words),
            "pieces": [" ".join(o.pieces) for o in words.occurrences],
        }
    )


def sense_marker(n: int) -> dict[str, str]:
    """The n-th sense's colour and shape: 40 distinct pairs (5 colours × 8 shapes, both cycling)."""
    return {"color": PALETTE[n % len(PALETTE)], "symbol": SYMBOLS[n % len(SYMBOLS)]}


def occurrence_map(
    words: WordVectors, labels: list[str], proj: Projection, title: str, layer: str, name: str = "senses"
) -> None:
    """The occurrences mapped (``proj``, of their vectors at ``layer``), one colour and shape per sense, and their
    coordinates. ``name``: the chart's and the table's key and file names (the live class's map has its own)."""
    points = points_table(words, labels)
    axes = ["MDS 1", "MDS 2"]
    if proj.explained:
        axes = [f"PC{i + 1} ({ratio:.1%} of variance)" for i, ratio in enumerate(proj.explained)]
    shown = _axes_shown() if len(axes) == 3 else (0, 1)
    in_3d = len(shown) == 3
    if len(axes) == 3 and not in_3d:
        title += f" seen flat: {' × '.join(f'PC{i + 1}' for i in shown)}"
    exports.chart(
        map_figure(words, labels, proj.coords[:, list(shown)], [axes[i] for i in shown], title),
        f"{name}-{words.word}-map",
        key=f"{name}-map",
    )
    if proj.stress is not None:
        st.caption(
            f"MDS approximates the cosine distances in 2D; it cannot keep them all. Stress-1 (Kruskal): "
            f"**{proj.stress:.3f}** ({stress_verdict(proj.stress)}) — the map's distances differ from the cosine "
            f"distances by about this fraction overall: 0 = every distance kept; by Kruskal's rule of thumb "
            f"{', '.join(f'≤ {bound} {verdict}' for bound, verdict in STRESS_VERDICTS)}, above that bad (if poor or "
            "bad, read the neighbours table, not the map)."
        )
    if same := proj.same_spots:
        points_in_all = len(proj.coords)
        marks = points_in_all - sum(map(len, same)) + len(same)
        spots = "; ".join(f"points {_numbers(list(group))}" for group in same[:MAX_LISTED])
        st.caption(
            f"Some points lie exactly on others: the map shows {marks} marks for {points_in_all} points. On one spot "
            f"(the same vector): {spots}{'; …' if len(same) > MAX_LISTED else ''}. "
            + (
                "At hidden state 0 a point is the word's embedding plus its position's, so the same word at the same "
                "position in different sentences is one point, until attention mixes in each sentence's context."
                if layer == "0"
                else "This model reads their sentences as the same tokens (they differ only in capitals, on an "
                "uncased model, or in spacing)."
            )
        )
    for i, axis in enumerate("xyz"[: proj.coords.shape[1]]):
        points[axis] = proj.coords[:, i]
    exports.table(points, f"{name}-{words.word}-coordinates", key=f"{name}-coordinates")


def map_figure(
    words: WordVectors, labels: list[str], coords_shown: np.ndarray, axes: list[str], title: str
) -> go.Figure:
    """The occurrences at ``coords_shown`` (one column per axis drawn: 2 flat, 3 in 3D), one colour and shape per
    sense, the student's own sentence a gold star."""
    in_3d = len(axes) == 3
    fig = go.Figure()
    for n, sense in enumerate(dict.fromkeys(sorted(labels, key=lambda s: s == YOUR_SENSE))):
        rows = [i for i, label in enumerate(labels) if label == sense]
        hover = [
            _hover(words.sentences[o.sentence_index], o.start, o.end, sense)
            for o in (words.occurrences[i] for i in rows)
        ]
        style = dict(name=chart_text(_short(sense)), text=hover, hovertemplate="%{text}<extra></extra>", mode="markers")
        coords = coords_shown[rows]
        marker = (
            dict(size=18, symbol="diamond" if in_3d else "star", color="gold", line=dict(width=1, color="black"))
            if sense == YOUR_SENSE  # a 3D chart has no star
            else dict(size=11, line=dict(width=0.5, color="white"), **sense_marker(n))
        )
        if in_3d:
            x, y, z = coords.T
            fig.add_trace(go.Scatter3d(x=x, y=y, z=z, marker={**marker, "size": 6}, **style))
        else:
            fig.add_trace(go.Scatter(x=coords[:, 0], y=coords[:, 1], marker=marker, **style))
    if in_3d:  # WebGL draws a 3D chart's axis text, out of the page CSS's reach: the page's colour is set here
        scene = {name: dict(title=axes[i], color=INK) for i, name in enumerate(("xaxis", "yaxis", "zaxis"))}
        # Turned by dragging (a layout-wide dragmode off, as every chart has, would reach the scene too). Seen from
        # a little further than plotly's default camera, which cut the axis titles at the chart's edges.
        camera = dict(eye=dict(x=1.6, y=1.6, z=1.4))
        fig.update_layout(
            scene=dict(scene, dragmode="turntable", camera=camera), margin=dict(l=0, r=0, b=0), height=640
        )
    else:
        fig.update_layout(xaxis_title=axes[0], yaxis_title=axes[1], height=560)
    # The senses in rows under the map: beside it they took 40 % of a phone's width, and cropped the 3D scene.
    fig.update_layout(title=chart_text(title), legend=dict(title_text="sense", orientation="h", yanchor="top"))
    return fig


def _axes_shown() -> tuple[int, ...]:
    """The PCA 3D map's axes to draw, picked above it: dragging is the only way to turn a 3D chart."""
    warn_bad_param("senses_axes", lambda raw: raw in AXES_SHOWN, f"one of {', '.join(AXES_SHOWN)}")
    shown = st.radio(
        "Axes shown",
        tuple(AXES_SHOWN),
        horizontal=True,
        **bound("senses_axes"),
        help="All three turn by dragging. A pair is the same map seen flat along the third axis, as a 2D chart.",
    )
    return AXES_SHOWN[shown]


MEAN_SYMBOLS = {2: "diamond", 3: "square", 4: "triangle-up"}  # the means of the last k hidden states, by k


def separation_chart(words: WordVectors, sense_labels: list[str], layer: str, scores: dict[str, float | None]) -> None:
    """``scores``: the silhouette at every layer option (``cache.separations``)."""
    if all(s is None for s in scores.values()):
        st.info("Separation needs sense labels: at least two senses, and more labelled points than senses.")
        return
    states = [scores[str(h)] for h in range(words.num_layers + 1)]
    last_k = {option: score for option, score in scores.items() if option.startswith("last")}
    one, mean = {"color": PALETTE[0]}, {"color": PALETTE[1]}  # told apart by shape too: dots on a line, the others
    fig = go.Figure(
        go.Scatter(x=list(range(len(states))), y=states, mode="lines+markers", name="one hidden state", line=one)
    )
    # Each mean at the middle of the hidden states it averages, a bar across them. Each k its own trace and marker
    # shape, named in the legend: the bars overlap, and their means can be too close for labels on the chart.
    for option, score in last_k.items():
        span = layer_range(option, words.num_layers)
        fig.add_trace(
            go.Scatter(
                x=[(span[0] + span[-1]) / 2],
                y=[score],
                error_x={"type": "data", "array": [(span[-1] - span[0]) / 2], "width": 0, **mean},
                mode="markers",
                marker={"symbol": MEAN_SYMBOLS[len(span)], "size": 10, **mean},
                name=layer_option_name(option),
            )
        )
    chosen = layer_range(layer, words.num_layers)
    fig.add_vrect(x0=chosen[0] - 0.3, x1=chosen[-1] + 0.3, fillcolor="orange", opacity=0.2, line_width=0)
    fig.update_layout(
        xaxis=dict(title="hidden state<br>(0 = embeddings output; h = after encoder layer h − 1)", dtick=1),
        yaxis_title="silhouette (cosine)",
        title="How well the sense labels separate, hidden state by hidden state",
        legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom"},  # beside the chart it took its width
        height=380,
    )
    best = max((option for option, score in scores.items() if score is not None), key=lambda o: scores[o] or 0.0)
    listed_scores = ", ".join(f"{score:.3f}" for score in states if score is not None)
    means = ", ".join(f"last {option[4:]} {score:.3f}" for option, score in last_k.items() if score is not None)
    exports.chart(
        fig,
        f"senses-{words.word}-separation",
        key="senses-separation",
        words=(
            f"silhouette at hidden states 0 to {words.num_layers}: {listed_scores}; means of the last k: {means}; "
            f"highest at {layer_label(best, words.num_layers)}"
        ),
        data=lambda: pd.DataFrame(
            {"hidden state": [*map(layer_option_name, scores)], "silhouette": [*scores.values()]}
        ),
    )
    score = scores[layer]
    single = [s for s in dict.fromkeys(sense_labels) if s and sense_labels.count(s) == 1]
    note = f" Senses with one point count 0 (scikit-learn's rule): {literal(', '.join(single))}." if single else ""
    st.caption(
        f"Silhouette at {layer_label(layer, words.num_layers)}: {score:.3f}. It runs from −1 to 1: near 1, points of "
        "the same sense are close and other senses far; near 0, the senses overlap. Shaded: the chosen hidden state(s). "
        "The other marks: the mean of the last k hidden states (an exercise of the BERT chapter's hands-on notebook), "
        "each drawn across the states it averages and named in the legend." + note
    )


def similarity_section(vectors: np.ndarray, words: WordVectors, labels: list[str]) -> None:
    order = sorted(range(len(labels)), key=lambda i: labels[i])  # same senses side by side
    names = [chart_text(f"{i + 1}. {_short(labels[i])}") for i in order]
    sims = cosine_similarity(vectors)[np.ix_(order, order)].astype(np.float32)  # half the bytes sent
    hover = "%{y} ↔ %{x}<br>cosine %{z:.3f}<extra></extra>"
    fig = go.Figure(
        go.Heatmap(z=sims, x=names, y=names, colorscale="Viridis", colorbar_title="cosine", hovertemplate=hover)
    )
    fig.update_layout(title="Cosine similarity between occurrences (grouped by sense)", height=560)
    fig.update_xaxes(type="category")  # one per occurrence, whatever its sense label looks like ("1. 2")
    fig.update_yaxes(autorange="reversed", type="category")
    points = [f"{i + 1}. {labels[i]}" for i in order]
    exports.chart(
        fig,
        f"senses-{words.word}-similarity",
        key="senses-similarity",
        data=lambda: exports.labelled_matrix(sims, points, "point"),
    )
    sentences = excerpts(words)
    rows = [
        {
            "point": i + 1,
            "sense": labels[i],
            "rank": rank + 1,
            "neighbour": j + 1,
            "neighbour sense": labels[j],
            "cosine": sim,
            "same sense": labels[i] == labels[j],
            "sentence": sentences[i],
            "neighbour sentence": sentences[j],
        }
        for i, near in enumerate(nearest_neighbours(vectors))
        for rank, (j, sim) in enumerate(near)
    ]
    st.markdown("**Nearest neighbours** of each point (cosine similarity)")
    exports.table(pd.DataFrame(rows), f"senses-{words.word}-neighbours", key="senses-neighbours")


def sense_labels_of(point_labels: Sequence[str]) -> list[str]:
    """Each point's sense, "" for a point without one (an unlabelled sentence, the student's own)."""
    return [s if s not in (NO_LABEL, YOUR_SENSE) else "" for s in point_labels]


def static_section(words: WordVectors, point_labels: list[str], layer: str) -> None:
    listed = [label != YOUR_SENSE for label in point_labels]  # the student's own sentence is shown, not compared
    static = like_pairs(words, words.static, listed)
    contextual = like_pairs(words, at_layer(words.contextual, layer), listed)
    forms = spellings(words)
    pieces = [" ".join(p) for p in forms]
    if len(forms) > 1:  # a cased model: "Field" and "field" are different tokens
        st.info(
            f"On this model “{literal(words.word)}” occurs as {plural(len(forms), 'different token sequence')} "
            f"({literal('; '.join(pieces))}), each with its own input embedding. To show context, not "
            "capitalisation, only occurrences with the same pieces are compared below."
        )
    if (compared := sum(listed)) < 2:  # a pair with the student's own sentence is not one
        st.info(
            f"The listed sentences hold {'one occurrence' if compared else 'no occurrence'} of "
            f"“{literal(words.word)}”: your own sentence is on the map, not compared here. To compare vectors, list "
            "at least two sentences with the word."
        )
        return
    if not len(static):
        st.info("No two occurrences have the same pieces: there is no pair to compare.")
        return
    st.markdown(
        f"Before BERT reads the context, “{literal(words.word)}” is just the "
        f"{'row' if all(len(p) == 1 for p in forms) else 'mean of the rows'} of the word-piece embedding "
        f"matrix for {literal(', '.join(pieces))}: the same in every sentence with those pieces. Pairwise cosine of "
        f"these static vectors: **{_span(static)}**. A word2vec-style table gives each word one such vector, so it "
        f"cannot tell the senses apart. The contextual vectors at {layer_label(layer, words.num_layers)}: "
        f"**{_span(contextual)}**."
    )
    table = pd.DataFrame(static_vs_contextual(words, sense_labels_of(point_labels), listed))
    x = ["static", *map(str, range(words.num_layers + 1))]
    columns = [c for c in ("same sense", "different senses", "all pairs") if table[c].notna().any()]
    fig = go.Figure(
        [
            go.Scatter(x=x, y=table[c], mode="lines+markers", name=c, line_color=PALETTE[i], marker=sense_marker(i))
            for i, c in enumerate(columns)
        ]
    )
    fig.update_layout(
        title="Mean pairwise cosine: static embedding vs each hidden state",
        yaxis_title="mean cosine",
        xaxis=dict(
            type="category",
            title="static = input word-piece embedding (word2vec-like);<br>0 = embeddings output; "
            "h = after encoder layer h − 1",
        ),
        legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom"},  # beside the chart it took its width
        height=400,
    )
    exports.chart(fig, f"senses-{words.word}-static-vs-contextual", key="senses-static")
    exports.table(table, f"senses-{words.word}-static-vs-contextual", key="senses-static-table")


def reference_section(
    query: Query, vectors: np.ndarray, words: WordVectors, labels: list[str], request: SenseRequest, layer: str
) -> None:
    if not request.references:
        st.caption("Type reference words above (e.g. “snake, programming” for “python”) to compare with them.")
        return
    refs = words.references
    if dropped := [r for r in request.references if r not in refs]:
        st.caption(f"Left out (nothing to read after tokenization): {literal(', '.join(dropped))}")
    unk = cached_bundle(query.model).tokenizer.unk_token
    if unknown := [r for r in refs if unk in cache.word_lookup(query, r)[0].pieces]:
        st.warning(
            f"Not in the vocabulary: {literal(listed(unknown))} became [UNK], so {agree(len(unknown), 'its', 'their')} "
            "cosine compares with the unknown token's vector, not with the word."
        )
    if not refs:
        return
    sims = cosine_similarity(vectors, np.stack([at_layer(v[None], layer)[0] for v in refs.values()]))
    table = pd.DataFrame(sims, columns=[f"cosine with “{r}”" for r in refs])
    table.insert(0, "sense", labels)
    st.markdown(
        "Each reference word is read **on its own** (as the Introduction to BERT notebook reads “snake”), at the same "
        "hidden state. Mean cosine per sense:"
    )
    per_sense = table.groupby("sense", sort=False).mean().reset_index()
    exports.table(per_sense, f"senses-{words.word}-references", key="senses-references")
    with st.expander("Every occurrence"):
        table.insert(1, "sentence", excerpts(words))
        exports.table(table, f"senses-{words.word}-references-all", key="senses-references-all")
