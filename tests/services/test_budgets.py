"""Budgets on every path that does work, and safe output encoding (CSV formulas, carriage returns).

Each over-budget answer names the limit, its value and the variable that changes it.
"""

from __future__ import annotations

import time

import pandas as pd
import pytest

import components.services.cache
from bertlens.budgets import BUDGETS, MAX_TEXT_CHARS, Budgets, default_budgets, select_occurrences
from bertlens.models import BUNDLED_MODEL
from bertlens.settings import SettingsError, load_settings
from components.services.text import literal
from components.ui import exports
from components.views.senses.sections import TABS as SENSES_TABS
from tests.conftest import drawn_charts, tables

SENSES, TOKENIZER, NEXT_SENTENCE, FILL_MASK = (
    "pages/senses.py",
    "pages/tokenizer.py",
    "pages/next_sentence.py",
    "pages/fill_mask.py",
)
MAX_CHART_BYTES = 5_000_000


LAB = {"tokenizer_tab": "Padding lab"}  # the tab that draws the Padding lab


def shown(at, *kinds: str) -> str:
    kinds = kinds or ("warning", "info", "caption", "error")
    return " ".join(str(e.value) for kind in kinds for e in getattr(at, kind))


def chart_bytes(at) -> list[int]:
    """The plotly JSON each chart of the page sends to the browser."""
    return [len(chart.spec) for chart in drawn_charts(at)]


@pytest.fixture
def hosted(monkeypatch):
    monkeypatch.setenv("BERTLENS_HOSTED", "1")
    monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", BUNDLED_MODEL)


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, ...]]:
    """The sentence batches the word-senses page sends through the model (one entry per forward pass)."""
    batches: list[tuple[str, ...]] = []
    real = components.services.cache.embed_word

    def spy(bundle, sentences, *args, **kwargs):
        batches.append(tuple(sentences))
        return real(bundle, sentences, *args, **kwargs)

    monkeypatch.setattr(components.services.cache, "embed_word", spy)
    return batches


# --- budgets (pure) ------------------------------------------------------------------------------


def test_every_budget_has_a_variable_and_strict_hosted_defaults():
    hosted, local = default_budgets(True), default_budgets(False)
    for name, spec in BUDGETS.items():
        assert spec.env_var == "BERTLENS_" + spec.key.upper() and spec.key.startswith("max_")
        assert getattr(local, name) is None or getattr(local, name) >= getattr(hosted, name)
    assert hosted.limit("candidates") == (
        "at most 10 candidate sentences B on this server (set `BERTLENS_MAX_CANDIDATES`, "
        "or `max_candidates` in the `[bertlens]` secrets table, to change it)"
    )


@pytest.mark.parametrize("hosted_mode", [True, False])
def test_each_budget_is_set_by_its_variable_in_both_modes(hosted_mode):
    env = {spec.env_var: str(7 + i) for i, spec in enumerate(BUDGETS.values())}
    budgets = load_settings({**env, "BERTLENS_HOSTED": "1" if hosted_mode else "0"}).budgets
    assert budgets == Budgets(*(7 + i for i in range(len(BUDGETS))))


def test_token_cap_applies_in_local_mode_too():
    assert load_settings({}).budgets.tokens is None  # the model's own limit
    assert load_settings({"BERTLENS_MAX_TOKENS": "64"}).budgets.tokens == 64


def test_occurrence_selection_keeps_the_first_sentences_within_both_budgets():
    chosen = select_occurrences([1, 3, 250, 4, 0, 2], per_sentence=10, total=8)
    assert chosen.kept == (0, 1, 3, 4) and chosen.occurrences == 8
    assert chosen.over_per_sentence == (2,) and chosen.beyond_total == (5,)


