"""Counts in words, a text's lead, and the typed budgets constructor."""

import pytest

from bertlens.budgets import BUDGETS, budgets_from, default_budgets
from bertlens.wording import agree, blank, first_words, numbered, percent, plural, shortened, significant


def test_plural_agrees_with_the_count():
    assert [plural(n, "piece") for n in (0, 1, 2, 1234)] == ["0 pieces", "1 piece", "2 pieces", "1,234 pieces"]
    assert plural(1, "sense label") == "1 sense label" and plural(3, "[MASK] token") == "3 [MASK] tokens"
    assert plural(2, "query", "queries") == "2 queries"
    assert (agree(1, "is", "are"), agree(2, "is", "are"), agree(0, "was", "were")) == ("is", "are", "were")
    assert numbered("Sentence", [2]) == "Sentence 2" and numbered("Sentence", [0, 3]) == "Sentences 0, 3"


def test_budgets_need_a_value_except_the_token_cap():
    local = {name: spec.local for name, spec in BUDGETS.items()}
    assert budgets_from(local) == default_budgets(hosted=False) and default_budgets(hosted=False).tokens is None
    with pytest.raises(ValueError, match="chars"):
        budgets_from({**local, "chars": None})


def test_significant_figures_keep_their_last_zero_and_drop_a_lone_point():
    """One spelling for tables, bar labels and percentages: 0.0001980 beside 0.0002411, 100 (not "100.")."""
    assert [significant(v, 4) for v in (0.0002411, 0.000198, 0.5, 1.0)] == ["0.0002411", "0.0001980", "0.5000", "1.000"]
    assert (significant(100.0, 3), significant(0.00022, 3), significant(123456.0, 3)) == ("100", "0.000220", "1.23e+05")


def test_a_small_probability_never_reads_zero_percent():
    """A random model's top guess has ~1/30,522: it read "probability 0.0%"."""
    assert [percent(p) for p in (0.123, 0.001, 0.0005, 3.3e-05, 0.0)] == ["12.3%", "0.1%", "0.050%", "0.0033%", "0.0%"]
    assert [percent(p, 2) for p in (0.43214, 0.99996, 0.0004, 5.13e-05, 3.3e-06)] == [
        "43.21%",
        "100.00%",
        "0.04%",
        "0.0051%",  # a tiny model's average confidence once read 0.01%, twice its size
        "0.00033%",
    ]


def test_the_switch_to_two_significant_figures_is_below_a_tenth_of_a_percent():
    """One decimal of a percent down to 0.1 %: 5 % reads "5.0%" like its neighbours, 0.123 % reads "0.1%" (not
    "0.12%", a digit more than every other number in the table)."""
    assert [percent(p) for p in (0.05, 0.00123, 0.001, 0.00099)] == ["5.0%", "0.1%", "0.1%", "0.099%"]
    assert [percent(p, 2) for p in (0.05, 0.000123, 0.0001, 0.000099)] == ["5.00%", "0.01%", "0.01%", "0.0099%"]


def test_a_shortened_label_is_exactly_the_limit_long():
    assert shortened("x" * 50, 10) == "x" * 9 + "…" and len(shortened("x" * 50, 10)) == 10
    assert shortened("abcdefghijk", 10) == "abcdefghi…"
    assert shortened("x" * 10, 10) == "x" * 10  # at the limit: not cut


def test_blank_text_shows_nothing():
    assert blank("") and blank(" \n\t") and blank("\u200b\u00ad\u2060\ufeff\u202e")  # zero-width, soft hyphen, marks
    assert not blank("a") and not blank("\u200bа") and not blank("🤖") and not blank("[MASK]")


def test_neighbouring_small_probabilities_read_with_the_same_figures():
    """A lesson's answer read "bard with probability 0.005%; next come berwick (0.0049%)"."""
    assert [percent(p) for p in (4.9996e-05, 4.9e-05, 1.0e-06)] == ["0.0050%", "0.0049%", "0.00010%"]


def test_first_words_keeps_whole_sentences_up_to_the_limit():
    text = "One two three. Four five six seven? Eight nine! Ten."
    assert first_words(text, 3) == ("One two three.", "Four five six seven? Eight nine! Ten.")
    assert first_words(text, 8) == ("One two three. Four five six seven?", "Eight nine! Ten.")
    assert first_words(text, 9) == ("One two three. Four five six seven? Eight nine!", "Ten.")
    assert first_words(text, 10) == (text, "")  # all of it fits: no "More"
    assert first_words(text, 2) == ("", text)  # the first sentence alone is longer: no lead
    assert first_words("  Short.  ", 5) == ("Short.", "")  # stripped
    lead, rest = first_words("A b.\n\nC d e f g.", 3)  # a paragraph break ends a sentence too
    assert (lead, rest) == ("A b.", "C d e f g.")


def test_first_words_splits_at_no_colon_abbreviation_or_open_bracket():
    """Only ".", "?" and "!" before white space end a sentence: never a colon, "e.g.", "et al.", a decimal point, or a
    period inside brackets, curly quotes, code or Markdown emphasis (the lead would leave them open)."""
    text = "Look: e.g. I am Matt, as Clark et al. (2019) found at 0.5 or i.e. less. The rest follows here."
    assert first_words(text, 16) == (
        "Look: e.g. I am Matt, as Clark et al. (2019) found at 0.5 or i.e. less.",
        "The rest follows here.",
    )
    assert first_words(text, 15) == ("", text)
    assert first_words("It is (one. Two) three. Four.", 4)[0] == ""  # not "It is (one."
    assert first_words("Quote “one. Two” ends. Four five.", 4) == ("Quote “one. Two” ends.", "Four five.")
    assert first_words("**Bold. Still bold.** Plain. Plain too.", 4) == ("**Bold. Still bold.** Plain.", "Plain too.")
    assert first_words("*Hidden.* Then `code. more` and. End here.", 5) == (
        "*Hidden.* Then `code. more` and.",
        "End here.",
    )
    assert first_words("We thank the devs. Then more.", 4) == ("We thank the devs.", "Then more.")  # not "vs."


def test_first_words_ends_after_closing_quotes_and_markdown():
    text = "**Misconception: “BERT predicts the next word.”** It does not. BERT fills a masked word."
    assert first_words(text, 9) == (
        "**Misconception: “BERT predicts the next word.”** It does not.",
        "BERT fills a masked word.",
    )
    assert first_words(text, 8) == (
        "**Misconception: “BERT predicts the next word.”**",
        "It does not. BERT fills a masked word.",
    )
    assert first_words("Is it? (Yes.) No.", 2) == ("Is it?", "(Yes.) No.")
    assert first_words("Is it? (Yes.) No.", 3) == ("Is it? (Yes.)", "No.")
