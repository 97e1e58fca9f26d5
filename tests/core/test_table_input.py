"""A student's CSV file, read strictly: a download's neutralised formula cell loads back as it was, and any other
cell (an apostrophe that starts a sentence) exactly as written."""

from bertlens.table_input import read_rows


def test_an_apostrophe_at_the_start_of_a_sentence_is_kept():
    """A sentence such as "'Tis fine." starts with an apostrophe: taking it off would change the student's text."""
    data = b"sentence\n'Tis fine.\n'twas brillig\n' spaced\n''=quoted twice\n"
    assert [row["sentence"] for row in read_rows(data, ("sentence",))] == [
        "'Tis fine.",
        "'twas brillig",
        "' spaced",
        "''=quoted twice",
    ]


def test_a_downloads_neutralised_formula_cell_loads_back_as_it_was():
    """Our CSV downloads write "=1+1" as "'=1+1" (so that a spreadsheet does not run it): uploaded, it reads "=1+1"."""
    data = b"sentence_a,sentence_b\n'=1+1,'@SUM(A1)\n'+3,'-2 degrees\n"
    assert read_rows(data, ("sentence_a", "sentence_b")) == [
        {"sentence_a": "=1+1", "sentence_b": "@SUM(A1)"},
        {"sentence_a": "+3", "sentence_b": "-2 degrees"},
    ]
