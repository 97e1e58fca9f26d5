"""Fill-mask page: each mask's guesses, the true word's rank, layer by layer, and pre-training's masking."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertlens import mlm
from bertlens.family import MASKING_RECIPES, MLM_LOSS_SHARE, ModelDescription
from bertlens.steps import LayerGuesses
from bertlens.wording import blank, percent, shortened
from components.services import cache
from components.services.models import cached_bundle
from components.services.settings import settings
from components.services.text import SHARE_TICKS, code_span, literal
from components.state.params import bound, warn_bad_param
from components.state.widgets import (
    bound_int_input,
    control_row,
    int_in_range,
    keep_in_range,
    linked_text,
    set_shared_text,
)
from components.ui.exports import chart, table
from components.ui.layout import how_to_read, truncation_notice
from components.ui.predictions import BAR, LOGIT, LOSS, PROBABILITY, bar_figure, token_label

MASKS_PER_ROW = 2  # three across cut each table after its probability column at 1280 px
FILL_MASK_TABS = ("Guesses", "Layer by layer", "Compare two sentences")
PROBABILITY_COLUMNS = ("P(top guess)", "P(true word)")


def guesses_section(query: cache.Query, guesses: list[mlm.MaskGuesses], words: dict[int, str]) -> None:
    """Each mask's guesses; with several masks, how they were predicted and every mask at a glance."""
    several = (
        f"{len(guesses)} masks, predicted **independently, in one pass**: each mask gets its own softmax, from the "
        "sentence with every mask still hidden, never another mask's guess.\n\n"
        if len(guesses) > 1
        else ""
    )
    how_to_read(
        f"{several}**logit**: the MLM head's raw score for the token. **probability**: the softmax of the logits of "
        "the whole vocabulary at this mask, so the rows shown need not add up to 1."
    )
    budgets = settings().budgets
    if too_many := budgets.first_only("masks", len(guesses), "masks", "drawn one by one"):
        st.warning(too_many + " Every mask at a glance, below, lists them all.")
    mask_columns(guesses[: budgets.masks])
    if len(guesses) > 1:
        mask_overview_section(query, guesses, words)


def true_word_choice(masks: int) -> tuple[dict[int, str], int]:
    """The original word(s) the student types (one per mask, for the true-word checks) and, with several masks,
    which mask the per-mask views show (from 1)."""
    word_column, mask_column = control_row(3, 1)
    with word_column:
        typed = linked_text(
            st.text_input,
            "Original word — or one per mask, separated by commas (for the true-word checks)",
            "true_word",
            placeholder="e.g. paris",
            max_chars=settings().budgets.chars,  # as long as a text: one word per mask of the sentence
        )
    mask_number = 1
    if masks:  # a link's mask beyond the sentence's, one mask included (it was dropped without a word)
        expected = f"a mask number from 1 to {masks}" if masks > 1 else "1: the sentence has one mask"
        warn_bad_param("at_mask", int_in_range(1, masks), expected)
    if masks == 1 and "at_mask" in st.query_params:  # no picker to take it out of the link: once is enough
        del st.query_params["at_mask"]
    if masks > 1:
        keep_in_range("at_mask", 1, masks)
        with mask_column:
            mask_number = st.selectbox("At mask", range(1, masks + 1), **bound("at_mask"))
    words, problem = mlm.true_words(typed, masks, mask_number)
    if problem:
        st.warning(problem)
    return words, mask_number


def true_word_section(query: cache.Query, word: str, mask_number: int, vocab_size: int) -> None:
    st.header("True-word check", anchor=False)  # h2 under the page title: no skipped heading level
    st.caption(
        f"The word mask {mask_number} hides (typed above): how probable did "
        f"{cached_bundle(query.model).description.family_name} find it, at which rank, "
        "and what loss does that give?"
    )
    if blank(word):
        if blank(st.session_state.get("true_word", "")):  # words typed that fit no mask are warned about above
            st.info(f"Type the word mask {mask_number} hides in *Original word* above (e.g. paris) to check it.")
        return
    check = cache.true_word(query, word, mask_number)
    true_word_view(check, vocab_size, cached_bundle(query.model).description.family)
    if not isinstance(check, str):
        labels_section(query, check, mask_number)


