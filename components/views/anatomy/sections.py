"""Model anatomy page: cached results (keyed by primitives), plotly figures and section renderers."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens.anatomy import (
    NOT_IN_CHECKPOINT,
    Architecture,
    Block,
    EmbeddingParts,
    PoolerCheck,
    base_encoder_named,
    has_every_part,
    matrices_and_vectors,
)
from bertlens.family import encoder_of
from bertlens.positions import PositionEmbeddings
from bertlens.wording import blank, listed, plural
from components.services import cache
from components.services.budgeted import within_chars_budget
from components.services.models import cached_bundle
from components.services.text import chart_text, literal
from components.state.params import asked_for, bound, presenting
from components.state.widgets import bound_int_slider, linked_text
from components.ui import exports
from components.ui.checks import CHECK_TOLERANCE, check_result
from components.ui.layout import how_to_read, truncation_notice
from components.ui.palette import CELL_TEXT

TABS = ("Architecture", "Parameters", "Named parameters", "Embeddings", "Pooler", "Outputs", "Positions", "Two models")
DEFAULT_POSITIONS = 64  # positions shown unless the link says otherwise (URL ``n_positions``)
COUNT_COLUMN = st.column_config.NumberColumn(format="localized")
BOX_HEIGHT = 1.0  # data units; the diagram is 12 wide and 11.6 tall
BOX_TEXT = 11  # px: the boxes' text (presentation mode: exports.PROJECTOR_TEXT, for a projector's back row)
CHARS_PER_UNIT = 6.5  # characters of 11-pixel text a data unit of width holds on a 390-pixel phone (6.6 measured)
INK, MISSING_INK = "#1a1a1a", "#595959"  # dark text on opaque light boxes: ≥ 7:1 in the light and the dark theme
FILLS = {"data": "#f0f0f0", "embeddings": "#dbebf4", "layer": "#f9e8db", "head": "#dbf1eb"}  # PALETTE's hues, pale


def _box(fig: go.Figure, block: Block, x0: float, x1: float, y: float, kind: str, text_size: int) -> None:
    """``block`` as a box centred at height ``y``: name, sizes, parameters (dashed and grey if the checkpoint lacks it)."""
    present = block.present
    fig.add_shape(
        type="rect",
        x0=x0,
        x1=x1,
        y0=y - BOX_HEIGHT / 2,
        y1=y + BOX_HEIGHT / 2,
        fillcolor=FILLS[kind] if present else "white",
        line=dict(color=INK if present else MISSING_INK, width=1, dash="solid" if present else "dash"),
        layer="below",
    )
    count = NOT_IN_CHECKPOINT if not present else f"{block.parameters:,} parameters" if block.parameters else ""
    sizes = box_lines(block.sizes.split("; "), int(CHARS_PER_UNIT * (x1 - x0)))
    lines = [f"<b>{chart_text(block.name)}</b>", *map(chart_text, sizes), count]
    fig.add_annotation(
        x=(x0 + x1) / 2,
        y=y,
        text="<br>".join(line for line in lines if line),
        showarrow=False,
        font=dict(size=text_size, color=INK if present else MISSING_INK),
    )


def box_lines(parts: list[str], width: int) -> list[str]:
    """``parts`` joined by " · " into lines of at most ``width`` characters where they fit (a part is never cut)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


def _arrow(fig: go.Figure, start: tuple[float, float], end: tuple[float, float]) -> None:
    fig.add_annotation(
        x=end[0],
        y=end[1],
        ax=start[0],
        ay=start[1],
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        text="",
        showarrow=True,
        arrowhead=2,
        arrowwidth=1.5,
        arrowcolor="#7f7f7f",
    )


