"""Next sentence page opened from a link: the numbers on screen equal the model's own NSP head."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score, recall_score
from transformers import AutoTokenizer, BertForNextSentencePrediction, BertForPreTraining

from bertlens import nsp
from bertlens.models import BUNDLED_MODEL
from bertlens.nsp import DEFAULT_PAIRS
from bertlens.wording import shortened
from components.ui.exports import safe_csv
from tests.conftest import assert_shows, drawn_charts, tables
from tests.core.test_nsp import reference_p_is_next
from tests.pages.test_attention_page import typed

PAGE = "pages/next_sentence.py"
A, B = "The capital of France is Paris.", "It is a big city."


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.warning, *at.info, *at.success])


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_pair_from_the_link(open_page, tiny_pretraining_dir, tiny_bundle, nsp_model):
    at = open_page(PAGE, tiny_pretraining_dir, a=A, b=B)
    assert not at.exception
    assert at.text_input(key="a").value == A and at.text_input(key="b").value == B
    (p,) = reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(A, B)])
    assert_shows(metrics(at)["P(IsNext)"], "{}", p, places=4)
    assert_shows(metrics(at)["P(NotNext)"], "{}", 1 - p, places=4)
    verdict = "B follows A (IsNext)" if p >= 0.5 else "B does not follow A (NotNext)"
    assert_shows(
        shown(at), f"{verdict} — the NSP head gives IsNext {{}}%, NotNext {{}}%", p, 1 - p, places=1, percent=True
    )
    assert not re.search(r"\bsure\b", shown(at), re.IGNORECASE)  # a softmax output, not a certainty
    with torch.no_grad():
        is_next, not_next = nsp_model(**tiny_bundle.tokenizer(A, B, return_tensors="pt")).logits[0].tolist()
    assert_shows(shown(at), "IsNext {} (index 0), NotNext {} (index 1)", is_next, not_next, places=4)
    assert_shows(shown(at), "IsNext − NotNext = −{}.", not_next - is_next, places=4)  # the page's minus sign
    assert is_next != not_next and not_next > is_next  # the tiny model: a NotNext pair, shown as a warning
    assert [w for w in at.warning if "**Verdict:**" in w.value] and not [s for s in at.success if "Verdict" in s.value]
    assert not tables(at)  # the segments table is drawn when its expander is opened
    at.session_state["segments"] = True  # the student opens it
    at.run()
    segments = tables(at)[0]
    assert segments["token_type_id"].tolist() == tiny_bundle.tokenizer(A, B)["token_type_ids"]


def test_defaults_are_the_seed_pair(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir)
    assert at.text_input(key="a").value == "The weather is beautiful today."
    assert at.text_input(key="b").value == "I think I'll go for a walk in the park."


def test_swap_puts_b_before_a(open_page, tiny_pretraining_dir, tiny_bundle, nsp_model):
    at = open_page(PAGE, tiny_pretraining_dir, a=A, b=B)
    at.button(key="swap").click().run()
    assert not at.exception
    assert at.text_input(key="a").value == B and at.text_input(key="b").value == A
    (p,) = reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(B, A)])
    assert_shows(metrics(at)["P(IsNext)"], "{}", p, places=4)


def test_a_swap_of_the_shared_sentence_and_b_is_the_pair_every_page_shows(open_page, tiny_pretraining_dir):
    """With the shared sentence as A, a swap left the other pages with that sentence as both their sentence and B."""
    at = open_page(PAGE, tiny_pretraining_dir, text=A, a=A, b=B)
    at.button(key="swap").click().run()
    assert not at.exception
    assert (at.text_input(key="a").value, at.text_input(key="b").value) == (B, A)
    assert (at.session_state["_shared_text"], at.session_state["_shared_b"]) == (B, A)  # what the other pages read
    at = open_page(PAGE, tiny_pretraining_dir, text="Another sentence.", a=A, b=B)  # an A of this page's own
    at.button(key="swap").click().run()
    assert "_shared_text" not in at.session_state and at.session_state["_shared_b"] == A  # the link's sentence stays
    at = open_page(PAGE, tiny_pretraining_dir, text=A, a=A, b=" ")  # no B: the other pages keep their sentence
    at.button(key="swap").click().run()
    assert "_shared_text" not in at.session_state and at.session_state["_shared_b"] == A


def test_use_the_shared_sentence_as_a(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir, text="Sinan loves a beautiful day", a=A, b=B)
    assert "Sinan loves a beautiful day" in at.button(key="use_shared").help  # what it will put in A
    at.button(key="use_shared").click().run()
    assert not at.exception and at.text_input(key="a").value == "Sinan loves a beautiful day"
    # A first visit: nobody has typed a sentence yet, so the app's default is not offered as "the shared sentence"
    assert not [b for b in open_page(PAGE, tiny_pretraining_dir, a=A, b=B).button if b.key == "use_shared"]


def test_ranking_of_candidates(open_page, tiny_pretraining_dir, tiny_bundle, nsp_model):
    candidates = ["It is a big city.", "Bananas are yellow.", "Its museums are famous."]
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Ranking", a=A, b=B, candidates="\n".join(candidates))
    (ranked,) = tables(at)  # only the open tab is drawn
    expected = dict(
        zip(candidates, reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(A, c) for c in candidates]))
    )
    assert ranked["candidate_b"].tolist() == sorted(candidates, key=expected.get, reverse=True)
    assert ranked["p_is_next"].tolist() == pytest.approx([expected[c] for c in ranked["candidate_b"]], abs=1e-6)


def test_repeated_candidates_are_ranked_once_and_the_page_says_so(open_page, tiny_pretraining_dir):
    """Repeats were dropped without a word (Word senses says so for its sentences)."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Ranking", a=A, b=B, candidates="x\nx\n\n\ny\n   \nx")
    (ranked,) = tables(at)
    assert sorted(ranked["candidate_b"]) == ["x", "y"]
    assert "2 repeated lines left out: each candidate counts once." in [c.value for c in at.caption]