def test_no_sentence_is_read_after_the_total_budget_cut_even_a_small_one():
    """5 + 5 goes over a total of 8, so the cut is after sentence 0: the later 1-occurrence sentence would still fit,
    but reading it would make the cut impossible to explain ("the first sentences are read")."""
    chosen = select_occurrences([5, 5, 1], per_sentence=10, total=8)
    assert chosen.kept == (0,) and chosen.beyond_total == (1, 2) and chosen.over_per_sentence == ()
    assert chosen.occurrences == 5


def test_exactly_the_budget_is_within_it_one_more_is_not():
    """50 candidates with a budget of 50 are all scored: no "only the first 50" warning; 51 get one naming 50."""
    local = default_budgets(hosted=False)
    assert local.candidates == 50
    assert local.first_only("candidates", 50, "candidate sentences B", "scored") is None
    assert local.first_only("candidates", 51, "candidate sentences B", "scored") == (
        "51 candidate sentences B given; only the first 50 are scored: at most 50 candidate sentences B on this "
        "server (set `BERTLENS_MAX_CANDIDATES`, or `max_candidates` in the `[bertlens]` secrets table, to change it)."
    )
    assert local.first_only("candidates", 3, "candidate sentences B") is None


# --- output encoding -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell",
    [
        '=HYPERLINK("http://evil.example","click")',
        "@SUM(A1:A9)",
        "+1+cmd|' /C calc'!A0",
        "-2+3",
        "\tTAB",
        "\rCR",
        "=1+1",
    ],
)
def test_csv_formula_cells_are_neutralised(cell, monkeypatch):
    captured = {}
    monkeypatch.setattr(exports.st, "download_button", lambda label, data, **kwargs: captured.update(data=data))
    exports.csv_download(pd.DataFrame({"sentence": [cell], "score": [-0.25]}), "x")
    written = pd.read_csv(pd.io.common.BytesIO(captured["data"]), keep_default_na=False)
    assert written["sentence"][0] == "'" + cell
    assert written["score"][0] == -0.25  # a plain negative number stays a number


def test_a_table_builds_its_safe_csv_only_when_clicked(monkeypatch):
    captured = {}
    monkeypatch.setattr(exports.st, "dataframe", lambda *args, **kwargs: None)
    monkeypatch.setattr(exports.st, "html", lambda *args, **kwargs: None)
    monkeypatch.setattr(exports.st, "download_button", lambda label, data, **kwargs: captured.update(data=data))
    df = pd.DataFrame({"sentence": ["=1+1", "plain"], "score": [-0.25, 1.0]})
    exports.table(df, "x")
    assert callable(captured["data"])  # nothing serialised on a rerun that nobody downloads
    assert captured["data"]() == exports.safe_csv(df)


def test_plain_cells_and_numbers_are_kept():
    df = pd.DataFrame({"text": ["-0.5", "1e5", "plain", "a=b", ""], "n": [-1, 2, 3, 4, 5]})
    assert exports.safe_csv(df).decode() == "\ufefftext,n\r\n-0.5,-1\r\n1e5,2\r\nplain,3\r\na=b,4\r\n,5\r\n"


def test_line_breaks_inside_cells_stay_inside_their_cell():
    df = pd.DataFrame({"text": ["one\rtwo", "three\nfour", "x"], "n": [1, 2, 3]})
    assert pd.read_csv(pd.io.common.BytesIO(exports.safe_csv(df)))["text"].tolist() == df["text"].tolist()


def test_formula_headers_are_neutralised_too():
    assert exports.safe_csv(pd.DataFrame({"=cmd()": [1]})).decode("utf-8-sig").startswith("'=cmd()")


def test_carriage_return_cannot_start_markdown_blocks():
    """`%0D===%0D` in a link would turn a warning into a heading."""
    for text in ("warning\r===\r", "a\r\n# heading", "x\r- item"):
        escaped = literal(text)
        assert "\r" not in escaped and "\n" not in escaped
    assert literal("a\r\nb\rc\nd") == "a b c d"


# --- word senses -----------------------------------------------------------------------------------