def architecture_figure(arch: Architecture, text_size: int = BOX_TEXT) -> go.Figure:
    """Seed 001's architecture figure with this checkpoint's sizes: token ids at the top, the heads at the bottom.

    ``text_size`` in px: the figure grows taller with it, so that each box keeps room for its lines (a box's lines
    are set for 11-pixel text on a phone, and a wider screen has room for larger text across)."""
    half = BOX_HEIGHT / 2
    fig = go.Figure()
    box = partial(_box, fig, text_size=text_size)
    tokens, embeddings, summed, attention, ffn, last, heads, nsp = 12.0, 10.7, 9.4, 7.7, 6.4, 4.6, 3.2, 1.8
    layer_range = "L = 0" if arch.layers == 1 else f"L = 0 … {arch.layers - 1}"
    frame_top = 8.65  # the encoder layer's frame, around the attention and feed-forward boxes
    box(arch.tokens, 3.5, 8.5, tokens, "data")
    spans = ((0, 3.9), (4.05, 7.95), (8.1, 12))
    for (x0, x1), block, joint in zip(spans, (arch.word, arch.position, arch.segment), (4.5, 6, 7.5)):
        box(block, x0, x1, embeddings, "embeddings")
        middle = (x0 + x1) / 2
        _arrow(fig, (joint, tokens - half), (middle, embeddings + half))
        _arrow(fig, (middle, embeddings - half), (joint, summed + half))
    box(arch.embeddings_sum, 3, 9, summed, "embeddings")
    fig.add_shape(
        type="rect",
        x0=0.6,
        x1=11.4,
        y0=ffn - half - 0.3,
        y1=frame_top,
        line=dict(color="#7f7f7f", width=1.5, dash="dot"),
        layer="below",
    )
    fig.add_annotation(
        x=0.75,
        y=frame_top - 0.2,
        xanchor="left",
        align="left",  # in a PNG (another font, often wider) the text grows rightwards, not across the frame
        showarrow=False,
        text=f"<b>Encoder layer L</b>, × {arch.layers} ({layer_range}): hidden state L in, L + 1 out",
        font=dict(size=text_size, color=INK),
    )
    box(arch.attention, 1.5, 10.5, attention, "layer")
    box(arch.feed_forward, 1.5, 10.5, ffn, "layer")
    box(arch.last_hidden, 3, 9, last, "data")
    box(arch.mlm_head, 0, 5.8, heads, "head")
    box(arch.pooler, 6.2, 12, heads, "head")
    box(arch.nsp_head, 6.2, 12, nsp, "head")
    for start, end in (
        ((6, summed - half), (6, frame_top)),
        ((6, attention - half), (6, ffn + half)),
        ((6, ffn - half), (6, last + half)),
        ((4.5, last - half), (2.9, heads + half)),
        ((7.5, last - half), (9.1, heads + half)),
        ((9.1, heads - half), (9.1, nsp + half)),
    ):
        _arrow(fig, start, end)
    hidden = dict(visible=False, fixedrange=True)
    fig.update_xaxes(range=[-0.1, 12.1], **hidden)
    fig.update_yaxes(range=[nsp - half - 0.1, tokens + half + 0.1], **hidden)
    fig.update_layout(
        title=f"{arch.family_name}'s architecture, with this checkpoint's sizes",
        height=round(700 * text_size / BOX_TEXT),
        margin=dict(t=40, l=0, r=0, b=0),
        # Set here: the figure is shared, and exports.chart writes nothing to it (nor, in presentation mode,
        # larger text: each box is drawn to fit its lines).
        dragmode=False,
    )
    exports.fit_title(fig)  # shared: its title is fitted to a phone here, once
    return fig


SLICE_COLOURS = ("#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99")  # light: black text ≥ 10:1


def parameter_sunburst(counts: pd.DataFrame) -> go.Figure:
    """The pieces that add up to the total, grouped by part."""
    leaves = counts[counts["adds up to total"]]
    parts = leaves.groupby("part", sort=False)["parameters"].sum()
    colour = dict(zip(parts.index, itertools.cycle(SLICE_COLOURS)))  # a part's pieces in its colour
    fig = go.Figure(
        go.Sunburst(
            ids=[*parts.index, *(leaves["part"] + "/" + leaves["component"])],
            labels=[*parts.index, *leaves["component"]],
            parents=["" for _ in parts.index] + list(leaves["part"]),
            values=[*parts.astype(int), *leaves["parameters"].astype(int)],
            branchvalues="total",
            hovertemplate="%{label}: %{value:,} parameters (%{percentRoot:.2%})<extra></extra>",
            # Light slices under black text (the default colours gave white on mid blue: 3.2:1).
            marker=dict(colors=[*colour.values(), *leaves["part"].map(colour)]),
            insidetextfont=CELL_TEXT,
        )
    )
    # A slice too thin for a readable label (the heads, the pooler: under 10 px) shows none; its hover names it.
    fig.update_layout(
        title="Where the parameters are",
        height=460,
        margin=dict(t=50, l=0, r=0, b=0),
        uniformtext=dict(minsize=10, mode="hide"),
    )
    return fig


