"""Every chart's one line of words (its text equivalent), checked against the figure's own data."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import streamlit as st
import torch
from transformers import AutoTokenizer, BertModel

from components.services.text import chart_text
from components.ui import exports
from components.ui.chart_words import describe, name
from components.views.attention.figures import statistics_figure
from tests.conftest import drawn_charts


def test_a_heatmap_names_its_largest_cell_with_its_labels():
    z = np.array([[0.1, 0.41, 0.2], [0.3, 0.2, 0.05]])
    fig = go.Figure(go.Heatmap(z=z, x=["the", "animal", "street"], y=["it", "&lt;b&gt;tired"]))
    fig.update_layout(title="Layer 3, head 1")
    assert describe(fig) == "Layer 3, head 1: 2 × 3 cells from 0.05 to 0.41; largest at row it, column animal (0.41)."


def test_a_tie_for_the_largest_cell_names_every_cell_of_it():
    """The confusion matrix said "largest at row IsNext, column IsNext (5)" beside another 5: a reader took the
    first cell for the only one."""
    fig = go.Figure(go.Heatmap(z=[[5, 0], [5, 0]], x=["IsNext", "NotNext"], y=["IsNext", "NotNext"]))
    assert describe(fig) == (
        "2 × 2 cells from 0 to 5; largest at row IsNext, column IsNext (5); row NotNext, column IsNext (5)."
    )
    uniform = go.Figure(go.Heatmap(z=np.full((3, 3), 0.25), x=list("abc"), y=list("abc")))
    assert describe(uniform).endswith(
        "largest at row a, column a (0.25); row a, column b (0.25); row a, column c (0.25); and 6 more cells as large."
    )


def test_a_difference_map_names_its_largest_change_whichever_its_sign():
    """Compare's "where attention moved" named its largest positive cell (0.009) beside a change of −0.033."""
    fig = go.Figure(go.Heatmap(z=[[0.009, -0.0332], [0.001, 0.0]], x=["a", "b"], y=["it", "was"]))
    assert describe(fig) == "2 × 2 cells from -0.0332 to 0.009; largest in size at row it, column b (-0.0332)."


def test_a_grid_of_heads_names_its_largest_cell_by_layer_and_head():
    """QA: the head statistics' words said "largest at row 2, column 2" for encoder layer 2, head 2."""
    values = np.zeros((3, 4))
    values[2, 1] = 0.5
    words = describe(statistics_figure(values, "next", selected=None))
    assert "largest at encoder layer 2, head 1 (0.5)" in words, words


def test_grouped_bars_are_told_series_by_series():
    """QA: Compare's bars for a token in each sentence read "16 bars; highest: … (the first of 2 panels)": one chart,
    and the second sentence never named."""
    fig = go.Figure(
        [
            go.Bar(x=["a", "b"], y=[0.2, 0.7], name="first sentence"),
            go.Bar(x=["a", "b"], y=[0.6, 0.1], name="second sentence"),
        ]
    )
    assert describe(fig) == (
        "First sentence: 2 bars; highest: b (0.7), a (0.2); second sentence: 2 bars; highest: a (0.6), b (0.1)."
    )


def test_bars_name_the_three_highest_either_way_round():
    upright = go.Figure(go.Bar(x=["a", "b", "c", "d"], y=[0.1, 0.5, 0.3, 0.2]))
    sideways = go.Figure(go.Bar(y=["a", "b", "c", "d"], x=[0.1, 0.5, 0.3, 0.2], orientation="h"))
    assert describe(upright) == describe(sideways) == "4 bars; highest: b (0.5), c (0.3), d (0.2)."


def test_lines_say_where_they_peak_and_maps_count_their_groups():
    lines = go.Figure([go.Scatter(x=[0, 1, 2], y=[0.1, 0.9, 0.2], name="animal", mode="lines")])
    assert describe(lines) == "3 points in 1 series: animal peaks at 1 (0.9)."
    groups = go.Figure(
        [
            go.Scatter(x=[0, 1], y=[1, 2], name="sport", mode="markers"),
            go.Scatter(x=[3], y=[4], name="farm", mode="markers"),
        ]
    )
    assert describe(groups) == "3 points in 2 groups: sport (2); farm (1)."


def test_a_sunburst_gives_the_shares_of_its_top_level():
    fig = go.Figure(go.Sunburst(labels=["A", "B", "a1"], parents=["", "", "A"], values=[75, 25, 75]))
    assert describe(fig) == "A 75 (75%); B 25 (25%)."


def test_a_small_share_is_not_read_as_none():
    """The parameters' sunburst said "NSP head 1,538 (0%)" (the table beside it: 0.0014 %)."""
    fig = go.Figure(go.Sunburst(labels=["Encoder", "NSP head"], parents=["", ""], values=[110_104_890, 1_538]))
    assert describe(fig) == "Encoder 110,104,890 (100%); NSP head 1,538 (0.0014%)."


def test_a_sunburst_names_its_largest_share_first_whatever_the_input_order():
    """A sunburst's parts come in the order its table lists them: read in that order, the line would not say which
    part is largest."""
    fig = go.Figure(
        go.Sunburst(labels=["Small", "Big", "Mid", "b1"], parents=["", "", "", "Big"], values=[10, 60, 30, 60])
    )
    assert describe(fig) == "Big 60 (60%); Mid 30 (30%); Small 10 (10%)."


