"""What a page reads of its input, within the budgets: texts and lines cut to the characters budget, candidate Bs
and labelled pairs to theirs, each cut named in a warning. The warm start asks through the same functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from bertlens import nsp
from bertlens.wording import agree, listed
from components.services import cache
from components.services.settings import settings
from components.services.text import literal

MAX_REFERENCES = 10  # reference words read for Word senses (each compared with every occurrence)


def within_chars_budget(text: str, label: str) -> str:
    """What pages read of a text: at most the characters budget, with a warning (naming the input) when it is cut."""
    budgets = settings().budgets
    if len(text) <= budgets.chars:
        return text
    st.warning(
        f"{literal(label)} is {len(text):,} characters long; pages read only its first {budgets.chars:,}: "
        f"{budgets.limit('chars')}."
    )
    return text[: budgets.chars]


def lines_within_chars_budget(lines: Sequence[str], label: str, noun: str, first: int = 1) -> list[str]:
    """Each of ``lines`` (the sentences or candidates a page reads from a text) at most the characters budget, with
    one warning naming those cut by their place among ``lines``, counted from ``first`` ("sentences 2, 5")."""
    budgets = settings().budgets
    if cut := [n for n, line in enumerate(lines, start=first) if len(line) > budgets.chars]:
        st.warning(
            f"{literal(label)}: {noun if len(cut) == 1 else noun + 's'} {listed(map(str, cut))} "
            f"{agree(len(cut), 'is', 'are')} longer than {budgets.chars:,} characters; pages read only the first "
            f"{budgets.chars:,} of each: {budgets.limit('chars')}."
        )
    return [line[: budgets.chars] for line in lines]


def ranking(model_name: str, sentence_a: str, candidates: list[str]) -> pd.DataFrame:
    """Candidate Bs ranked by P(IsNext): at most the candidates budget (the rest named in a warning)."""
    budgets = settings().budgets
    if over := budgets.first_only("candidates", len(candidates), "candidate sentences B", "scored"):
        st.warning(over)
    return cache.ranking(cache.query(model_name, sentence_a), tuple(candidates[: budgets.candidates]))


def evaluation(model_name: str, rows: list[tuple[Any, ...]]) -> nsp.Evaluation | None:
    """The labelled pairs scored: at most the evaluation-rows budget (the rest named in a warning), each sentence
    and topic within the characters budget. ``rows``: (sentence A, sentence B, is_next, topic), as the student's
    table holds them."""
    budgets = settings().budgets
    if over := budgets.first_only("eval_rows", len(rows), "rows", "scored"):
        st.warning(over)
    rows = rows[: budgets.eval_rows]
    a, b, topics = (
        lines_within_chars_budget([row[column] if isinstance(row[column], str) else "" for row in rows], label, "row")
        for column, label in (
            (0, "Sentences A of the pairs"),
            (1, "Sentences B of the pairs"),
            (3, "Topics of the pairs"),
        )
    )
    labels = (row[2] for row in rows)
    return cache.evaluation(cache.query(model_name), tuple(zip(a, b, labels, topics, strict=True)))