def embedding_words(parts: EmbeddingParts, position: int, token: str) -> str:
    """The heatmap in words, from the real values (its colours are scaled row by row: reading them would not do)."""
    ranges = "; ".join(
        f"{name} from {v[position].min():.3g} to {v[position].max():.3g}" for name, v in parts.named().items()
    )
    return f"token {position} ({token}), {parts.word.shape[1]} dimensions, each row on its own colour scale: {ranges}"


def embedding_heatmap(parts: EmbeddingParts, position: int, token: str) -> go.Figure:
    rows = {name: vectors[position] for name, vectors in parts.named().items()}
    values = np.stack(list(rows.values()))
    # Each row on its own colour scale (raw look-ups are ~100x smaller than LayerNorm's output);
    # the hover shows the real value.
    scale = np.percentile(np.abs(values), 99, axis=1, keepdims=True)
    z = np.clip(values / np.where(scale > 0, scale, 1.0), -1, 1)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            y=list(rows),
            customdata=values,
            colorscale="RdBu",
            zmid=0,
            zmin=-1,
            zmax=1,
            showscale=False,
            hovertemplate="%{y}, dimension %{x}: %{customdata:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Token {position} ({chart_text(token)}): embeddings, each row on its own colour scale",
        xaxis_title="hidden dimension",
        height=330,
        margin=dict(l=140),
    )
    fig.update_yaxes(autorange="reversed")
    return fig


def pooler_scatter(check: PoolerCheck) -> go.Figure:
    fig = go.Figure(
        go.Scatter(
            x=check.by_hand,
            y=check.pooler_output,
            mode="markers",
            marker=dict(size=5),
            hovertemplate="by hand %{x:.5f}<br>pooler_output %{y:.5f}<extra></extra>",
        )
    )
    fig.add_shape(type="line", x0=-1, y0=-1, x1=1, y1=1, line=dict(dash="dot", color="gray"))
    fig.update_layout(
        title="tanh(dense([CLS])) against pooler_output, one dot per dimension",
        xaxis_title="by hand",
        yaxis_title="pooler_output",
        height=420,
    )
    return fig


