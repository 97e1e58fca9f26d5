"""Next-sentence core: probabilities are the softmax of the model's own NSP logits; metrics equal scikit-learn."""

import re

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score, recall_score

from bertlens import nsp
from bertlens.analysis import analyze
from bertlens.table_input import TableInputError

A, B = "The weather is beautiful today.", "I think I'll go for a walk in the park."


def reference_p_is_next(nsp_model, tokenizer, pairs, max_length: int | None = None) -> list[float]:
    """The model's own NSP logits, softmaxed, one unpadded pair at a time (index 0 = IsNext); with
    ``max_length``, each pair truncated as the tokenizer does it (the longer sentence first)."""
    cut = {"truncation": True, "max_length": max_length} if max_length else {}
    with torch.no_grad():
        return [
            nsp_model(**tokenizer(a, b, return_tensors="pt", **cut)).logits.softmax(-1)[0, 0].item() for a, b in pairs
        ]


def test_verdict_is_the_softmax_of_the_nsp_logits(tiny_bundle, nsp_model):
    result = nsp.next_sentence(analyze(tiny_bundle, A, B))
    (expected,) = reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(A, B)])
    assert result.p_is_next == pytest.approx(expected, abs=1e-6)
    assert result.p_is_next + result.p_not_next == pytest.approx(1.0)
    with torch.no_grad():
        pretraining = tiny_bundle.model(**tiny_bundle.tokenizer(A, B, return_tensors="pt")).seq_relationship_logits
    assert result.p_is_next == pytest.approx(pretraining.softmax(-1)[0, 0].item(), abs=1e-6)
    np.testing.assert_allclose(result.logits, pretraining[0].tolist(), atol=1e-5)  # shown before the softmax


def test_verdict_follows_the_larger_probability():
    assert nsp.from_logits(np.array([2.0, 0.0])).is_next
    assert not nsp.from_logits(np.array([0.0, 2.0])).is_next
    verdict = nsp.from_logits(np.array([0.0, 2.0])).verdict
    assert verdict == "B does not follow A (NotNext) — the NSP head gives IsNext 11.9%, NotNext 88.1%"


def test_no_nsp_head_means_no_numbers(bundled):
    assert nsp.next_sentence(analyze(bundled, A, B)) is None
    with pytest.raises(ValueError, match="no next-sentence head"):
        nsp.score_pairs(bundled, [(A, B)])


def test_batched_scores_equal_one_pair_at_a_time(tiny_bundle, nsp_model, monkeypatch):
    pairs = list(zip(nsp.DEFAULT_PAIRS["sentence_a"], nsp.DEFAULT_PAIRS["sentence_b"]))
    monkeypatch.setattr(nsp, "BATCH_SIZE", 4)  # several padded batches, the last one short
    ours, cut = nsp.score_pairs(tiny_bundle, pairs)
    assert not any(cut)
    np.testing.assert_allclose(ours, reference_p_is_next(nsp_model, tiny_bundle.tokenizer, pairs), atol=1e-6)
    single = nsp.next_sentence(analyze(tiny_bundle, *pairs[3]))
    assert ours[3] == pytest.approx(single.p_is_next, abs=1e-6)


def test_ranking_is_sorted_and_equals_the_reference(tiny_bundle, nsp_model):
    candidates = [B, "Deep Learning is a branch of Machine Learning.", "It rained.", "Photosynthesis, again."]
    ranked = nsp.rank_candidates(tiny_bundle, A, candidates)
    assert list(ranked["rank"]) == [1, 2, 3, 4] and ranked["p_is_next"].is_monotonic_decreasing
    expected = dict(
        zip(candidates, reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(A, c) for c in candidates]))
    )
    for candidate, p in zip(ranked["candidate_b"], ranked["p_is_next"]):
        assert p == pytest.approx(expected[candidate], abs=1e-6)
    np.testing.assert_allclose(ranked["p_is_next"] + ranked["p_not_next"], 1.0)


def test_long_pairs_are_truncated_not_refused(tiny_bundle):
    (p,), (cut,) = nsp.score_pairs(tiny_bundle, [("word " * 400, "other " * 400)])
    assert 0 < p < 1 and cut


def test_metrics_on_a_hand_checked_case():
    pairs = pd.DataFrame(
        {"sentence_a": list("abcde"), "sentence_b": list("vwxyz"), "is_next": [True, True, True, False, False]}
    )
    p = np.array([0.9, 0.4, 0.6, 0.7, 0.2])  # predicted: T F T T F -> TP 2, FN 1, FP 1, TN 1
    result = nsp.scores_to_evaluation(pairs, p)
    assert (result.accuracy, result.precision, result.recall) == pytest.approx((0.6, 2 / 3, 2 / 3))
    assert result.f1 == pytest.approx(2 / 3)
    assert result.confusion.to_numpy().tolist() == [[2, 1], [1, 1]]
    assert list(result.confusion.index) == ["actual IsNext", "actual NotNext"]
    assert result.most_confident == 0 and result.table["correct"].tolist() == [True, False, True, False, True]
    y_true, y_pred = pairs["is_next"], p >= 0.5
    assert result.accuracy == accuracy_score(y_true, y_pred)
    assert result.precision == precision_score(y_true, y_pred)
    assert result.recall == recall_score(y_true, y_pred)
    assert result.f1 == f1_score(y_true, y_pred)
    assert result.confusion.to_numpy().tolist() == confusion_matrix(y_true, y_pred, labels=[True, False]).tolist()


