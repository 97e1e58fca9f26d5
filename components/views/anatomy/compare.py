"""Model anatomy's *Two models* tab: the same sentence through the active model and one other offered model, side by
side (issue 51's comparison: BERT and one of its successors). Each column: the model's tokens, its parameters by
part, its top guesses for the sentence's first mask (written with the model's own mask token) and its pre-training
heads, with why it lacks the others."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertlens.comparison import GUESSES, Side, default_partner
from bertlens.family import HEAD_NAMES
from bertlens.lessons import side
from bertlens.models import ModelBundle
from bertlens.tokenization import pieces_rule, scheme_name
from bertlens.wording import percent, plural
from components.services.live import CachedLive
from components.services.models import offered_besides, second_bundle
from components.services.text import code_span, literal
from components.state.model_choice import SECOND_MODEL
from components.state.params import bound, warn_bad_param
from components.ui import exports

INT_COLUMN = st.column_config.NumberColumn(format="%d")
PROBABILITY_COLUMN = st.column_config.NumberColumn(format="%.4f")


def parts_table(one: Side) -> pd.DataFrame:
    """The side's parameters by part, then the checkpoint's total."""
    rows = [*one.parts, ("Checkpoint total", one.total)]
    return pd.DataFrame(rows, columns=["part", "parameters"])


def guesses_table(one: Side) -> pd.DataFrame:
    """The side's top guesses at the first mask, ranked from 1."""
    guesses = one.guesses or ()
    return pd.DataFrame(
        [(rank, word, p) for rank, (word, p) in enumerate(guesses, start=1)], columns=["rank", "guess", "probability"]
    )


def heads_words(one: Side) -> str:
    """The pre-training heads the checkpoint has, then each it lacks with why (Markdown, our own words)."""
    has = ", ".join(f"{HEAD_NAMES[head]} ({head})" for head in one.heads) or "none"
    lines = [f"**Pre-training heads:** {has}."]
    names: dict[str, str] = {head: name for head, name in HEAD_NAMES.items()}
    lines += [f"- no {names.get(m.part, m.part)} ({m.part}): {m.reason}" for m in one.missing]
    return "\n".join(lines)


def side_column(one: Side, number: int) -> None:
    """One model's column: who it is, its tokens, parameters, guesses and heads."""
    st.markdown(f"{code_span(one.name)} — {one.family_name}, {scheme_name(one.scheme)}")
    st.markdown(f"**{plural(len(one.tokens), 'token')}**, its mask written {code_span(one.mask_token)}:")
    st.text(" ".join(one.tokens))  # literal, never Markdown
    st.caption(pieces_rule(one.scheme))
    st.metric("Parameters in the checkpoint", f"{one.total:,}")
    exports.table(
        parts_table(one),
        f"parameters-by-part-{number}",
        key=f"compare_parts_{number}",
        title=f"Parameters by part: {one.name}",
        column_config={"parameters": INT_COLUMN},
    )
    if one.guesses is None:
        reason = next((m.reason for m in one.missing if m.part == "MLM"), "It has no MLM head.")
        st.info(f"No guesses: {reason}")
    elif not one.guesses:
        st.info(f"No guesses: the sentence has no mask this model reads (write {code_span(one.mask_token)}).")
    else:
        word, p = one.guesses[0]
        st.markdown(f"**Top {len(one.guesses)} for the first mask:** {literal(word)} first, {percent(p)}.")
        exports.table(
            guesses_table(one),
            f"mask-guesses-{number}",
            key=f"compare_guesses_{number}",
            title=f"Top guesses: {one.name}",
            column_config={"rank": INT_COLUMN, "probability": PROBABILITY_COLUMN},
        )
    st.markdown(heads_words(one))


def two_models_section(bundle: ModelBundle, text: str) -> None:
    """The active model and the one chosen beside it (``second_model`` in the link), side by side."""
    offered = offered_besides(bundle.name)
    if not offered:
        st.info("This server offers no other model to set beside this one.")
        return
    warn_bad_param(SECOND_MODEL, lambda raw: raw in offered, "one of the models this server offers")
    if st.session_state.get(SECOND_MODEL) not in (None, *offered):  # another active model's choice
        del st.session_state[SECOND_MODEL]
    default = default_partner(bundle.name, bundle.description.family, offered)
    start = offered.index(default) if default in offered else 0  # the default even beside a chosen one (Back, a step)
    other = st.selectbox(
        "Beside it",
        offered,
        index=start,
        help="One of the models this server offers: BERT's successors cut, count and guess differently. Loading it "
        "costs as much as picking it in the sidebar.",
        **bound(SECOND_MODEL),
    )
    found = second_bundle(other or offered[start])
    if isinstance(found, str):
        st.info(found)
        return
    st.caption(
        f"The same sentence through both models; each writes the mask its own way (up to the top {GUESSES} guesses "
        "for the first one)."
    )
    sides = [side(CachedLive(one), text) for one in (bundle, found)]
    for number, (column, one) in enumerate(zip(st.columns(2, gap="large"), sides), start=1):
        with column:
            side_column(one, number)