def position_cosine_figure(view: PositionEmbeddings) -> go.Figure:
    """Cosine similarity of every pair of the first N position embeddings."""
    fig = go.Figure(
        go.Heatmap(
            z=view.cosine.astype(np.float32),
            x=list(range(view.count)),
            y=list(range(view.count)),
            colorscale="RdBu",
            zmid=0,
            zmin=-1,
            zmax=1,
            colorbar=dict(title="cosine"),
            hovertemplate="positions %{y} and %{x}: cosine %{z:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Cosine similarity of {view.name} 0–{view.count - 1}",
        height=560,
        xaxis_title="position",
        yaxis=dict(title="position", autorange="reversed"),
        margin=dict(t=50, l=10, r=10, b=10),
    )
    return fig


def chain_words(view: PositionEmbeddings) -> str:
    """The chain of positions in words: where it starts and ends, and how far apart neighbours are."""
    (x0, y0), (x1, y1) = view.projection[0], view.projection[-1]
    steps = np.linalg.norm(np.diff(view.projection, axis=0), axis=1)
    return (
        f"Positions 0–{view.count - 1} in 2D (PCA, {sum(view.explained):.0%} of the variance), joined in order: "
        f"from position 0 at ({x0:.3g}, {y0:.3g}) to position {view.count - 1} at ({x1:.3g}, {y1:.3g}); "
        f"neighbours are {steps.min():.3g} to {steps.max():.3g} apart (median {np.median(steps):.3g})"
    )


def position_chain_figure(view: PositionEmbeddings) -> go.Figure:
    """The first N position embeddings in 2D (PCA), joined in order and coloured by position."""
    x, y = view.projection[:, 0], view.projection[:, 1]
    order = np.arange(view.count)
    fig = go.Figure(
        [
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                line=dict(color="rgba(120,120,120,0.5)", width=1),
                hoverinfo="skip",
                showlegend=False,
            ),
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                customdata=order,
                showlegend=False,
                marker=dict(
                    size=7,
                    color=order,
                    colorscale="Viridis",
                    # whole positions: plotly's own steps for five positions were 0, 0.5, 1, …
                    colorbar=dict(title="position", **({"tick0": 0, "dtick": 1} if view.count <= 11 else {})),
                ),
                hovertemplate="position %{customdata}<br>PC1 %{x:.4f}<br>PC2 %{y:.4f}<extra></extra>",
            ),
        ]
    )
    first, second = view.explained
    fig.update_layout(
        title=f"{view.name.capitalize()} 0–{view.count - 1} in 2D (PCA)",  # joined in order (the caption says)
        height=520,
        xaxis_title=f"PC1 ({first:.1%} of the variance)",
        yaxis_title=f"PC2 ({second:.1%})",
        margin=dict(t=50, l=10, r=10, b=10),
    )
    return fig


@st.cache_resource(max_entries=8, show_spinner=False)
def architecture_chart(q: cache.Query, text_size: int) -> go.Figure:
    """The diagram, built once per model and text size: its ~70 plotly calls took 70 ms on every visit of the page's
    first tab (a cached visit's budget is 60 ms). Shared by every session and never changed: exports.chart only
    reads it."""
    return architecture_figure(cache.architecture_blocks(q), text_size)


def diagram_section(model_name: str) -> None:
    query = cache.query(model_name)
    arch = cache.architecture_blocks(query)
    how_to_read(
        f"Token ids become vectors (three embeddings, summed), {plural(arch.layers, 'encoder layer')} of one shape refine "
        "them, and the heads read the last hidden state. Layers are numbered as on every page: encoder layer L "
        "reads hidden state L and writes hidden state L + 1, so hidden state 0 is the embeddings' output."
    )
    text_size = exports.PROJECTOR_TEXT if presenting() else BOX_TEXT
    chart = architecture_chart(query, text_size)
    exports.chart(chart, "architecture", key="architecture", words=arch.in_words(), shared=True)
    if not all(block.present for block in arch.blocks()):
        st.caption(
            "Dashed boxes are parts this checkpoint does not ship: the pages that need them say so instead of "
            "guessing with random weights."
        )
    layer_counted = (
        f"the encoder layer's counted {plural(arch.layers, 'time')}"
        if arch.encoder_parameters is None
        else "the encoder's counted once per set of layer weights"
        + (
            f" ({arch.distinct_layers} shared by all {arch.layers} layers)"
            if arch.distinct_layers != arch.layers
            else ""
        )
    )
    st.caption(f"Every box's parameters, {layer_counted}, add up to {arch.total():,}.")