@pytest.mark.parametrize("hosted_mode", [True, False])
def test_word_repeated_hundreds_of_times_is_refused_quickly(open_page, reads, monkeypatch, hosted_mode):
    """The finding: 50 lines of 250 × "a", word `a`, took 159 s and 7.8 GB."""
    if hosted_mode:
        monkeypatch.setenv("BERTLENS_HOSTED", "1")
        monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", BUNDLED_MODEL)
    lines = "\n".join(" ".join(["a"] * 250) + f" {i}" for i in range(50))
    start = time.perf_counter()
    at = open_page(SENSES, source="Paste lines", lines=lines, word="a")
    elapsed = time.perf_counter() - start
    assert not at.exception
    limit = 10 if hosted_mode else 50
    assert f"occurs more than {limit} times in sentences 1, 2, 3" in shown(at, "warning")
    assert "(up to 250 times); they are left out" in shown(at, "warning")
    assert f"at most {limit} occurrences of the word per sentence" in shown(at, "warning")
    assert "`BERTLENS_MAX_OCCURRENCES_PER_SENTENCE`" in shown(at, "warning")
    assert reads == [] and not drawn_charts(at)  # no forward pass, nothing drawn
    assert elapsed < 60  # includes loading the model; the old code ran for minutes


def test_total_occurrences_budget_reads_the_first_sentences(open_page, reads, monkeypatch):
    monkeypatch.setenv("BERTLENS_MAX_OCCURRENCES", "5")
    at = open_page(SENSES, preset="field", word="field", refs="")
    assert not at.exception
    assert "only the first 5 sentences, with 5 occurrences, are read" in shown(at, "warning")
    assert "`BERTLENS_MAX_OCCURRENCES`" in shown(at, "warning")
    assert [len(batch) for batch in reads] == [5]


def test_long_shared_sentence_is_cut_and_scanned_once(open_page, monkeypatch):
    """A 120 KB `text=` was scanned in full, uncached, on every rerun (21 s per view)."""
    calls = []
    real = components.services.cache.find_word
    monkeypatch.setattr(components.services.cache, "find_word", lambda *a: calls.append(1) or real(*a))
    at = open_page(SENSES, preset="field", word="field", text="field " * 20_000)
    assert not at.exception
    assert literal(
        "Your own sentence (optional)"
    ) + " is 120,000 characters long; pages read only its first 20,000" in shown(at, "warning")
    assert "`BERTLENS_MAX_CHARS`" in shown(at, "warning")
    warning = shown(at, "warning")  # the shared one, left out (it said "in 1 sentence (your sentence; up to …")
    assert "occurs more than 50 times in your sentence (up to " in warning and "times); it is left out" in warning
    first = len(calls)
    at.selectbox(key="senses_layer").set_value("2").run()
    assert not at.exception and len(calls) == first  # the rerun scans nothing again (cached)


# --- padding lab -----------------------------------------------------------------------------------


def test_padding_lab_obeys_the_token_cap_and_line_budget(open_page, hosted):
    lines = "\n".join(f"line {i} " + "word " * 400 for i in range(20))
    at = open_page(TOKENIZER, text="hello", lines=lines, pad="max_length", pad_len="512", mask_demo="true", **LAB)
    assert not at.exception
    warning = shown(at, "warning")
    assert "20 lines given; only the first 16 are used" in warning and "`BERTLENS_MAX_LAB_LINES`" in warning
    assert "`pad_len` parameter (512) is not a whole number from 2 to 256" in warning
    assert at.slider(key="pad_len").max == 256
    assert "N goes up to 256 (the model has 512 positions)" in shown(at, "caption")
    mask_effect = next(d for d in tables(at) if "[CLS] L2 distance" in d.columns)
    assert len(mask_effect) == 16
    assert (mask_effect["real tokens"] + mask_effect["padding tokens"]).max() <= 256


