"""Next sentence prediction: does sentence B follow sentence A?

The NSP head reads the pooled [CLS] vector and gives two logits: index 0 = IsNext, 1 = NotNext.
ALBERT's sentence-order head (SOP) reads it the same way: index 0 = in order, 1 = swapped
(``PAIR_LABELS``); ``score_pairs`` gives P(index 0) of whichever head the checkpoint has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score, recall_score

from bertlens.analysis import Analysis, encode, max_tokens, model_engine, padded_batch
from bertlens.family import Head, encoder_pass, pair_head, sentence_logits
from bertlens.mlm import softmax
from bertlens.models import AnyBundle
from bertlens.table_input import TableInputError, read_rows
from bertlens.wording import agree, blank, listed, plural

BATCH_SIZE = 16
CUT = "cut to fit"  # a table column: the pair was longer than the token limit and only its start was scored
LABELS = ("IsNext", "NotNext")
PAIR_LABELS: dict[Head, tuple[str, str]] = {"NSP": LABELS, "SOP": ("in order", "swapped")}  # logit 0, logit 1

# The page's defaults (also computed ahead, when a model is loaded).
DEFAULT_A, DEFAULT_B = "The weather is beautiful today.", "I think I'll go for a walk in the park."
DEFAULT_CANDIDATES = f"{DEFAULT_B}\nDeep Learning is a branch of Machine Learning."

# Seed 003, exercise 5: five true continuations and five unrelated pairs, each with the notebook's topic.
DEFAULT_PAIRS = pd.DataFrame(
    [
        (
            "The weather forecast predicts heavy rain tomorrow.",
            "Don't forget to bring an umbrella when you go out.",
            True,
        ),
        (
            "She studied hard for her final exams all week.",
            "Her efforts paid off when she received excellent grades.",
            True,
        ),
        ("The company announced record profits in Q4.", "Shareholders were pleased with the financial results.", True),
        (
            "Neural networks learn by adjusting their weights.",
            "This process is called backpropagation and uses gradient descent.",
            True,
        ),
        (
            "The movie had stunning visual effects and great acting.",
            "It went on to win several Academy Awards that year.",
            True,
        ),
        (
            "Quantum computing uses qubits instead of classical bits.",
            "Pizza is one of the most popular foods in Italy.",
            False,
        ),
        (
            "The patient showed symptoms of seasonal allergies.",
            "The stock market reached an all-time high today.",
            False,
        ),
        ("Python is a versatile programming language.", "Pythons are the largest snakes in the world.", False),
        ("Climate change affects global weather patterns.", "The restaurant serves authentic Japanese cuisine.", False),
        (
            "The team celebrated their championship victory.",
            "Photosynthesis converts light energy into chemical energy.",
            False,
        ),
    ],
    columns=["sentence_a", "sentence_b", "is_next"],
).assign(topic=["Weather", "Education", "Business", "Technical", "Entertainment", *["Random"] * 5])


@dataclass(frozen=True)
class NextSentence:
    p_is_next: float
    p_not_next: float
    logits: tuple[float, float]  # the NSP head's raw scores (IsNext, NotNext), before the softmax

    @property
    def is_next(self) -> bool:
        return self.p_is_next >= self.p_not_next

    @property
    def verdict(self) -> str:
        """The head's pick and the probabilities it gives: a softmax output (from random weights too), not a certainty."""
        pick = "B follows A (IsNext)" if self.is_next else "B does not follow A (NotNext)"
        return f"{pick} — the NSP head gives IsNext {self.p_is_next:.1%}, NotNext {self.p_not_next:.1%}"


def from_logits(logits: np.ndarray) -> NextSentence:
    p = softmax(logits)
    return NextSentence(float(p[0]), float(p[1]), (float(logits[0]), float(logits[1])))


@dataclass(frozen=True)
class SentenceOrder:
    """ALBERT's sentence-order prediction on a pair: are A and B in their original order, or swapped?"""

    p_in_order: float
    p_swapped: float
    logits: tuple[float, float]  # the SOP head's raw scores (in order, swapped), before the softmax

    @property
    def in_order(self) -> bool:
        return self.p_in_order >= self.p_swapped

    @property
    def verdict(self) -> str:
        pick = "A then B is their original order" if self.in_order else "A and B look swapped"
        return f"{pick} — the SOP head gives in order {self.p_in_order:.1%}, swapped {self.p_swapped:.1%}"


def sentence_order(analysis: Analysis) -> SentenceOrder | None:
    """The order verdict from the one forward pass; None when the model has no SOP head."""
    if analysis.sop_logits is None:
        return None
    p = softmax(analysis.sop_logits)
    return SentenceOrder(float(p[0]), float(p[1]), (float(analysis.sop_logits[0]), float(analysis.sop_logits[1])))