def architecture_section(model_name: str) -> None:
    config, counts, named = cache.architecture(cache.query(model_name))
    total = int(counts["parameters"].iloc[-1])
    base = counts.set_index(["part", "component"])["parameters"]
    st.markdown(
        f"**{total:,} parameters** in this checkpoint: embeddings {int(base[('Embeddings', 'all embeddings')]):,}, "
        f"one encoder layer {int(base[('Encoder layer 0', 'one layer')]):,}, "
        f"base encoder {int(base[('Base encoder', 'total')]):,}; {len(named)} named parameters, "
        f"{len(base_encoder_named(named))} of them the base encoder's (`BertModel.named_parameters()`, as the "
        "Introduction to BERT notebook lists them)."
    )
    matrices, vectors = matrices_and_vectors(named)
    st.caption(
        f"Of the base encoder's parameters, {matrices:,} sit in weight matrices and {vectors:,} in vectors "
        "(biases, LayerNorm scales and shifts): counting only the 2-D matrices, as the Introduction to BERT notebook "
        "does, gives the first number."
    )
    if (counts["note"] == NOT_IN_CHECKPOINT).any():
        st.caption(
            "Rows marked “not in this checkpoint” are parts this model does not ship (an encoder-only checkpoint "
            "has no fill-mask or next-sentence head). bert-base-uncased has both: run `hf download bert-base-uncased` "
            "on a connected machine, then pick it, or start with `BERTLENS_MODEL=/path/to/folder`."
        )
    if (counts["component"] == "decoder weight").any():
        st.caption("The MLM decoder reuses the word-embedding matrix (weight tying): it is counted once.")
    # One above the other, each full width: beside the chart the table was 480 px wide, its words broken
    exports.chart(parameter_sunburst(counts), "parameters", key="parameter_sunburst")
    exports.table(
        counts,
        "parameter-counts",
        key="parameter_counts",
        column_config={
            "parameters": COUNT_COLUMN,
            "% of total": exports.PERCENT_COLUMN,
            "% of base encoder": exports.PERCENT_COLUMN,
        },
    )
    with st.expander("Configuration"):
        exports.table(config, "config", key="config")
    with st.expander("The module tree, as print(model) shows it"):
        described = cached_bundle(model_name).description
        if described.family != "bert":
            st.caption(
                f"{described.family_name}'s encoder, and after it only the pre-training heads this checkpoint ships "
                f"({', '.join(described.heads) or 'none'})."
            )
            st.text(cache.modules(cache.query(model_name)))  # literal, monospace
            return
        shown = (
            "`BertForPreTraining`: its `bert` part below is the `BertModel` (embeddings, encoder, pooler), and its "
            "`cls` holds both heads, `predictions` (masked language model) and `seq_relationship` (next sentence)"
            if has_every_part(cached_bundle(model_name))
            else "the `BertModel` below, and after it only the heads this checkpoint ships"
        )
        st.caption(
            f"The Discover BERT notebook prints `BertModel`, then `BertForMaskedLM`, and asks for the difference. "
            f"Shown here: {shown}. "
            "`BertForMaskedLM` is the `BertModel` without its pooler, plus `cls` holding only the masked-language-"
            "model head (`predictions`)."
        )
        st.text(cache.modules(cache.query(model_name)))  # literal, monospace


def named_parameters_section(model_name: str) -> None:
    named = cache.architecture(cache.query(model_name))[2]
    filter_text = linked_text(
        st.text_input, "Filter the named parameters", "filter", placeholder="e.g. layer.0.attention or LayerNorm"
    )
    shown = named[named["name"].str.contains(filter_text.strip(), case=False, regex=False)]
    st.caption(f"{len(shown)} of {len(named)} named parameters · {int(shown['parameters'].sum()):,} parameters")
    exports.table(shown, "named-parameters", key="named_parameters", column_config={"parameters": COUNT_COLUMN})


def embeddings_section(model_name: str, text: str, text_b: str) -> None:
    q = cache.query(model_name, text, text_b)
    parts, encoding = cache.embeddings(q), cache.analysis(q).encoding
    difference = parts.max_abs_difference
    if comparing := asked_for("emb_other"):
        same_tokens_section(q)
    how_to_read(
        "Each token's vector entering layer 0 is **LayerNorm(word + position + token type)**: three table "
        "look-ups added, then normalised. Computed by hand here and compared with the embeddings module's output."
    )
    check_result("LayerNorm(word + position + type) vs embeddings output", difference)
    position = bound_int_slider("Token position", "pos", 0, len(encoding) - 1, 0)
    token = encoding.tokens[position]
    exports.chart(
        embedding_heatmap(parts, position, token),
        "embeddings",
        key="embedding_heatmap",
        words=embedding_words(parts, position, token),
    )
    norms = parts.norms()
    norms.insert(0, "token", encoding.tokens)
    norms.insert(1, "token_type_ids", encoding.token_type_ids)
    exports.table(norms, "embedding-norms", key="embedding_norms")
    if not comparing:
        same_tokens_section(q)