def test_ranking_bars_stand_beside_their_candidates(open_page, decisive_nsp_dir):
    """Each bar of the ranking chart is its own candidate's P(IsNext) from the model's NSP head, and the bars are
    ranked from the most probable down."""
    a, candidates = DEFAULT_PAIRS["sentence_a"][0], list(DEFAULT_PAIRS["sentence_b"][:6])
    at = open_page(PAGE, decisive_nsp_dir, nsp_tab="Ranking", a=a, candidates="\n".join(candidates))
    assert not at.exception
    model = BertForNextSentencePrediction.from_pretrained(decisive_nsp_dir).eval()
    p = reference_p_is_next(model, AutoTokenizer.from_pretrained(decisive_nsp_dir), [(a, c) for c in candidates])
    expected = {
        shortened(c, 60): x for c, x in zip(candidates, p)
    }  # a bar's label: its rank and the candidate, shortened
    assert len(expected) == len(set(p)) == len(p)  # distinct: bars in another order could not pass
    (chart,) = drawn_charts(at)
    bars = json.loads(chart.spec)["data"][0]
    labels = list(bars["y"])
    assert [label.split(". ", 1)[0] for label in labels] == [str(r) for r in range(1, len(candidates) + 1)]
    by_label = [expected[label.split(". ", 1)[1]] for label in labels]
    assert typed(bars["x"]).tolist() == pytest.approx(by_label, abs=1e-5)
    assert by_label == sorted(p, reverse=True)