def labels_section(query: cache.Query, check: mlm.TrueWordCheck, mask_number: int) -> None:
    """The labels the MLM loss reads (seed 003's "labels after masking"), in an expander drawn only when opened."""
    labels = st.expander("The labels the MLM loss reads (−100 = ignored)", key="loss_labels", on_change="rerun")
    if labels.open:
        with labels:
            analysis = cache.analysis(query)
            several = len(analysis.mask_positions) > 1
            st.caption(
                f"One label per token: the true token's id ({check.token_id:,}, {literal(check.token)}) at "
                f"{f'mask {mask_number}' if several else 'the mask'}, {mlm.IGNORED} everywhere else. PyTorch's "
                f"cross-entropy skips {mlm.IGNORED}, so the loss is the −log p of that mask alone: {check.loss:.4f}, "
                "as above."
                + (
                    " In pre-training every mask carries its own label, and the MLM loss is the mean over them; here each "
                    "mask's check labels its own."
                    if several
                    else ""
                )
            )
            position = analysis.mask_positions[mask_number - 1]
            table(mlm.loss_labels(analysis.encoding, position, check.token_id), "loss-labels", key="loss-labels-table")


def mask_columns(guesses: list[mlm.MaskGuesses]) -> None:
    """Each mask's guesses (table and bar chart), side by side, wrapping every MASKS_PER_ROW."""
    per_row = min(len(guesses), MASKS_PER_ROW)
    for start in range(0, len(guesses), per_row):
        for column, g in zip(st.columns(per_row), guesses[start : start + per_row]):
            with column:
                title = f"Mask {g.mask_number} · token {g.position}"
                name = f"fill-mask-{g.mask_number}"
                chart(
                    bar_figure(list(g.tokens), list(g.probabilities), title, "probability"), name, key=f"chart-{name}"
                )
                table(
                    g.table(),
                    name,
                    key=f"table-{name}",
                    title=title,
                    column_config={"logit": LOGIT, "probability": PROBABILITY, mlm.LOSS_IF_RIGHT: LOSS},
                )


def _mask_words(masked: str, hidden: str) -> None:
    set_shared_text(masked)
    st.session_state["true_word"] = hidden  # the masked words become the true words to check
    st.session_state["words_to_mask"] = []  # masked now: the picker starts again from the new sentence's words


def mask_token_rewritten(described: ModelDescription, before: str) -> None:
    """Say that the sentence's mask tokens were written as this model's own."""
    st.caption(
        f"{described.family_name}'s mask token is {code_span(described.mask_token)}: the sentence's masks are "
        f"written that way here (it was {code_span(shortened(before, 80))})."
    )


def replaced_tokens_section(model_name: str, text: str) -> None:
    """ELECTRA's discriminator on the sentence: for each token, how likely it looks replaced (replaced-token
    detection), instead of guesses at a mask (its checkpoint has no MLM head)."""
    described = cached_bundle(model_name).description
    st.info(described.why_missing("MLM") or "", icon=":material/info:")
    st.header("Which tokens look replaced?", anchor=False)
    how_to_read(
        "ELECTRA's discriminator was pre-trained on replaced-token detection: a small generator filled masked "
        "positions with plausible words, and the discriminator learnt to tell, for **every** token, whether it is "
        "the original or a replacement (Clark et al. 2020). **P(replaced)** is the sigmoid of its score for each "
        "token. Change a word of the sentence into a less fitting one and see whether its probability rises."
    )
    if blank(text):
        st.info("Type a sentence to see which of its tokens look replaced.")
        return
    analysis = cache.cached_analysis(model_name, text)
    truncation_notice(analysis.encoding)
    scores = mlm.replaced_tokens(analysis)
    chart(replaced_figure(scores), "replaced-tokens", key="replaced_chart")
    table(scores, "replaced-tokens", key="replaced_table", column_config={"P(replaced)": PROBABILITY, "logit": LOGIT})