def same_tokens_section(q: cache.Query) -> None:
    """Seed 004's "I am Sinan" against "I am Matt": the same token in another sentence, row against row."""
    st.header("The same token in another sentence", anchor=False)  # h2 under the page title
    label = "Another sentence"
    other = linked_text(
        st.text_input, label, "emb_other", placeholder="e.g. I am Matt (the course sets it beside I am Sinan)"
    )
    other = within_chars_budget(other, label)
    if blank(other):
        st.caption(
            "Type another sentence to see which of this sentence's tokens it shares, and whether their vectors are equal."
        )
        return
    other_q = cache.query(q.model, other)
    truncation_notice(cache.token_view(other_q).encoding, "The other sentence")
    table = cache.same_tokens(q, other_q)
    st.markdown(same_tokens_words(table, pair=bool(q.text_b)))
    exports.table(table, "embedding-same-tokens", key="embedding_same_tokens")


def same_tokens_words(table: pd.DataFrame, pair: bool) -> str:
    """What the table shows, in words; ``pair``: the page's input is a pair (the other sentence is read alone)."""
    where = []
    for token, here, kind, there, other_kind in table.iloc[:, :5].itertuples(index=False):
        differ = [f"position {here} here, {there} there"] if here != there else []
        differ += [f"token type {kind} here, {other_kind} there"] if kind != other_kind else []
        if differ:
            where.append(f"{literal(token)} ({'; '.join(differ)})")
    words = (
        f"**{len(table)} tokens of this input, [CLS] and [SEP] among them, are in the other sentence too.** "
        "Each has the same word-embedding row in both: a look-up, whatever the context. Entering layer 0 its position and token type are added, so the two "
        + (
            f"vectors differ exactly where those do: {listed(where)}."
            if where
            else "vectors are equal here: each shared token keeps its position and type."
        )
    )
    if pair:
        words += " The other sentence is read alone: all its tokens have token type 0."
    if "[UNK]" in set(table["token"]):
        words += (
            " [UNK] stands for anything the vocabulary cannot spell: both sentences get the same row for it, "
            "so BERT cannot tell those apart."
        )
    return words


def pooler_words(check: PoolerCheck) -> str:
    """The pooler's scatter in words: on the diagonal only when the check holds."""
    on_diagonal = check.max_abs_difference < CHECK_TOLERANCE
    return (
        f"{len(check.by_hand):,} dimensions, one dot each: by hand against pooler_output, which differ by at most "
        f"{check.max_abs_difference:.2g}, so {'every dot lies on' if on_diagonal else 'some dots leave'} the diagonal"
    )


def pooler_section(model_name: str, text: str, text_b: str) -> None:
    check = cache.pooler(cache.query(model_name, text, text_b))
    if check is None:
        reason = cached_bundle(model_name).description.why_missing("pooler") or ""
        st.info(f"This checkpoint has no pooler weights, so there is no pooler_output to check. {reason}".strip())
        return
    st.markdown("The pooler is one dense layer with tanh on the final `[CLS]` vector. Done by hand:")
    check_result("tanh(dense(final [CLS])) vs pooler_output", check.max_abs_difference)
    exports.chart(pooler_scatter(check), "pooler-check", key="pooler_scatter", words=pooler_words(check))
    values = pd.DataFrame(
        {"dimension": range(len(check.by_hand)), "by hand": check.by_hand, "pooler_output": check.pooler_output}
    )
    exports.table(values, "pooler-check", key="pooler_values")


def outputs_section(model_name: str, text: str, text_b: str) -> None:
    q = cache.query(model_name, text, text_b)
    encoder = type(encoder_of(cached_bundle(model_name).model)).__name__  # BertModel, RobertaModel …
    st.markdown(
        "What **one forward pass** of this input returns, as transformers hands it over "
        f"(`{encoder}(..., output_attentions=True, output_hidden_states=True)`, then the pre-training heads), "
        "for a batch of one input (a sentence, or a pair). The Attention page and this page's Embeddings and "
        "Pooler tabs read this one pass; Fill-mask reads the sentence alone (the same pass when there is no "
        "sentence B), and Next sentence the pair typed on its page (the same pass when it is this pair)."
    )
    exports.table(
        cache.forward_outputs(q), "forward-outputs", key="forward_outputs", column_config={"values": COUNT_COLUMN}
    )
    st.caption(
        "Shapes are (batch, …): 1 input, then tokens, heads or hidden size. The attentions grow with the "
        "square of the tokens: double the sentence, four times the values."
    )