def test_right_to_left_tokens_keep_their_numbers_beside_them():
    """An Arabic token drew its number to its far side: "highest: 13 (0.0607) ط## 6 ,(0.0608) ا" (an audit). Each
    right-to-left label is isolated (U+2068 … U+2069); a left-to-right one is left as it is."""
    fig = go.Figure(go.Bar(x=["ا", "##ط", "the"], y=[0.0618, 0.0607, 0.01]))
    assert describe(fig) == "3 bars; highest: \u2068ا\u2069 (0.0618), \u2068##ط\u2069 (0.0607), the (0.01)."
    heatmap = go.Figure(go.Heatmap(z=[[0.1, 0.9]], x=["ב", "b"], y=["שלום"]))
    assert describe(heatmap).endswith("largest at row \u2068שלום\u2069, column b (0.9).")


def test_a_chart_without_data_has_no_words():
    assert describe(go.Figure()) is None
    assert describe(go.Figure(go.Heatmap(z=[[np.nan]]))) is None
    assert describe(go.Figure(go.Bar(x=["a"], y=["not a number"]))) is None  # never breaks the page


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("pages/attention.py", {"text": "The animal did not cross the street because it was too tired."}),
        ("pages/attention.py", {"attn_tab": "Token focus"}),
        ("pages/anatomy.py", {}),
        ("pages/fill_mask.py", {"text": "The capital of France is [MASK]."}),
        ("pages/fill_mask.py", {"text": "The capital of France is [MASK].", "fill_tab": "Layer by layer"}),
        ("pages/next_sentence.py", {"nsp_tab": "Ranking"}),
        ("pages/senses.py", {}),
        ("pages/tokenizer.py", {"tokenizer_tab": "Padding lab"}),
    ],
)
def test_every_chart_on_a_page_has_its_words_and_a_name(page, params, open_page, tiny_pretraining_dir):
    """The line in words under each chart, and its accessible name: its title as plain text (a screen reader
    says "figure" and the name), else its file name; Streamlit gives no name without ``alt``."""
    at = open_page(page, tiny_pretraining_dir, **params)
    assert not at.exception
    charts = drawn_charts(at)
    words = [c.value for c in at.caption if c.value.startswith("In words — ")]
    assert charts and len(words) == len(charts)
    for chart in charts:
        layout = json.loads(chart.spec)["layout"]
        assert layout.get("dragmode") is False or "scene" in layout  # a phone's swipe scrolls past it (3D: turns)
        title = layout.get("title", {}).get("text")
        assert chart.sent["alt"].strip()
        assert "<" not in chart.sent["alt"] and "&lt;" not in chart.sent["alt"]
        if title:
            assert chart.sent["alt"] == " ".join(html.unescape(re.sub("<[^>]+>", " ", title)).split())


def test_the_attention_heatmaps_words_name_the_reference_maximum(open_page, tiny_pretraining_dir):
    text = "The animal did not cross the street because it was too tired."
    at = open_page("pages/attention.py", tiny_pretraining_dir, text=text, attn_layer="1", head="2")
    tokenizer = AutoTokenizer.from_pretrained(tiny_pretraining_dir)
    model = BertModel.from_pretrained(tiny_pretraining_dir, attn_implementation="eager").eval()
    with torch.inference_mode():
        matrix = model(**tokenizer(text, return_tensors="pt"), output_attentions=True).attentions[1][0, 2].numpy()
    row, column = np.unravel_index(matrix.argmax(), matrix.shape)
    tokens = tokenizer.tokenize(text)
    tokens = ["[CLS]", *tokens, "[SEP]"]
    [words] = [c.value for c in at.caption if c.value.startswith("In words — ")]
    expected = f"largest at row {row} {tokens[row]}, column {column} {tokens[column]} \\({matrix.max():.3g}\\)"
    assert expected.replace("[", "\\[").replace("]", "\\]").replace(".", "\\.") in words


def test_a_charts_name_is_its_title_as_plain_text_else_the_fallback():
    titled = go.Figure(layout={"title": {"text": f"<b>Senses of {chart_text('<i>&')}</b><br>PCA 2D"}})
    assert name(titled, "senses map") == "Senses of <i>& PCA 2D"
    assert name(go.Figure(), "senses map") == "senses map"


def test_chart_text_escapes_tags_and_keeps_quotes():
    """Plotly draws ``<b>`` but shows ``&quot;`` as typed: a candidate B ``=HYPERLINK("x")`` read
    ``=HYPERLINK(&quot;x&quot;)`` in the ranking chart."""
    assert chart_text('=HYPERLINK("x") it\'s <b>') == '=HYPERLINK("x") it\'s &lt;b&gt;'
    assert chart_text("&lt;") == "&amp;lt;"


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("pages/tokenizer.py", {"tokenizer_tab": "Vocabulary"}),
        ("pages/fill_mask.py", {"text": "The capital of France is [MASK] and [MASK] is nice."}),
        ("pages/attention.py", {"attn_tab": "Token focus"}),
    ],
)
def test_each_download_button_names_what_it_downloads(page, params, open_page, tiny_pretraining_dir):
    """A keyboard audit heard three "Download CSV" buttons on one tab (2.4.6): each now names its table or chart."""
    at = open_page(page, tiny_pretraining_dir, **params)
    labels = [button.proto.label for button in at.get("download_button")]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels


def test_a_download_label_shows_user_text_literally(monkeypatch):
    """Word senses names its files after the student's word: Streamlit renders a button's label as Markdown, so a
    linked word ``![x](https://e.com/p.png)`` loaded a remote image in every student's browser (review)."""
    labels = []
    monkeypatch.setattr(st, "download_button", lambda label, *args, **kwargs: labels.append(label))
    monkeypatch.setattr(exports, "show_table", lambda *args, **kwargs: None)
    exports.table(pd.DataFrame({"a": [1]}), "senses-![x](https://e.com/p.png)-coordinates")
    assert labels == ["Download CSV: senses \\!\\[x\\]\\(https\\:\u2060//e\\.com/p\\.png\\) coordinates"]