def test_metrics_without_predicted_positives_are_zero_not_errors():
    pairs = pd.DataFrame({"sentence_a": ["a", "b"], "sentence_b": ["c", "d"], "is_next": [True, False]})
    result = nsp.scores_to_evaluation(pairs, np.array([0.1, 0.3]))
    assert (result.accuracy, result.precision, result.recall, result.f1) == (0.5, 0.0, 0.0, 0.0)
    assert result.most_confident == 0


def test_default_pairs_are_the_seed_exercise():
    assert len(nsp.DEFAULT_PAIRS) == 10 and nsp.DEFAULT_PAIRS["is_next"].tolist() == [True] * 5 + [False] * 5
    assert nsp.DEFAULT_PAIRS["sentence_a"][7] == "Python is a versatile programming language."


def test_evaluation_skips_incomplete_rows(tiny_bundle, nsp_model):
    edited = pd.concat(
        [
            nsp.DEFAULT_PAIRS.head(3),
            pd.DataFrame(
                {
                    "sentence_a": [None, "  ", "Only A", "No label"],
                    "sentence_b": ["B", "B", None, "B"],
                    "is_next": [True, True, False, None],
                }
            ),
        ],
        ignore_index=True,
    )
    result = nsp.evaluate_pairs(tiny_bundle, edited)
    assert result.skipped == 4 and len(result.table) == 3
    pairs = list(zip(edited["sentence_a"][:3], edited["sentence_b"][:3]))
    np.testing.assert_allclose(
        result.table["p_is_next"], reference_p_is_next(nsp_model, tiny_bundle.tokenizer, pairs), atol=1e-6
    )
    assert nsp.evaluate_pairs(tiny_bundle, edited.tail(4)) is None


def test_segments_table(tiny_bundle):
    table = nsp.segments_table(analyze(tiny_bundle, A, B))
    expected = tiny_bundle.tokenizer(A, B)["token_type_ids"]
    assert table["token_type_id"].tolist() == expected
    assert table["segment"].tolist() == ["A" if t == 0 else "B" for t in expected]
    assert table["token"].iloc[0] == "[CLS]" and table["token"].iloc[-1] == "[SEP]"


def test_pairs_from_a_csv_file():
    data = (
        "\ufeffSentence_A,sentence_b,IS_NEXT,topic\n"
        '"It rained, so",we stayed in.,true,weather\n'
        "A.,B.,NotNext,x\n"
        "C.,D.,1,x\n"
        "E.,F.,,x\n"
        "\u200b,G.,true,x\n"
    ).encode()
    pairs = nsp.parse_pairs(data)
    assert pairs[["sentence_a", "sentence_b"]].values.tolist() == [
        ["It rained, so", "we stayed in."],
        ["A.", "B."],
        ["C.", "D."],
        ["E.", "F."],
        ["\u200b", "G."],
    ]
    assert pairs["is_next"].tolist() == [True, False, True, pd.NA, True]
    assert pairs["topic"].tolist() == ["weather", "x", "x", "x", "x"]  # optional: a file without one reads ""
    assert nsp.parse_pairs(b"sentence_a,sentence_b,is_next\nA.,B.,true\n")["topic"].tolist() == [""]
    usable = nsp.usable_pairs(pairs)  # left out: the unlabelled pair, as an unticked new row; an A that shows nothing
    assert usable["row"].tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"sentence_a,sentence_b\nA.,B.\n", "`is_next` is missing"),
        (b"a,b\n", "a header row with the columns `sentence_a`, `sentence_b`, `is_next` (and optionally `topic`)."),
        (b"sentence_a,sentence_b,is_next\nA.,B.,maybe\n", "row 2: `is_next` must be true or false"),
        (b"sentence_a,sentence_b,is_next\n", "no pairs"),
        (b"sentence_a;sentence_b;is_next\nA.;B.;true\n", "Its cells are separated by ';': save it with commas."),
    ],
)
def test_a_pairs_file_that_cannot_be_read_says_why(data, message):
    with pytest.raises(TableInputError, match=re.escape(message)):
        nsp.parse_pairs(data)


def test_a_pair_at_exactly_one_half_is_predicted_isnext_as_the_verdict_says():
    """At P(IsNext) = 0.5 the verdict says IsNext (ties go to IsNext); the Evaluation table must agree, not say NotNext."""
    tie = nsp.from_logits(np.array([1.5, 1.5]))
    assert tie.p_is_next == 0.5 and tie.is_next and tie.verdict.startswith("B follows A (IsNext)")
    pairs = pd.DataFrame({"sentence_a": ["a", "b"], "sentence_b": ["c", "d"], "is_next": [True, False]})
    result = nsp.scores_to_evaluation(pairs, np.array([0.5, 0.5]))
    assert result.table["predicted_is_next"].tolist() == [True, True]
    assert result.table["correct"].tolist() == [True, False]
    assert result.confusion.to_numpy().tolist() == [[1, 0], [1, 0]]
    assert (result.accuracy, result.precision, result.recall) == pytest.approx((0.5, 0.5, 1.0))