def sinusoid_section(view: PositionEmbeddings) -> None:
    """The fixed encoding of "Attention is all you need", drawn as the learned one is (seed 001's tip)."""
    st.markdown(
        "The original Transformer did not learn its positions: it **added a fixed pattern**, "
        "PE(pos, 2i) = sin(pos / 10000^(2i/d)) and PE(pos, 2i + 1) = cos(pos / 10000^(2i/d)), at this model's "
        "hidden size d. Its cosine band is smooth and the same for every model of this width; BERT's learned band is its "
        "own."
    )
    left, right = st.columns(2)
    with left:
        exports.chart(position_cosine_figure(view), f"sinusoid-cosine-{view.count}", key="sinusoid_cosine")
    with right:
        exports.chart(
            position_chain_figure(view), f"sinusoid-pca-{view.count}", key="sinusoid_chain", words=chain_words(view)
        )


def positions_section(model_name: str, max_positions: int) -> None:
    st.markdown(
        "BERT has no built-in sense of order: it **learns one vector per position** (0 … "
        f"{max_positions - 1}) and adds it to every token's word embedding, together with one vector per "
        "segment (token type 0 = sentence A, 1 = sentence B). Read straight from the weights — no sentence needed."
    )
    count = bound_int_slider(
        "Show the first N positions", "n_positions", 2, max_positions, default=min(DEFAULT_POSITIONS, max_positions)
    )
    view = cache.positions(cache.query(model_name), count)
    left, right = st.columns(2)
    with left:
        exports.chart(position_cosine_figure(view), f"position-cosine-{count}", key="position_cosine")
        st.caption(
            "Neighbouring positions are similar when the diagonal band is wide; a learned, not a fixed, pattern."
        )
    with right:
        exports.chart(
            position_chain_figure(view), f"position-pca-{count}", key="position_chain", words=chain_words(view)
        )
        st.caption(
            "Each dot is one position's vector; the line joins them in order. A smooth chain means "
            "nearby positions got similar vectors. PCA keeps only the two directions of largest spread."
        )
    if st.toggle("Compare with the original Transformer's fixed sinusoidal encoding", **bound("sinusoid")):
        sinusoid_section(cache.sinusoids(cache.query(model_name), count))
    labels = [str(i) for i in range(view.count)]
    exports.csv_download(
        lambda: pd.DataFrame(view.cosine, columns=labels).assign(position=range(view.count))[["position", *labels]],
        f"position-cosine-{count}",
        label="Download the cosine matrix (CSV)",
    )
    coordinates = pd.DataFrame(
        {"position": range(view.count), "PC1": view.projection[:, 0], "PC2": view.projection[:, 1], "‖p‖": view.norms}
    )
    with st.expander("The 2D coordinates and norms"):
        exports.table(coordinates, f"position-pca-{count}", key="position_coordinates")
    st.header("Token-type (segment) embeddings", anchor=False)  # h2 under the page title: no skipped heading level
    meaning = {0: "sentence A (and [CLS], the first [SEP])", 1: "sentence B (and its [SEP])"}
    types = pd.DataFrame(
        {
            "token type": range(len(view.type_norms)),
            "used for": [meaning.get(i, "—") for i in range(len(view.type_norms))],
            "‖t‖": view.type_norms,
        }
    )
    exports.table(types, "token-type-embeddings", key="token_types")
    if len(view.type_norms) >= 2:
        st.metric("cosine(type 0, type 1)", f"{view.type_cosine[0, 1]:.4f}")
        st.caption(f"For scale: the position embeddings shown have a mean norm of {view.norms.mean():.4f}.")