def next_sentence(analysis: Analysis) -> NextSentence | None:
    """The verdict from the one forward pass; None when the model has no NSP head."""
    return None if analysis.nsp_logits is None else from_logits(analysis.nsp_logits)


def segments_table(analysis: Analysis) -> pd.DataFrame:
    enc = analysis.encoding
    return pd.DataFrame(
        {
            "position": range(len(enc)),
            "token": enc.tokens,
            "token_type_id": enc.token_type_ids,
            "segment": ["A" if t == 0 else "B" for t in enc.token_type_ids],
        }
    )


def score_pairs(
    bundle: AnyBundle, pairs: list[tuple[str, str]], token_cap: int | None = None
) -> tuple[np.ndarray, list[bool]]:
    """P(IsNext) of each (A, B) pair (P(in order) under ALBERT's SOP head: ``pair_head``), and whether the pair
    was cut to the token limit to be read: padded batches through the encoder, pooler and pair head only."""
    head = pair_head(bundle.description)
    if head is None:
        reason = bundle.description.why_missing("NSP") or bundle.description.why_missing("pooler") or ""
        raise ValueError(f"{bundle.name} has no next-sentence head. {reason}".strip())
    model, tokenizer, described = bundle.model, bundle.tokenizer, bundle.description
    encodings = [encode(tokenizer, a, b, max_tokens(bundle, token_cap)) for a, b in pairs]
    result = []
    for start in range(0, len(encodings), BATCH_SIZE):  # each batch queues on its own: others get turns
        chunk = encodings[start : start + BATCH_SIZE]
        batch = padded_batch(chunk, tokenizer.pad_token_id, bundle.device)

        def p_first(batch: dict[str, torch.Tensor] = batch) -> np.ndarray:
            with torch.inference_mode():
                pooled = encoder_pass(model, described, batch, attentions=False, hidden_states=False).pooler_output
                return softmax(sentence_logits(model, pooled).float().cpu().numpy())[:, 0]

        key = ("is_next", tuple((e.input_ids, e.token_type_ids) for e in chunk))
        result.extend(model_engine(bundle).run(key, p_first, tokens=batch["input_ids"].numel()))
    return np.array(result, dtype=np.float64), [e.truncated for e in encodings]


def _is_next_scores(bundle: AnyBundle) -> None:
    """The tables below are IsNext/NotNext ones: a sentence-order head's P(in order) is not P(IsNext)."""
    if pair_head(bundle.description) == "SOP":
        raise ValueError(
            f"{bundle.name} predicts sentence order (SOP: are A and B in their original order or swapped?), not "
            "whether B follows A: its probabilities are not P(IsNext)."
        )


def rank_candidates(
    bundle: AnyBundle, sentence_a: str, candidates: list[str], token_cap: int | None = None
) -> pd.DataFrame:
    """Candidate Bs for one A, most likely next first (NSP only: ValueError for a sentence-order head)."""
    _is_next_scores(bundle)
    p, cut = score_pairs(bundle, [(sentence_a, b) for b in candidates], token_cap)
    table = pd.DataFrame({"candidate_b": candidates, "p_is_next": p, "p_not_next": 1 - p, CUT: cut})
    table = table.sort_values("p_is_next", ascending=False, kind="stable").reset_index(drop=True)
    table.insert(0, "rank", range(1, len(table) + 1))
    return table


def cut_message(labels: Sequence[str], noun: str, token_limit: int) -> str | None:
    """The notice for the pairs (``labels`` as the table shows them, e.g. "rank 2") cut to ``token_limit`` tokens:
    ``noun`` "candidate" (each read after the one A) or "pair" (each row its own A and B)."""
    if not labels:
        return None
    count = len(labels)
    together, second = (" together with A", "the candidate") if noun == "candidate" else ("", "B")
    return (
        f"{plural(count, noun)} ({listed(labels)}) {agree(count, 'is', 'are')} longer than {token_limit} tokens"
        f"{together}: cut to fit, the longer sentence losing its end first (A or {second}; the “{CUT}” column)."
    )


PAIR_COLUMNS = ("sentence_a", "sentence_b", "is_next")
TOPIC = "topic"  # optional: what the pair is about, to read the results by (seed 003: "Pair 1 (Weather)")
LABEL_SPELLINGS = {
    **dict.fromkeys(("true", "1", "yes", "isnext"), True),
    **dict.fromkeys(("false", "0", "no", "notnext"), False),
}