def test_padding_lab_without_truncation_draws_within_the_positions_budget(open_page, hosted):
    lines = "\n".join(f"line {i} " + "word " * 400 for i in range(16))
    at = open_page(TOKENIZER, text="hello", lines=lines, trunc="false", **LAB)
    assert not at.exception
    assert "This batch is 16 × 404 = 6,464 positions, too many to draw" in shown(at, "warning")
    assert "`BERTLENS_MAX_LAB_POSITIONS`" in shown(at, "warning")
    assert len(drawn_charts(at)) == 1  # the padding-share bars only, no heatmaps


# --- next sentence ---------------------------------------------------------------------------------


def test_candidates_and_evaluation_rows_have_budgets(open_page, tiny_pretraining_dir, monkeypatch):
    monkeypatch.setenv("BERTLENS_MAX_CANDIDATES", "3")
    monkeypatch.setenv("BERTLENS_MAX_EVAL_ROWS", "4")
    candidates = "\n".join(f"Candidate number {i}." for i in range(5))
    at = open_page(NEXT_SENTENCE, tiny_pretraining_dir, candidates=candidates, nsp_tab="Ranking")
    assert not at.exception
    warning = shown(at, "warning")
    assert "5 candidate sentences B given; only the first 3 are scored" in warning
    assert "`BERTLENS_MAX_CANDIDATES`" in warning
    ranking = next(d for d in tables(at) if "candidate_b" in d.columns)
    assert sorted(ranking["candidate_b"]) == [f"Candidate number {i}." for i in range(3)]
    at = open_page(NEXT_SENTENCE, tiny_pretraining_dir, nsp_tab="Evaluation")
    warning = shown(at, "warning")
    assert "10 rows given; only the first 4 are scored" in warning and "`BERTLENS_MAX_EVAL_ROWS`" in warning
    evaluated = next(d for d in tables(at) if "predicted_is_next" in d.columns)
    assert len(evaluated) == 4


@pytest.mark.parametrize(
    ("page", "params", "label"),
    [
        (NEXT_SENTENCE, {"nsp_tab": "Ranking", "candidates": "It rained.\n\n" + "rain " * 1_200}, "candidate 2 is"),
        (
            TOKENIZER,
            {**LAB, "lines": "It rained.\n\n" + "rain " * 1_200},
            "sentence 1 is",
        ),  # the batch's rows count from 0
        ("pages/attention.py", {"attn_tab": "Compare", "compare": "rain " * 1_200}, "Second sentence (try"),
        (
            SENSES,
            {"source": "Paste lines", "word": "rain", "lines": "It rained. | a\n" + "rain " * 1_200},
            "sentence 2 is",
        ),
    ],
)
def test_every_text_a_page_reads_has_the_characters_budget(
    open_page, tiny_pretraining_dir, monkeypatch, page, params, label
):
    """Candidate Bs had none (ten 600 K-character candidates sent 6 MB of table), and the Padding lab's lines and
    Compare's sentence were read up to 20,000 characters where the budget says 5,000 (hosted-mode audit)."""
    monkeypatch.setenv("BERTLENS_MAX_CHARS", "1000")
    at = open_page(page, tiny_pretraining_dir, **params)
    assert not at.exception
    warning = shown(at, "warning")
    assert literal(label) in warning and "1,000" in warning and "`BERTLENS_MAX_CHARS`" in warning
    assert all(len(str(cell)) <= 1_000 for table in tables(at) for column in table for cell in table[column])


def test_a_lab_line_over_the_default_characters_budget_is_cut_with_a_word(open_page, tiny_pretraining_dir):
    """With local defaults the lab cut each line at 20,000 characters before the budget's check, which allows as
    many, so a 25,600-character line was cut without a word."""
    lines = "abc def " * 3_200 + "\nshort one"
    at = open_page(TOKENIZER, tiny_pretraining_dir, tokenizer_tab="Padding lab", trunc="false", lines=lines)
    assert not at.exception
    warning = shown(at, "warning")
    assert "sentence 0 is longer than 20,000 characters" in warning and "`BERTLENS_MAX_CHARS`" in warning
    assert "Sentence 0 (“abc def abc def abc def…”) is longer than the model's" in warning  # its row, as charted


