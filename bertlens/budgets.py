"""Work budgets: how much one request may make the server do, on every path that does work.

Each budget has a strict hosted default (a public link, a class on one small server) and a
generous local default (your own machine), and is set like every other setting: an environment
variable ``BERTLENS_MAX_…`` or the key ``max_…`` of the ``[bertlens]`` secrets table (see
``bertlens.settings`` for the precedence). Going over a budget always gets a message naming the
limit, its value and how to change it (``Budgets.limit``); nothing is dropped silently.

The defaults keep each page's plotly charts under 5 MB for any input (tests/services/test_budgets.py
measures them at the extremes these budgets allow).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

ENV_PREFIX = "BERTLENS_"


@dataclass(frozen=True)
class Budgets:
    """The limits in force; each field is documented by its ``BUDGETS`` entry."""

    tokens: int | None  # None: the model's own limit (its position embeddings, 512 for BERT)
    chars: int
    sentences: int
    occurrences_per_sentence: int
    occurrences: int
    lab_lines: int
    lab_positions: int
    candidates: int
    eval_rows: int
    masks: int
    custom_models: int
    runs_per_minute: int

    def limit(self, name: str) -> str:
        """'at most 10 occurrences of the word per sentence (`BERTLENS_MAX_…` or `max_…` in secrets)'."""
        spec = BUDGETS[name]
        value = getattr(self, name)
        amount = "the model's own limit" if value is None else f"at most {value:,}"
        return (
            f"{amount} {spec.unit} on this server (set `{spec.env_var}`, or `{spec.key}` "
            "in the `[bertlens]` secrets table, to change it)"
        )

    def first_only(self, name: str, given: int, noun: str, verb: str = "read") -> str | None:
        """The message for using only the first ``limit`` of ``given`` items; None within the budget."""
        limit = getattr(self, name)
        if limit is None or given <= limit:
            return None
        return f"{given:,} {noun} given; only the first {limit:,} are {verb}: {self.limit(name)}."


MAX_TEXT_CHARS = 20_000  # longer text is cut before tokenization (512 tokens never need more): the chars ceiling


@dataclass(frozen=True)
class BudgetSpec:
    key: str  # secrets key; the environment variable is BERTLENS_ + key.upper()
    hosted: int
    local: int | None  # None: the model's own limit
    unit: str  # what is counted, as it reads after "at most N"
    ceiling: int | None = None  # the most a setting may ask for (more would be cut without a word)

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.key.upper()


BUDGETS: dict[str, BudgetSpec] = {
    "tokens": BudgetSpec("max_tokens", 256, None, "tokens per text"),
    "chars": BudgetSpec("max_chars", 5_000, MAX_TEXT_CHARS, "characters per text", ceiling=MAX_TEXT_CHARS),
    "sentences": BudgetSpec("max_sentences", 50, 200, "sentences on the word-senses page"),
    "occurrences_per_sentence": BudgetSpec(
        "max_occurrences_per_sentence", 10, 50, "occurrences of the word per sentence"
    ),
    "occurrences": BudgetSpec("max_occurrences", 200, 500, "occurrences of the word in all sentences"),
    "lab_lines": BudgetSpec("max_lab_lines", 16, 32, "lines in the padding lab"),
    "lab_positions": BudgetSpec("max_lab_positions", 4_096, 16_384, "positions (lines × length) in the padding lab"),
    "candidates": BudgetSpec("max_candidates", 10, 50, "candidate sentences B"),
    "eval_rows": BudgetSpec("max_eval_rows", 20, 100, "labelled pairs to evaluate"),
    "masks": BudgetSpec("max_masks", 12, 50, "masks drawn one by one (table and chart each)"),
    # A model stays loaded for the server's life (0.1-1.3 GB each); hosted servers load only their allowlist.
    "custom_models": BudgetSpec("max_custom_models", 1, 3, "custom models loaded besides the offered ones"),
    # Python's work for a page run (figures, tables, serialisation) shares the server's cores with every
    # forward pass: one tab asking for runs as fast as it could took a fifth of a class's server CPU (pacing.py).
    "runs_per_minute": BudgetSpec("max_runs_per_minute", 120, 1_200, "page runs a minute for one browser tab"),
}
assert list(BUDGETS) == [f.name for f in fields(Budgets)]  # one entry per field, same order


def budgets_from(values: Mapping[str, int | None]) -> Budgets:
    """``Budgets`` from one value per ``BUDGETS`` entry; only ``tokens`` may be None (its ``local`` default)."""
    if none := [name for name, value in values.items() if value is None and name != "tokens"]:
        raise ValueError(f"budgets without a value: {', '.join(none)}")
    return Budgets(**values)  # type: ignore[arg-type]  # checked above: None only for tokens


def default_budgets(hosted: bool) -> Budgets:
    return budgets_from({name: spec.hosted if hosted else spec.local for name, spec in BUDGETS.items()})


@dataclass(frozen=True)
class OccurrenceSelection:
    """Which sentences the word-senses page reads under the two occurrence budgets."""

    kept: tuple[int, ...]  # sentence indices, in their order
    over_per_sentence: tuple[int, ...]  # left out: the word occurs there more often than the per-sentence budget
    beyond_total: tuple[int, ...]  # left out: the sentences after the total budget was reached
    occurrences: int  # occurrences in the kept sentences


def select_occurrences(counts: list[int] | tuple[int, ...], per_sentence: int, total: int) -> OccurrenceSelection:
    """Keep sentences in order while their occurrences fit both budgets; say which were left out and why.

    Once a sentence would take the total over its budget, it and every later sentence are left out
    (the first sentences are read, as with the sentence budget), so the cut is easy to explain.
    """
    kept: list[int] = []
    over: list[int] = []
    beyond: list[int] = []
    used = 0
    for i, count in enumerate(counts):
        if count > per_sentence:
            over.append(i)
        elif beyond or used + count > total:
            beyond.append(i)
        else:
            kept.append(i)
            used += count
    return OccurrenceSelection(tuple(kept), tuple(over), tuple(beyond), used)