def test_verdict_is_a_success_only_when_the_model_says_isnext(open_page, decisive_nsp_dir):
    """The verdict box is green (success) for IsNext and a warning for NotNext, as the model's own P(IsNext)."""
    model = BertForNextSentencePrediction.from_pretrained(decisive_nsp_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(decisive_nsp_dir)
    pairs = list(zip(DEFAULT_PAIRS["sentence_a"], DEFAULT_PAIRS["sentence_b"]))
    p = reference_p_is_next(model, tokenizer, pairs)
    one_of_each = [next(i for i, x in enumerate(p) if x >= 0.5), next(i for i, x in enumerate(p) if x < 0.5)]
    for i in one_of_each:
        a, b = pairs[i]
        at = open_page(PAGE, decisive_nsp_dir, a=a, b=b)
        assert not at.exception
        assert_shows(metrics(at)["P(IsNext)"], "{}", p[i], places=4)
        verdict = "B follows A (IsNext)" if p[i] >= 0.5 else "B does not follow A (NotNext)"
        right, wrong = (at.success, at.warning) if p[i] >= 0.5 else (at.warning, at.success)
        [box] = [e.value for e in right if "**Verdict:**" in e.value]
        assert_shows(
            box,
            f"**Verdict:** {verdict} — the NSP head gives IsNext {{}}%, NotNext {{}}%",
            p[i],
            1 - p[i],
            places=1,
            percent=True,
        )
        assert not [e for e in wrong if "Verdict" in e.value]


def test_a_candidate_cut_to_the_token_limit_is_named(open_page, tiny_pretraining_dir, tiny_bundle, nsp_model):
    long = "hello " * 600  # with A, far over the model's 512 positions
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Ranking", a=A, b=B, candidates=f"It is a big city.\n{long}")
    (ranked,) = tables(at)
    cut = ranked.set_index("candidate_b")["cut to fit"]
    assert cut[long.strip()] and not cut["It is a big city."]
    rank = int(ranked.set_index("candidate_b").loc[long.strip(), "rank"])
    assert any(f"1 candidate (rank {rank}) is longer than 512 tokens" in w.value for w in at.warning)
    (p,) = reference_p_is_next(nsp_model, tiny_bundle.tokenizer, [(A, long.strip())], max_length=512)
    assert ranked.set_index("candidate_b").loc[long.strip(), "p_is_next"] == pytest.approx(p, abs=1e-6)


@pytest.fixture(scope="module")
def decisive_nsp_dir(tmp_path_factory, tiny_pretraining_dir) -> Path:
    """The tiny checkpoint with its NSP head sharpened, so that the seed's ten pairs get different verdicts: six
    IsNext (the tiny model alone scores all ten 0.497 and calls them NotNext, so a metric swapped for another, or a
    wrong confusion matrix, would go unnoticed)."""
    folder = tmp_path_factory.mktemp("decisive-nsp")
    model = BertForPreTraining.from_pretrained(tiny_pretraining_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_pretraining_dir)
    head = model.cls.seq_relationship
    with torch.no_grad():
        head.weight.mul_(200)
        batch = tokenizer(
            list(DEFAULT_PAIRS["sentence_a"]), list(DEFAULT_PAIRS["sentence_b"]), padding=True, return_tensors="pt"
        )
        logits = model(**batch).seq_relationship_logits
        margins = (logits[:, 0] - logits[:, 1]).sort(descending=True).values
        head.bias[0] -= float(margins[5] + margins[6]) / 2  # the boundary between the 6th and 7th pair
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_evaluation_of_the_seed_pairs(open_page, decisive_nsp_dir):
    at = open_page(PAGE, decisive_nsp_dir, nsp_tab="Evaluation")
    nsp_model = BertForNextSentencePrediction.from_pretrained(decisive_nsp_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(decisive_nsp_dir)
    p = reference_p_is_next(nsp_model, tokenizer, zip(DEFAULT_PAIRS["sentence_a"], DEFAULT_PAIRS["sentence_b"]))
    y_true, y_pred = DEFAULT_PAIRS["is_next"].tolist(), [x >= 0.5 for x in p]
    assert sum(y_pred) == 6 and precision_score(y_true, y_pred) != recall_score(y_true, y_pred)
    shown_metrics = metrics(at)
    for name, score in [
        ("Accuracy", accuracy_score),
        ("Precision", precision_score),
        ("Recall", recall_score),
        ("F1", f1_score),
    ]:
        kwargs = {} if name == "Accuracy" else {"zero_division": 0}
        assert_shows(shown_metrics[name], "{}", score(y_true, y_pred, **kwargs), places=4)
    results = tables(at)[-1]
    assert results["p_is_next"].tolist() == pytest.approx(p, abs=1e-5)  # the sharpened head: 200 × the rounding
    # The verdicts first, the sentences last: after the sentences' wide columns they were off a projector's page
    assert list(results.columns[:4]) == ["row", "is_next", "predicted_is_next", "correct"]
    assert list(results.columns[-2:]) == ["sentence_a", "sentence_b"]
    best = max(range(10), key=lambda i: max(p[i], 1 - p[i]))
    assert results["most_confident"].tolist() == [i == best for i in range(10)]
    assert f"Most confident pair** (row {best + 1}" in shown(at)
    right = y_pred[best] == y_true[best]  # a lopsided but wrong pair is a warning, not a success
    box = next(e for e in [*at.success, *at.warning] if "Most confident pair" in e.value)
    assert box in (at.success if right else at.warning) and ("correct" if right else "wrong") in box.value
    (matrix,) = drawn_charts(at)  # the confusion matrix (the ranking's tab is closed)
    drawn = json.loads(matrix.spec)["data"][0]
    assert drawn["y"] == ["IsNext", "NotNext"] and drawn["x"] == ["IsNext", "NotNext"]
    assert typed(drawn["z"]).tolist() == confusion_matrix(y_true, y_pred, labels=[True, False]).tolist()


def test_most_confident_pair_states_the_probability_the_head_gives(
    open_page, tiny_pretraining_dir, tiny_bundle, nsp_model
):
    """The pair's larger probability is stated as the NSP head's (it said "x % sure": a softmax output, here from random
    weights, is no certainty): the tiny model's most confident pair is a NotNext one, so its P(NotNext) is given."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Evaluation")
    assert not at.exception
    pairs = zip(DEFAULT_PAIRS["sentence_a"], DEFAULT_PAIRS["sentence_b"])
    confidence = [max(x, 1 - x) for x in reference_p_is_next(nsp_model, tiny_bundle.tokenizer, pairs)]
    results = tables(at)[-1]
    (best,) = results.index[results["most_confident"]]
    assert confidence[best] == pytest.approx(max(confidence), abs=1e-6)  # the most confident, up to rounding
    assert results["p_is_next"][best] < 0.5  # NotNext: confidence and P(IsNext) differ
    (box,) = [e for e in [*at.success, *at.warning] if "Most confident pair" in e.value]
    topic = nsp.DEFAULT_PAIRS["topic"][best]  # seed 003 names each pair by its topic: "Pair 1 (Weather)"
    assert_shows(
        box.value,
        f"(row {best + 1}, {topic}: the NSP head gives NotNext {{}}%, ",
        confidence[best],
        places=2,
        percent=True,
    )
    assert not re.search(r"\bsure\b", shown(at), re.IGNORECASE)


def test_the_students_own_pairs_from_a_file(open_page, decisive_nsp_dir, monkeypatch):
    """Seed 003's exercise 5 asks for ten pairs of one's own: loaded from a CSV file, scored, and the scored table's
    download loads back. A file that cannot be read says why and the default pairs stay."""
    at = open_page(PAGE, decisive_nsp_dir, nsp_tab="Evaluation")
    own = DEFAULT_PAIRS.iloc[[0, 5, 1, 6]].reset_index(drop=True)  # four of them, in another order
    reads = []
    monkeypatch.setattr(nsp, "parse_pairs", lambda data, parse=nsp.parse_pairs: reads.append(1) or parse(data))
    at.file_uploader(key="pairs_csv").set_value(("mine.csv", own.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception and "Loaded from your file" in shown(at)
    at.run()  # a rerun (an edit of the table, another tab) reads the file's pairs from memory: 2 MB took 60 ms
    assert len(reads) == 1
    nsp_model = BertForNextSentencePrediction.from_pretrained(decisive_nsp_dir).eval()
    p = reference_p_is_next(
        nsp_model, AutoTokenizer.from_pretrained(decisive_nsp_dir), zip(own["sentence_a"], own["sentence_b"])
    )
    results = tables(at)[-1]
    assert results["sentence_a"].tolist() == own["sentence_a"].tolist()
    assert results["p_is_next"].tolist() == pytest.approx(p, abs=1e-5)
    y_pred = [x >= 0.5 for x in p]
    assert_shows(metrics(at)["Accuracy"], "{}", accuracy_score(own["is_next"].tolist(), y_pred), places=4)

    many = pd.concat([DEFAULT_PAIRS] * 15, ignore_index=True)  # 150 pairs, over the local budget of 100
    at.file_uploader(key="pairs_csv").set_value(("many.csv", many.to_csv(index=False).encode(), "text/csv")).run()
    assert "150 pairs given; only the first 100 are loaded" in " ".join(w.value for w in at.warning)
    assert len(tables(at)[-1]) == 100  # the pairs scored: the table holds the first 100

    at.file_uploader(key="pairs_csv").set_value(("bad.csv", b"a,b\n1,2\n", "text/csv")).run()
    assert not at.exception and "`sentence_a`, `sentence_b`, `is_next`" in " ".join(e.value for e in at.error)
    assert tables(at)[-1]["sentence_a"].tolist() == DEFAULT_PAIRS["sentence_a"].tolist()


def test_messages_number_the_rows_as_the_students_table_does(open_page, tiny_pretraining_dir):
    """After two rows were blanked, the pair in row 6 was called "row 4": rows were counted among those scored."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Evaluation")
    blank = {"sentence_a": "", "sentence_b": ""}
    at.session_state["pairs"] = {"edited_rows": {0: blank, 1: blank}, "added_rows": [], "deleted_rows": []}
    at.run()
    scored = tables(at)[-1]
    assert not at.exception and scored["row"].tolist() == list(range(3, 11))
    best = scored.loc[scored["most_confident"], "row"].item()
    assert f"Most confident pair** (row {best}," in shown(at)
    assert not scored.loc[scored["most_confident"], "correct"].item()  # the tiny model: sure of a wrong verdict…
    assert any("Most confident pair" in w.value for w in at.warning)  # …shown as a warning, not a success


def test_evaluation_says_its_own_pairs_were_cut(open_page, tiny_pretraining_dir):
    """QA: uploaded pairs over the limit were told in the Ranking tab's words ("together with A … A or the
    candidate"), where every row has its own A and B."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Evaluation")
    long = "word " * 600
    at.file_uploader(key="pairs_csv").set_value(
        ("long.csv", f"sentence_a,sentence_b,is_next\n{long},B,true\n".encode(), "text/csv")
    ).run()
    said = " ".join(w.value for w in at.warning)
    assert (
        "1 pair (row 1) is longer than 512 tokens: cut to fit, the longer sentence losing its end first (A or B;"
        in said
    ), said
    assert "candidate" not in said


def test_the_pairs_label_comes_first(open_page, tiny_pretraining_dir):
    """After two long sentences the is_next checkboxes were cut off the table's right edge at 1280 px."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Evaluation")
    [editor] = at.get("dataframe")
    assert list(editor.proto.column_order) == ["is_next", "sentence_a", "sentence_b", "topic"]


def test_edited_pairs_say_that_the_link_leaves_them_out(open_page, tiny_pretraining_dir):
    """The table's edits are not in the URL: a reload or the class link opened the default pairs without a word."""
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Evaluation")
    assert not [c for c in at.caption if "not in the link" in c.value]
    at.session_state["pairs"] = {"edited_rows": {0: {"sentence_a": "EDITED"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and tables(at)[-1]["sentence_a"].iloc[0] == "EDITED"
    assert [c for c in at.caption if "not in the link" in c.value]


@pytest.mark.parametrize(
    "a, b, message",
    [
        ("", B, "Type both sentences"),
        (A, "   ", "Type both sentences"),
        ("word " * 600, B, "512 tokens are analysed: the longer sentence lost its end first"),
    ],
)
def test_bad_input_gets_a_clear_message(open_page, tiny_pretraining_dir, a, b, message):
    at = open_page(PAGE, tiny_pretraining_dir, a=a, b=b)
    assert not at.exception and message in shown(at)


def test_a_cut_pair_says_which_sentence_lost_tokens(open_page, tiny_pretraining_dir):
    """transformers cuts a pair longest-first: a long A loses its end and B is kept whole. The notice said "only
    the first 512 tokens are analysed" (B's tokens were all there) — a hosted-mode audit."""
    a = "word " * 600
    tokenizer = AutoTokenizer.from_pretrained(tiny_pretraining_dir)
    kept = tokenizer(a, B, truncation=True, max_length=512).sequence_ids()
    full_a, full_b = len(tokenizer.tokenize(a)), len(tokenizer.tokenize(B))
    at = open_page(PAGE, tiny_pretraining_dir, a=a, b=B)
    expected = f"(A keeps {kept.count(0)} of its {full_a} tokens, B {kept.count(1)} of {full_b})"
    assert kept.count(1) == full_b and expected in shown(at)


def test_odd_text_is_shown_literally(open_page, tiny_pretraining_dir):
    a, b = "<script>alert(1)</script> 😀", "**not bold** [MASK]"
    at = open_page(PAGE, tiny_pretraining_dir, nsp_tab="Ranking", a=a, b=b, candidates=b)
    assert not at.exception and at.text_input(key="a").value == a
    assert b in tables(at)[0]["candidate_b"].tolist()
    at = open_page(PAGE, tiny_pretraining_dir, a=a, b=b)
    assert "<script>" not in shown(at) and "P(IsNext)" in metrics(at)


def test_bundled_encoder_gets_the_explanation_and_no_numbers(open_page):
    at = open_page(PAGE, BUNDLED_MODEL, a=A, b=B)
    assert not at.exception
    explanation = " ".join(i.value for i in at.info)
    assert "no next-sentence-prediction (NSP) head" in explanation and "hf download bert-base-uncased" in explanation
    assert not at.metric and not tables(at) and not drawn_charts(at)


def test_the_scored_tables_download_loads_back(tiny_bundle):
    """The Evaluation tab's CSV download is a file the tab reads again: the student's pairs, kept, formula-looking
    cells too (the download neutralises them with a ', which came back as part of the sentence)."""
    pairs = pd.concat(
        [nsp.DEFAULT_PAIRS, pd.DataFrame([("=1+1 is two.", "-2+3 is one.", True, "=maths"), ("@cmd", "+SUM(A1:A2)", False, "")],
                                         columns=nsp.DEFAULT_PAIRS.columns)],
        ignore_index=True,
    )  # fmt: skip
    result = nsp.evaluate_pairs(tiny_bundle, pairs)
    assert "'=1+1 is two." in safe_csv(result.table).decode("utf-8-sig")  # spreadsheet-safe on the way out
    again = nsp.parse_pairs(safe_csv(result.table))
    pd.testing.assert_frame_equal(again.astype({"is_next": bool}), pairs)