def test_a_mask_beyond_the_characters_budget_is_named(open_page, tiny_pretraining_dir, monkeypatch):
    """The page said "A [MASK] is needed" when the student's [MASK] lay past the characters it reads."""
    monkeypatch.setenv("BERTLENS_MAX_CHARS", "100")
    text = "abc def " * 20 + "abc [MASK] def"
    at = open_page(FILL_MASK, tiny_pretraining_dir, text=text)
    assert not at.exception
    assert "Your [MASK] lies beyond the first 100 characters" in shown(at, "info")
    assert "A [MASK] is needed" not in shown(at, "info")
    compare = open_page(FILL_MASK, tiny_pretraining_dir, text="The [MASK] sat.", fill_tab="Compare two sentences",
                        fill_compare=text)  # fmt: skip
    assert "Your [MASK] lies beyond the first 100 characters" in shown(compare, "info")


def test_the_characters_budget_cannot_ask_for_more_than_pages_read():
    """Text is cut at 20,000 characters before tokenization whatever the setting: a larger one would be cut
    without a word, so it is refused at start-up."""
    assert load_settings({"BERTLENS_MAX_CHARS": str(MAX_TEXT_CHARS)}).budgets.chars == MAX_TEXT_CHARS
    with pytest.raises(
        SettingsError, match="BERTLENS_MAX_CHARS .* is '20001'. Accepted: a whole number from 1 to 20,000"
    ):
        load_settings({"BERTLENS_MAX_CHARS": "20001"})


def test_labelled_pairs_have_the_characters_budget(open_page, tiny_pretraining_dir, monkeypatch):
    """The Evaluation tab's sentences were read up to the hard 20,000-character limit (review)."""
    monkeypatch.setenv("BERTLENS_MAX_CHARS", "45")
    at = open_page(NEXT_SENTENCE, tiny_pretraining_dir, nsp_tab="Evaluation", a="Short A.", b="Short B.")
    assert not at.exception
    warning = shown(at, "warning")
    assert (
        "Sentences A of the pairs: rows 1, 2, 4, 5" in warning
        and "Sentences B of the pairs: rows 1, 2, 3" in warning
        and "`BERTLENS_MAX_CHARS`" in warning
    )
    scored = next(d for d in tables(at) if "predicted_is_next" in d.columns)
    assert len(scored) == 10 and scored["sentence_a"].str.len().max() == 45


def test_masks_drawn_one_by_one_have_a_budget(open_page, tiny_pretraining_dir, monkeypatch):
    """300 masks once drew 254 tables and charts (48 s on a bert-base-sized model); every mask at a glance, one
    row per mask, still lists them all."""
    monkeypatch.setenv("BERTLENS_HOSTED", "1")
    monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", str(tiny_pretraining_dir))
    text = " ".join(["[MASK] and"] * 15)
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text=text, k="3")
    assert not at.exception
    warning = shown(at, "warning")
    assert "15 masks given; only the first 12 are drawn one by one" in warning and "`BERTLENS_MAX_MASKS`" in warning
    assert len(drawn_charts(at)) == 12
    glance = next(d for d in tables(at) if len(d) == 15)
    assert list(glance.iloc[:, 0]) == list(range(1, 16))


def test_hosted_candidate_budget_is_strict(open_page, tiny_pretraining_dir, monkeypatch):
    monkeypatch.setenv("BERTLENS_HOSTED", "1")
    monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", str(tiny_pretraining_dir))
    candidates = "\n".join(f"Candidate number {i}." for i in range(100))
    at = open_page(NEXT_SENTENCE, tiny_pretraining_dir, candidates=candidates, nsp_tab="Ranking")
    assert not at.exception
    assert "100 candidate sentences B given; only the first 10 are scored" in shown(at, "warning")