def replaced_figure(scores: pd.DataFrame) -> go.Figure:
    """P(replaced) per token, in sentence order (special tokens included: the discriminator scores them too)."""
    labels = [f"{position}: {token}" for position, token in zip(scores["position"], scores["token"])]
    return bar_figure(labels, scores["P(replaced)"].tolist(), "P(replaced) for each token", "P(replaced)")


def mask_word_helper(text: str, mask_token: str = mlm.BERT_MASK) -> None:
    """Pick words of the sentence and replace them with [MASK] (seed 000's ``word_to_mask``, seed 003's
    exercise 4); the words picked become the true words of the check, beside those already typed for its masks."""
    spans = {span.label: span for span in mlm.word_spans(text, mask_token)}
    if not spans:
        st.caption("There is no word here to mask.")
        return
    if picked := st.session_state.get("words_to_mask"):  # words an edit of the sentence took away are unpicked
        st.session_state["words_to_mask"] = [label for label in picked if label in spans]
    chosen = st.multiselect(
        "Words to mask",
        list(spans),  # by label, not position: a position names another word once the sentence changes
        key="words_to_mask",  # none picked at first: a word the student picks is the only one masked
        placeholder="Pick one word, or several",
    )
    if not chosen:
        return
    typed = st.session_state.get("true_word", st.query_params.get("true_word", ""))
    masks = text.count(mask_token)
    at_mask = st.session_state.get("at_mask", 1)  # kept (bound to the link) after a sentence with more masks
    at_mask = min(max(at_mask, 1), masks) if masks > 1 and isinstance(at_mask, int) else 1
    known, _ = mlm.true_words(typed, masks, at_mask)
    masked, hidden = mlm.mask_spans(text, [spans[label] for label in chosen], known, mask_token)
    st.caption("The sentence will become:")
    st.text(masked)
    label = "Mask this word" if len(chosen) == 1 else f"Mask these {len(chosen)} words"
    st.button(label, on_click=_mask_words, args=(masked, hidden), key="mask_word")


def mask_overview_section(query: cache.Query, guesses: list[mlm.MaskGuesses], words: dict[int, str]) -> None:
    """Every mask at a glance: the top guesses, their average confidence, and the true words' checks."""
    st.header("Every mask at a glance", anchor=False)  # h2 under the page title
    checks = {number: cache.true_word(query, word, number) for number, word in words.items()}
    average = mlm.average_top_confidence(guesses)
    st.metric("Average confidence of the top guesses", percent(average, 2))  # 43.21%, and 0.0051% (not 0.01%)
    if not words:
        st.caption("Type the hidden words above, one per mask separated by commas, to see which the model got right.")
    overview = mlm.mask_overview(guesses, words, checks)
    table(
        overview,
        "fill-mask-overview",
        key="mask_overview",
        column_config=dict.fromkeys(PROBABILITY_COLUMNS, PROBABILITY),
    )


PRETRAINING_NOTE = (
    "BERT learned to fill masks from sentences corrupted like this one: **15 %** of the tokens are chosen ([CLS] "
    "and [SEP] never); of those, **80 %** become [MASK], **10 %** a random token, **10 %** stay as they are. The "
    "BERT chapter's hands-on notebook describes this recipe; Google's `create_pretraining_data.py` runs it. BERT must "
    "give back the original at every chosen position — the kept and random ones too, so it cannot learn that only "
    "[MASK] needs predicting — and the masked-language-model (MLM) loss is the mean −log p of those originals, over "
    "the chosen positions only (the draw's loss below). That is one part of BERT's pre-training loss: each input was "
    "a sentence pair, and pre-training minimised its sum with the next-sentence-prediction loss (Devlin et al., 2019)."
)


MAX_DRAW = 1_000_000


def _next_draw() -> None:
    st.session_state["draw"] = st.session_state.get("draw", 1) % MAX_DRAW + 1