def parse_pairs(data: bytes | str) -> pd.DataFrame:
    """Labelled pairs from a CSV file with the columns ``sentence_a``, ``sentence_b``, ``is_next`` and maybe
    ``topic`` (as the Evaluation tab's download has them, among others): ``is_next`` true/false, 1/0, yes/no or
    IsNext/NotNext; an empty one is a pair not yet labelled (left out of the scores, as an unticked new row would
    be)."""
    rows = read_rows(data, PAIR_COLUMNS, optional=(TOPIC,), rows_are="pairs")
    labels: list[bool | None] = []
    for number, row in enumerate(rows, start=2):
        label = row["is_next"].lower()
        if label and label not in LABEL_SPELLINGS:
            raise TableInputError(
                f"CSV row {number}: `is_next` must be true or false (or 1/0, yes/no, IsNext/NotNext)."
            )
        labels.append(LABEL_SPELLINGS.get(label))
    return pd.DataFrame(
        {
            "sentence_a": [row["sentence_a"] for row in rows],
            "sentence_b": [row["sentence_b"] for row in rows],
            "is_next": pd.array(labels, dtype="boolean"),
            TOPIC: [row[TOPIC] for row in rows],
        }
    )


@dataclass(frozen=True)
class Evaluation:
    table: pd.DataFrame  # one row per scored pair, with prediction, confidence and correctness
    accuracy: float
    precision: float
    recall: float
    f1: float
    confusion: pd.DataFrame  # rows: actual IsNext/NotNext; columns: predicted IsNext/NotNext
    most_confident: int  # row of ``table`` with the highest confidence (first if tied)
    skipped: int  # rows without both sentences and a label


def usable_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Rows with two sentences that show something (``blank``) and a True/False label (as edited in a table),
    each with its ``row`` number in that table (from 1), which the messages use: the scored rows alone would be
    numbered otherwise."""
    a = pairs["sentence_a"].fillna("").astype(str).str.strip()
    b = pairs["sentence_b"].fillna("").astype(str).str.strip()
    labelled = pairs["is_next"].map(lambda v: isinstance(v, (bool, np.bool_)))
    keep = (~a.map(blank) & ~b.map(blank) & labelled).to_numpy()
    return pd.DataFrame(
        {
            "row": np.flatnonzero(keep) + 1,
            "sentence_a": a[keep].to_numpy(),
            "sentence_b": b[keep].to_numpy(),
            "is_next": pairs["is_next"][keep].astype(bool).to_numpy(),
            TOPIC: topics(pairs)[keep].to_numpy(),
        }
    )


def topics(pairs: pd.DataFrame) -> pd.Series:
    """Each pair's topic as text ("" where none, or without a ``topic`` column)."""
    column = pairs[TOPIC] if TOPIC in pairs else pd.Series("", index=pairs.index)
    return column.fillna("").astype(str).str.strip()


def scores_to_evaluation(pairs: pd.DataFrame, p_is_next: np.ndarray, skipped: int = 0) -> Evaluation:
    """Metrics (IsNext is the positive class) from labelled pairs and their P(IsNext)."""
    table = pairs.reset_index(drop=True).copy()
    table["p_is_next"] = p_is_next
    table["predicted_is_next"] = table["p_is_next"] >= 0.5
    table["confidence"] = np.maximum(table["p_is_next"], 1 - table["p_is_next"])
    table["correct"] = table["predicted_is_next"] == table["is_next"]
    y_true, y_pred = table["is_next"].tolist(), table["predicted_is_next"].tolist()
    matrix = confusion_matrix(y_true, y_pred, labels=[True, False])
    return Evaluation(
        table=table,
        accuracy=float(accuracy_score(y_true, y_pred)),
        precision=float(precision_score(y_true, y_pred, zero_division=0)),
        recall=float(recall_score(y_true, y_pred, zero_division=0)),
        f1=float(f1_score(y_true, y_pred, zero_division=0)),
        confusion=pd.DataFrame(
            matrix, index=[f"actual {x}" for x in LABELS], columns=[f"predicted {x}" for x in LABELS]
        ),
        most_confident=int(table["confidence"].to_numpy().argmax()),
        skipped=skipped,
    )


def evaluate_pairs(bundle: AnyBundle, pairs: pd.DataFrame, token_cap: int | None = None) -> Evaluation | None:
    """Score every usable labelled pair; None when there is none (NSP only: ValueError for a sentence-order head)."""
    _is_next_scores(bundle)
    usable = usable_pairs(pairs)
    if usable.empty:
        return None
    p, cut = score_pairs(bundle, list(zip(usable["sentence_a"], usable["sentence_b"])), token_cap)
    return scores_to_evaluation(usable.assign(**{CUT: cut}), p, skipped=len(pairs) - len(usable))