# --- chart payload at the budgets' extremes ----------------------------------------------------------


@pytest.mark.parametrize("hosted_mode", [True, False])
def test_word_senses_payload_at_the_occurrence_budgets(open_page, monkeypatch, hosted_mode):
    """The most occurrences the budgets allow (per sentence × sentences = total), long sentences and
    sense labels, a 3D map: every chart together stays under 5 MB."""
    if hosted_mode:
        monkeypatch.setenv("BERTLENS_HOSTED", "1")
        monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", BUNDLED_MODEL)
    budgets = default_budgets(hosted_mode)
    per, sentences = budgets.occurrences_per_sentence, budgets.occurrences // budgets.occurrences_per_sentence
    lines = "\n".join(
        " ".join(["bank"] * per) + f" {i} " + "word " * 2_000 + f"| sense {i} " + "x" * 500 for i in range(sentences)
    )
    params = dict(source="Paste lines", lines=lines, word="bank", refs="river, money", projection="PCA 3D")
    charts = 0
    for tab in SENSES_TABS:  # a page sends the open tab's charts only
        at = open_page(SENSES, senses_tab=tab, **params)
        assert not at.exception
        if tab == SENSES_TABS[0]:
            points = next(d for d in tables(at) if {"x", "y", "z"} <= set(d.columns))
            assert len(points) == budgets.occurrences  # the extreme was reached, nothing refused
        sizes = chart_bytes(at)
        charts += len(sizes)
        assert sum(sizes) <= MAX_CHART_BYTES, (tab, sizes)
    assert charts == 4


@pytest.mark.parametrize("hosted_mode", [True, False])
def test_padding_lab_payload_at_the_lab_budgets(open_page, tiny_pretraining_dir, monkeypatch, hosted_mode):
    if hosted_mode:
        monkeypatch.setenv("BERTLENS_HOSTED", "1")
        monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", str(tiny_pretraining_dir))
    budgets = default_budgets(hosted_mode)
    n = budgets.tokens or 512
    lines = "\n".join(f"{i} " + "<b>&amp;</b> " * 600 for i in range(budgets.lab_lines))
    at = open_page(
        TOKENIZER,
        tiny_pretraining_dir,
        text="hello",
        lines=lines,
        pad="max_length",
        pad_len=str(n),
        mask_demo="true",
        **LAB,
    )
    assert not at.exception
    assert len(next(d for d in tables(at) if "[CLS] L2 distance" in d.columns)) == budgets.lab_lines
    sizes = chart_bytes(at)
    assert len(sizes) == 4 and sum(sizes) <= MAX_CHART_BYTES, sizes


def test_fill_mask_payload_at_the_token_budget(open_page, tiny_pretraining_dir):
    """Local mode, 512 tokens of masks, top-50 each: 510 masks, of which the masks budget's first 50 drawn one by
    one with a bar chart each (all 510 were drawn: 3.4 MB of charts; 254 masks took 48 s on a bert-base-sized model)."""
    at = open_page(FILL_MASK, tiny_pretraining_dir, text="[MASK] " * 600, k="50")
    assert not at.exception
    sizes = chart_bytes(at)
    assert len(sizes) == BUDGETS["masks"].local and sum(sizes) <= MAX_CHART_BYTES, sum(sizes)


def test_next_sentence_payload_at_the_candidate_budget(open_page, tiny_pretraining_dir):
    candidates = "\n".join(f"{i} " + "word " * 1_000 for i in range(BUDGETS["candidates"].local))
    at = open_page(NEXT_SENTENCE, tiny_pretraining_dir, candidates=candidates, nsp_tab="Ranking")
    assert not at.exception
    sizes = chart_bytes(at)
    assert len(sizes) == 1 and sum(sizes) <= MAX_CHART_BYTES, sizes