def pretraining_shown() -> bool:
    """Whether the pre-training view is on (its switch, or a link's ``pretrain=true`` before the switch is drawn)."""
    return bool(st.session_state.get("pretrain", st.query_params.get("pretrain", "").lower() == "true"))


def pretraining_section(query: cache.Query) -> None:
    """Pre-training's own masking on the student's sentence: one reproducible draw, BERT's guesses, the loss."""
    described = cached_bundle(query.model).description
    label = "How BERT learned this" if described.family == "bert" else "How BERT learned it"
    if not st.toggle(f"{label}: pre-training's 15 % and 80/10/10, on this sentence", **bound("pretrain")):
        return
    how_to_read(PRETRAINING_NOTE)
    if recipe := MASKING_RECIPES.get(described.family):
        st.caption(
            f"This model is a {described.family_name}, drawn here with its own mask token "
            f"{code_span(described.mask_token)}: {described.family_name} learned with {recipe}."
        )
    number, again = st.columns([1, 3], vertical_alignment="bottom")
    with number:
        draw = bound_int_input("Draw", "draw", 1, MAX_DRAW, default=1, help="The same draw gives the same corruption.")
    again.button("Draw again", key="draw_again", on_click=_next_draw)
    step = cache.pretraining(query, draw)
    truncation_notice(step.encoding)
    st.caption("What the model is given:")
    st.text(" ".join(step.seen))  # literal, never Markdown
    if not step.corruption.positions:
        st.info(
            "Pre-training has nothing to choose here: it picks among the sentence's own words, never [CLS], [SEP], "
            "[PAD] or a [MASK] you typed, and this sentence has no other token. Type a sentence with words."
        )
        return
    chosen, loss = st.columns(2)
    chosen.metric("Tokens chosen", f"{len(step.corruption.positions)} of {step.corruption.candidates}")
    loss.metric("Loss of this draw (mean −log p)", f"{step.loss:.4f}")
    table(
        step.table,
        f"pretraining-draw-{draw}",
        key="pretraining_table",
        column_config={"P(original)": PROBABILITY, "loss −log p": LOSS},
    )


def true_word_view(check: mlm.TrueWordCheck | str, vocab_size: int, family: str) -> None:
    if isinstance(check, str):
        st.info(check)
        return
    if check.note:
        st.caption(literal(check.note))
    left, middle, right = st.columns(3)
    left.metric(f"P({literal(check.token)})", f"{check.probability:.4g}")
    middle.metric(f"Rank (of {vocab_size:,})", f"{check.rank:,}")
    right.metric("Loss −log p", f"{check.loss:.4f}")
    st.markdown(
        f"**What the loss means.** This is the masked-language-model (MLM) loss at this mask, the cross-entropy "
        f"−log p of the true token: −log({check.probability:.4g}) = {check.loss:.4f}. Its mean over an input's "
        f"masked positions is {MLM_LOSS_SHARE[family]}. "
        "It is 0 only when the model is certain of the right word (p = 1) and grows as p shrinks: "
        f"0.69 at p = 0.5, 2.30 at p = 0.1. Guessing blindly among all {vocab_size:,} tokens would give "
        f"−log(1/{vocab_size:,}) = {math.log(vocab_size):.2f}. A low loss needs the right word *and* confidence."
    )


LAYER_CAVEAT = (
    "**An approximation.** The MLM head was trained to read the *last* layer only. Applied to an earlier "
    "layer's vector it shows which words that vector already points to in the head's eyes (a \"logit lens\"), "
    'not what the model "thinks" there. Row 0 is the embeddings output (before encoder layer 0); '
    "encoder layers are numbered from 0, as on the Attention page. The last row is the page's own guesses."
)


def layer_probabilities_figure(guesses: LayerGuesses) -> go.Figure:
    """How probable each of the final top guesses (and the true word) is after every layer."""
    fig = go.Figure()
    for column, (token_id, token) in enumerate(zip(guesses.tracked_ids, guesses.tracked_tokens)):
        is_true = token_id == guesses.true_token_id
        fig.add_trace(
            go.Scatter(
                x=guesses.labels,
                y=guesses.tracked_probabilities[:, column].astype(np.float32),
                mode="lines+markers",
                name=token_label(token) + (" (true word)" if is_true else ""),
                line=dict(dash="dash", width=3) if is_true else dict(width=1.5),
                hovertemplate=f"{token_label(token)}<br>%{{x}}: %{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"Mask {guesses.mask_number}: probability of the final top guesses, layer by layer",
        yaxis=dict(title="probability", tickformat=SHARE_TICKS),
        xaxis=dict(title="hidden state", type="category"),
        height=440,
        margin=dict(l=10, r=10, t=50, b=10),
    )
    return fig


def rank_ticks(ranks: Sequence[int]) -> list[int] | None:
    """A rank axis's ticks, whole numbers: 1, 2, 5 × a power of ten within ``ranks``, or only the powers of ten when
    those are too many; None (plotly's own) when fewer than two fall within. plotly's own labels of a log axis read
    "3 4 … 9 10k 2 3", 3 meaning 3,000 at the top and 30,000 at the bottom, and crowded a decade's top."""
    lowest, highest = (min(ranks), max(ranks)) if ranks else (0, 0)
    within = [m * 10**e for e in range(7) for m in (1, 2, 5) if lowest <= m * 10**e <= highest]
    ticks = within if len(within) <= 6 else [tick for tick in within if str(tick).strip("0") == "1"]
    return ticks if len(ticks) >= 2 else None


def true_rank_figure(guesses: LayerGuesses) -> go.Figure:
    ranks = [] if guesses.true_ranks is None else guesses.true_ranks.tolist()
    fig = go.Figure(
        go.Scatter(
            x=guesses.labels,
            y=guesses.true_ranks,
            mode="lines+markers",
            marker_color=BAR,
            hovertemplate="%{x}: rank %{y:,}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Rank of {token_label(guesses.true_token or '')} after every layer (1 = top guess)",
        yaxis=dict(
            title="rank (log scale)", type="log", autorange="reversed", tickformat=",", tickvals=rank_ticks(ranks)
        ),
        xaxis=dict(title="hidden state", type="category"),
        height=360,
        margin=dict(l=10, r=10, t=50, b=10),
    )
    return fig


def rank_in_words(guesses: LayerGuesses) -> str:
    """The rank line in words: its best (lowest) rank, not its "peak" (the worst rank, for a generic line)."""
    ranks = np.asarray(guesses.true_ranks)
    best = int(np.argmin(ranks))
    return (
        f"Rank of {guesses.true_token} after every layer: from {int(ranks[0]):,} ({guesses.labels[0]}) to "
        f"{int(ranks[-1]):,} ({guesses.labels[-1]}); best {int(ranks[best]):,} at {guesses.labels[best]}."
    )


def layer_guesses_view(guesses: LayerGuesses) -> None:
    st.info(LAYER_CAVEAT, icon=":material/info:")
    chart(layer_probabilities_figure(guesses), f"fill-mask-layers-{guesses.mask_number}", key="layer_probabilities")
    if guesses.true_ranks is not None:
        chart(
            true_rank_figure(guesses),
            f"fill-mask-true-rank-{guesses.mask_number}",
            key="layer_true_rank",
            words=rank_in_words(guesses),
        )
    else:
        st.caption("Type the original word above to follow its rank through the layers.")
    table(
        guesses.summary(),
        f"fill-mask-layers-{guesses.mask_number}",
        key="layer_summary",
        title=f"Mask {guesses.mask_number}: the top guess at each layer",
        column_config={"P(top guess)": PROBABILITY},
    )
    with st.expander("Every top-k guess of every layer"):
        table(
            guesses.long_table(),
            f"fill-mask-layers-top-k-{guesses.mask_number}",
            key="layer_long",
            title=f"Mask {guesses.mask_number}: every top-k guess of every layer",
            column_config={"probability": PROBABILITY},
        )
