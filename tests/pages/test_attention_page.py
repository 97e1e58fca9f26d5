"""Attention page opened as a shared link (AppTest) on the bundled encoder."""

import base64
import json
import re

import numpy as np
import pytest
import torch
from streamlit.components.v2.bidi_component.main import _make_trigger_id

from bertlens.analysis import analyze
from bertlens.attention import (
    STATISTIC_BY_KEY,
    find_head,
    head_statistics,
    rollout,
    sentence_b_start,
    token_labels,
)
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from components.views.attention.figures import MIN_STATISTICS_HEIGHT, page_payload, statistics_figure
from components.views.attention.sections import TABS
from tests.conftest import assert_shows, chart_title, drawn_charts, tables

PAGE = "pages/attention.py"
PAIR = {"text": "I went to the store.", "b": "At the store, I bought fresh strawberries."}
FIVE_MB = 5_000_000


def specs(at) -> list[dict]:
    return [json.loads(chart.spec) for chart in drawn_charts(at)]


def typed(array: dict | list) -> np.ndarray:
    """Values exactly as sent to the browser: plotly's base64 typed array, or a plain JSON list."""
    if not isinstance(array, dict):
        return np.asarray(array)
    values = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
    return values.reshape([int(d) for d in str(array["shape"]).split(",")]) if "shape" in array else values


def drawn_z(spec: dict) -> np.ndarray:
    return typed(spec["data"][0]["z"])


def words(at) -> str:
    """The charts' text equivalents ("In words — …" under each chart)."""
    return " ".join(c.value for c in at.caption if c.value.startswith("In words"))


def plain_words(at) -> str:
    """``words`` without the Markdown escapes of ``literal`` ("0\\.123"), so that its numbers read as numbers."""
    return words(at).replace("\\", "")


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.warning, *at.info])


def warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def listed(values) -> list:
    """A trace's array as a list, whether plotly sent it as a JSON list or as a base64 typed array."""
    return typed(values).tolist() if isinstance(values, dict) else list(values)


def model_attentions(bundle, text: str, text_b: str | None = None) -> tuple[np.ndarray, dict]:
    """The reference: the model's own attentions (layers, heads, query, key), run here on the tokenizer's own
    encoding, not through the app's analysis; with the token ids, the axis labels ("position token") and which
    rows are the text's own tokens (not [CLS] or [SEP])."""
    inputs = bundle.tokenizer(text, text_b, return_tensors="pt", return_special_tokens_mask=True)
    special = inputs.pop("special_tokens_mask")[0].numpy().astype(bool)
    with torch.no_grad():
        own = bundle.model.bert(**inputs, output_attentions=True).attentions
    ids = inputs["input_ids"][0].numpy()
    labels = [f"{i} {token}" for i, token in enumerate(bundle.tokenizer.convert_ids_to_tokens(ids.tolist()))]
    return np.stack([layer[0].numpy() for layer in own]), {"ids": ids, "labels": labels, "text_rows": ~special}


def click_point(at, chart_key: str, point: dict):
    """Rerun the page as a click on ``point`` of the chart keyed ``chart_key`` does in the browser: the point's
    customdata goes to the server as the chart's "pick" event, and the chart's on_pick runs (AppTest cannot click
    a custom element; ``_tree``, ``_run`` and the event's widget id are Streamlit internals, which an upgrade may
    move)."""
    [drawn] = [c for c in drawn_charts(at) if c.id.endswith(chart_key)]
    states = at._tree.get_widget_states()
    clicked = states.widgets.add()
    clicked.id = _make_trigger_id(drawn.id, "events")
    clicked.json_trigger_value = json.dumps([{"event": "pick", "value": point["customdata"]}])
    return at._run(states)


def point_at(spec: dict, x: float, y: float) -> dict:
    """The clickable point drawn at (x, y), as plotly reports a clicked point (with its customdata)."""
    for number, trace in enumerate(spec["data"]):
        if "customdata" not in trace or trace.get("type") != "scatter":
            continue
        xs, ys, custom = listed(trace["x"]), listed(trace["y"]), listed(trace["customdata"])
        for i in range(len(xs)):
            if np.isclose(xs[i], x) and np.isclose(ys[i], y):
                return {"curve_number": number, "point_number": i, "point_index": i, "x": x, "y": y,
                        "customdata": custom[i]}  # fmt: skip
    raise AssertionError(f"no clickable point at ({x}, {y})")


def test_link_selects_layer_and_head_and_draws_the_models_matrix(open_page, bundled):
    text = "The cat sat on the mat"
    at = open_page(PAGE, text=text, layer="2", head="6")
    assert not at.exception
    assert at.slider(key="attn_layer").value == 2 and at.slider(key="head").value == 6
    (heatmap,) = specs(at)
    assert chart_title(heatmap) == "Encoder layer 2, head 6"
    expected = analyze(bundled, text).attentions[2, 6]
    np.testing.assert_allclose(drawn_z(heatmap), expected, atol=1e-7)
    np.testing.assert_allclose(drawn_z(heatmap).sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"layer": "99"}, "`layer` parameter (99) is not a whole number from 0 to 5"),
        ({"head": "-1"}, "`head` parameter (\\-1) is not a whole number from 0 to 11"),
        ({"layer": "abc"}, "`layer` parameter (abc)"),
        ({"view": "bogus"}, "`view` parameter (bogus)"),
        ({"tab": "nope"}, "`tab` parameter (nope)"),
        ({"tab": "Token focus", "token": "99 zz"}, "`token` parameter (99 zz)"),
    ],
)
def test_malformed_link_parameters_warn_and_fall_back(open_page, params, fragment):
    at = open_page(PAGE, text="The cat sat on the mat", **params)
    assert not at.exception
    assert fragment in warnings(at)
    assert at.slider(key="attn_layer").value == 0 and at.slider(key="head").value == 0


def test_pair_is_marked_on_the_heatmap(open_page, bundled):
    at = open_page(PAGE, **PAIR)
    assert at.text_input(key="b").value == PAIR["b"]
    (heatmap,) = specs(at)
    encoding = analyze(bundled, PAIR["text"], PAIR["b"]).encoding
    start = sentence_b_start(encoding)
    assert heatmap["data"][0]["y"] == list(token_labels(encoding))
    assert {(s["x0"], s["y0"]) for s in heatmap["layout"]["shapes"]} == {(start - 0.5, 0), (0, start - 0.5)}


def test_mean_and_rollout_views(open_page, bundled):
    text = "The cat sat on the mat"
    attentions = analyze(bundled, text).attentions
    at = open_page(PAGE, text=text, layer="3", mean="true")
    (heatmap,) = specs(at)
    assert chart_title(heatmap) == "Encoder layer 3, mean of 12 heads"
    np.testing.assert_allclose(drawn_z(heatmap), attentions[3].mean(axis=0), atol=1e-6)
    at = open_page(PAGE, text=text, layer="3", view="Rollout")
    (heatmap,) = specs(at)
    assert at.slider(key="head").disabled and "not explanation" in " ".join(m.value for m in at.markdown)  # How to read
    np.testing.assert_allclose(drawn_z(heatmap), rollout(attentions)[3], atol=1e-6)
    # Abnar & Zuidema's rollout from the model's own attentions: Â = ½ (mean of heads) + ½ I, multiplied through.
    with torch.no_grad():
        own = bundled.model.bert(**bundled.tokenizer(text, return_tensors="pt"), output_attentions=True).attentions
    joint = torch.eye(own[0].shape[-1], dtype=torch.float64)
    for layer in own[:4]:
        joint = (0.5 * layer[0].double().mean(0) + 0.5 * torch.eye(joint.shape[0], dtype=torch.float64)) @ joint
    np.testing.assert_allclose(drawn_z(heatmap), joint.numpy(), atol=1e-5)


def test_find_the_head_selects_the_strongest_head(open_page, bundled):
    at = open_page(PAGE, tab="Head statistics", **PAIR)
    assert not at.exception
    stats = head_statistics(*(lambda a: (a.attentions, a.encoding))(analyze(bundled, PAIR["text"], PAIR["b"])))
    layer, head = find_head(stats, "previous")
    at.button(key="find_previous").click().run()
    assert (at.slider(key="attn_layer").value, at.slider(key="head").value) == (layer, head)
    (heatmap,) = specs(at)  # the heatmap tab opens on the chosen head
    assert chart_title(heatmap) == f"Encoder layer {layer}, head {head}"


def test_a_parameter_given_twice_is_named(open_page):
    at = open_page(PAGE, text=["The first one.", "The cat sat."], attn_layer=["2", "1"], heads=["0", "1"])
    assert not at.exception and at.text_input(key="text").value == "The cat sat."
    notes = [i.value for i in at.info]
    assert "The link gives `text` 2 times; the last value is used." in notes
    assert "The link gives `attn_layer` 2 times; the last value is used." in notes
    assert not any("`heads`" in note for note in notes)  # a list of values: repeated on purpose


def test_a_statistic_no_head_has_says_why_instead_of_an_empty_chart(open_page):
    at = open_page(PAGE, tab="Head statistics", text="a", b="b", stat="To same token in other sentence")
    assert not at.exception and not specs(at)
    assert "No head has a value for this statistic: it needs a word that occurs in both sentences." in [
        i.value for i in at.info
    ]


def every_statistic_of(bundle, text: str, text_b: str) -> dict[str, np.ndarray]:
    """Reference for every head statistic, (layers, heads) each, query by query from the model's own attentions:
    the mean over the text's own tokens (no [CLS] or [SEP] row) that the statistic applies to."""
    inputs = bundle.tokenizer(text, text_b, return_special_tokens_mask=True)
    ids, segments = inputs["input_ids"], inputs["token_type_ids"]
    text_rows = [q for q, special in enumerate(inputs["special_tokens_mask"]) if not special]
    attentions, _ = model_attentions(bundle, text, text_b)

    def mean(rule) -> np.ndarray:  # rule(row, q) -> a value, or None where the statistic does not apply
        values = [[[rule(row[q], q) for q in text_rows] for row in layer] for layer in attentions]
        return np.array([[np.mean([v for v in head if v is not None]) for head in layer] for layer in values])

    def twins(q: int, other_sentence: bool) -> list[int]:
        return [
            k for k in text_rows
            if k != q and ids[k] == ids[q] and (segments[k] != segments[q] or not other_sentence)
        ]  # fmt: skip

    return {
        "entropy": mean(lambda p, q: -sum(x * np.log2(x) for x in p if x > 0)),
        "cls": mean(lambda p, q: p[0]),
        "sep": mean(lambda p, q: sum(p[k] for k, i in enumerate(ids) if i == bundle.tokenizer.sep_token_id)),
        "previous": mean(lambda p, q: p[q - 1]),
        "next": mean(lambda p, q: p[q + 1]),
        "same_token": mean(lambda p, q: sum(p[twins(q, False)]) if twins(q, False) else None),
        "other_sentence": mean(lambda p, q: sum(p[twins(q, True)]) if twins(q, True) else None),
    }


def test_statistics_table_gives_every_statistic_of_every_head(open_page, bundled):
    """The Head statistics table: one row per (encoder layer, head), each statistic equal to the reference
    computed query by query from the model's own attentions (the heatmap shows one statistic; the table all)."""
    pair = {"text": "The cat saw the dog.", "b": "The dog ran to the cat."}  # "the" within and across sentences
    at = open_page(PAGE, attn_tab="Head statistics", **pair)
    assert not at.exception
    (table,) = [t for t in tables(at) if "Entropy (bits)" in t]
    expected = every_statistic_of(bundled, pair["text"], pair["b"])
    assert not np.allclose(expected["same_token"], expected["other_sentence"])  # so the two cannot stand in
    assert table["layer"].tolist() == [layer for layer in range(6) for _ in range(12)]
    assert table["head"].tolist() == list(range(12)) * 6
    for key, values in expected.items():
        assert not np.isnan(values).any(), key  # the pair has a word in both sentences: every statistic applies
        label = STATISTIC_BY_KEY[key].label
        np.testing.assert_allclose(table[label].to_numpy(float), values.ravel(), atol=1e-5, err_msg=label)


def test_statistics_tab_has_a_table_with_csv(open_page):
    at = open_page(PAGE, tab="Head statistics", text="The cat sat on the mat", stat="To [SEP]")
    assert not at.exception
    assert chart_title(specs(at)[0]).startswith("To [SEP]")
    assert tables(at)[0].shape == (6 * 12, 9)
    assert any(d.proto.label.startswith("Download") for d in at.get("download_button"))


def test_preset_sets_the_pair_and_the_token_focus(open_page):
    at = open_page(PAGE, tab="Token focus")
    at.button(key="preset_1").click().run()  # the store pair
    assert not at.exception
    assert at.text_input(key="text").value == PAIR["text"] and at.text_input(key="b").value == PAIR["b"]
    assert at.selectbox(key="token").value == 10  # "store" in sentence B
    assert at.multiselect(key="targets").value == [5, 7]  # "store" in sentence A, [SEP]
    assert len(specs(at)) == 2


def test_seed_000s_examples_come_with_its_questions_and_layers(open_page, tmp_path, bundled):
    """The France [MASK] and "too wide" examples open seed 000's layer (10 and 9, in a 12-layer model) with its
    questions; a model with fewer layers keeps its layer and says so. The calculators sentence follows "digit"."""
    deep = save_random_bert(tmp_path, random_bert_config(**{**TINY_CONFIG, "num_hidden_layers": 12}))
    at = open_page(PAGE, deep, tab="Token focus")
    at.button(key="preset_4").click().run()  # France [MASK]
    assert not at.exception and at.slider(key="attn_layer").value == 10
    assert "look at encoder layer 10 (in bert-base-uncased)" in shown(at)
    at.button(key="preset_3").click().run()  # … too wide
    assert at.slider(key="attn_layer").value == 9 and "does “it” now attend to street" in shown(at)

    at = open_page(PAGE, tab="Token focus")  # the bundled encoder: 6 layers
    at.button(key="preset_4").click().run()
    assert at.slider(key="attn_layer").value == 0
    assert "encoder layer 10 of bert-base-uncased's 12; this model has 6" in shown(at)
    at.button(key="preset_5").click().run()  # the calculators
    labels = token_labels(analyze(bundled, at.text_input(key="text").value).encoding)
    assert labels[at.selectbox(key="token").value].endswith(" digit")
    assert sorted(labels[t].split()[1] for t in at.multiselect(key="targets").value) == [
        "arithmetic",
        "electronic",
        "keyboard",
    ]
    assert "Does “digit” attend to arithmetical" in shown(at)


def test_the_students_new_sentence_is_no_fault_of_the_link(open_page):
    """A link's tokens that no longer fit the sentence the student typed are dropped without a word: "The link's
    `token` parameter (10 it) is not a token of this input" once followed every new sentence, naming a link the
    student never used (the browser's URL keeps the widget's last value, and sends it with the next run)."""
    at = open_page(PAGE, tab="Token focus", token="10 it", targets=["2 animal", "8 street"])
    assert not at.warning and at.selectbox(key="token").value == 10
    at.query_params.update(token="10 it", targets=["2 animal", "8 street"])  # as the browser's address still has
    at.text_input(key="text").set_value("My dog likes cheese.").run()
    assert not at.exception and not at.warning
    assert at.text_input(key="text").value == "My dog likes cheese."
    bad = open_page(PAGE, tab="Token focus", token="10 it", targets=["2 animal", "8 street"], text="My dog.")
    assert "`token` parameter (10 it)" in warnings(bad) and "`targets` parameter (2 animal, 8 street)" in warnings(bad)


def test_default_sentence_focuses_it_on_animal_and_street(open_page, bundled):
    at = open_page(PAGE, tab="Token focus", layer="4", head="1")
    encoding = analyze(bundled, at.text_input(key="text").value).encoding
    token, targets = at.selectbox(key="token").value, at.multiselect(key="targets").value
    assert encoding.tokens[token] == "it" and [encoding.tokens[t] for t in targets] == ["animal", "street"]
    row, layers = specs(at)
    # It follows head 1 of every layer: its title once named only "Encoder layer 4, head 1"
    assert chart_title(layers) == "'10 it' → targets: head 1 in each encoder layer"
    values = np.array([typed(trace["y"]) for trace in layers["data"] if trace.get("mode") == "lines+markers"])
    reference = analyze(bundled, at.text_input(key="text").value).attentions[:, 1, token][:, targets].T
    np.testing.assert_allclose(values, reference, atol=1e-6)


def test_token_focus_charts_offer_their_numbers(open_page, bundled, csv_downloads):
    at = open_page(PAGE, tab="Token focus", layer="4", head="1")
    text = at.text_input(key="text").value
    token, targets = at.selectbox(key="token").value, at.multiselect(key="targets").value
    attentions = analyze(bundled, text).attentions[:, 1]
    row = csv_downloads["token-focus-layer4-head1"]
    labels = row["key token"].tolist()
    np.testing.assert_allclose(row[f"attention from {labels[token]}"], attentions[4, token], atol=1e-6)
    layers = csv_downloads["token-focus-layers"]
    assert layers["encoder layer"].tolist() == list(range(6)) and list(layers.columns[1:]) == [
        labels[t] for t in targets
    ]
    np.testing.assert_allclose(layers.iloc[:, 1:].to_numpy(), attentions[:, token][:, targets], atol=1e-6)


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_opens(open_page, tab):
    at = open_page(PAGE, tab=tab, **PAIR)
    assert not at.exception and specs(at)


def test_empty_text_gets_a_message(open_page):
    at = open_page(PAGE, text="   ")
    assert not at.exception and "empty" in " ".join(i.value for i in at.info)


def test_512_tokens_run_and_stay_under_5_mb(open_page, bundled):
    text = "The animal didn't cross the street because it was too tired. " * 60
    total = sum(page_payload(analyze(bundled, text)).values())
    assert total < FIVE_MB  # every figure of every tab together
    for tab in ("Heatmap", "All heads"):  # the two largest, as the page really sends them
        at = open_page(PAGE, text=text, tab=tab)
        assert not at.exception
        assert "512 tokens are analysed: [cls], the text's first 510 tokens and [sep]" in warnings(at).lower()
        sent = sum(len(chart.spec) for chart in drawn_charts(at))
        assert 0 < sent < FIVE_MB


def test_find_the_head_says_truly_why_a_pattern_is_missing(open_page):
    at = open_page(PAGE, attn_tab="Head statistics", text="A cat sat.")  # one sentence, no token twice
    labels = {b.key: b.label for b in at.button}
    assert labels["find_other_sentence"] == "Same word in the other sentence: needs a sentence B (a pair)"
    assert labels["find_same_token"] == "Same word: needs a token that occurs twice in the text"
    at = open_page(PAGE, attn_tab="Head statistics", text="A cat sat", b="The dog ran")
    assert {b.key: b.label for b in at.button}["find_other_sentence"].endswith(
        "needs a word that occurs in both sentences"
    )


def test_head_statistics_say_what_they_average_and_in_which_unit(open_page):
    at = open_page(PAGE, attn_tab="Head statistics", text="The cat sat on the mat")
    note = " ".join(m.value for m in at.markdown)  # How to read this
    assert "mean over the text's own tokens" in note and "bits (log base 2)" in note and "Clark et al. (2019)" in note


def test_thumbnails_say_how_they_were_shrunk(open_page, bundled):
    at = open_page(PAGE, attn_tab="All heads", text=" ".join(["word"] * 60))  # 62 tokens > the thumbnail side
    note = " ".join(c.value for c in at.caption)
    assert "block means" not in note and "sums a block of keys and averages those sums over a block of queries" in note
    peaks = analyze(bundled, " ".join(["word"] * 60)).attentions.max(axis=(2, 3))
    layer, head = np.unravel_index(np.argmax(peaks), peaks.shape)
    strongest = f"most concentrated is encoder layer {layer}, head {head}, where one token gives {{}}%"
    assert_shows(plain_words(at), strongest, peaks[layer, head], places=1, percent=True)


def line_pairs(trace: dict) -> set[tuple[int, int]]:
    """The (query, key) pairs of a head view line trace (x: 0 → 1, y: query → key, None between)."""
    ys = trace["y"] if isinstance(trace["y"], list) else typed(trace["y"]).tolist()
    return {(int(ys[i]), int(ys[i + 1])) for i in range(0, len(ys), 3)}


def test_head_view_draws_several_heads_together_as_bertviz_does(open_page, bundled):
    text = "The cat sat on the mat"
    at = open_page(PAGE, text=text, attn_tab="Head view", attn_layer="2", heads=["1", "4"])
    assert not at.exception and at.multiselect(key="heads").value == ["1", "4"]
    (view,) = specs(at)
    assert chart_title(view) == "Encoder layer 2, 2 heads together"
    legend = [t for t in view["data"] if t.get("mode") == "lines" and t.get("showlegend", True)]
    lines = [t for t in view["data"] if t.get("mode") == "lines" and t.get("showlegend") is False]
    assert [t["name"] for t in legend] == ["head 1", "head 4"]  # one legend entry each, at full strength
    assert (
        len({t["line"]["color"] for t in legend}) == len({t["line"]["dash"] for t in legend}) == 2
    )  # not by colour alone
    assert {t["name"] for t in lines} == {"head 1", "head 4"}
    attentions = analyze(bundled, text).attentions
    for head in (1, 4):  # a short sentence: every weight of at least 0.02 is a line
        drawn = set().union(*(line_pairs(t) for t in lines if t["name"] == f"head {head}"))
        expected = {(int(q), int(k)) for q, k in zip(*np.nonzero(attentions[2, head] >= 0.02))}
        assert drawn == expected
        q, k = np.unravel_index(np.argmax(attentions[2, head]), attentions[2, head].shape)
        labels = token_labels(analyze(bundled, text).encoding)
        assert_shows(
            plain_words(at), f"head {head}: {labels[q]} → {labels[k]} ({{}})", attentions[2, head, q, k], places=3
        )
    at.button(key="every_head").click().run()
    assert at.multiselect(key="heads").value == [str(h) for h in range(12)] and not at.exception


def test_head_view_focuses_a_token_as_the_key(open_page, bundled):
    text = "The cat sat on the mat"
    at = open_page(
        PAGE, text=text, attn_tab="Head view", attn_layer="1", head="3", focus="2 cat", focus_side="who attends to it"
    )
    assert not at.exception and at.radio(key="focus_side").value == "who attends to it"
    (view,) = specs(at)
    pairs = set().union(*(line_pairs(t) for t in view["data"] if t.get("mode") == "lines"))
    column = analyze(bundled, text).attentions[1, 3][:, 2]
    assert pairs == {(q, 2) for q in np.flatnonzero(column > 0)}  # every query that attends to "cat"
    strongest = int(np.argmax(column))  # in words: the query that gives "cat" the most
    labels = token_labels(analyze(bundled, text).encoding)
    assert_shows(
        plain_words(at), f"strongest line of 2 cat: {labels[strongest]} → 2 cat ({{}})", column[strongest], places=3
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"heads": ["99", "2"]}, "`heads` parameter (99)"),  # a bad value before a good one, too
        ({"focus_side": "sideways"}, "`focus_side` parameter"),
        ({"mean": "maybe"}, "`mean` parameter (maybe) is not true or false"),
    ],
)
def test_head_view_bad_link_values_get_a_message(open_page, params, message):
    at = open_page(PAGE, attn_tab="Head view", **params)
    assert not at.exception and message in warnings(at)
    assert len(specs(at)) == 1


@pytest.mark.parametrize("tab", ["Heatmap", "Head statistics", "Token focus"])
def test_each_tabs_content_is_inside_its_panel(open_page, tiny_pretraining_dir, tab):
    """Screen readers reach a tab's content through its panel; the Attention page drew it after the tab strip,
    outside every panel (a keyboard audit found eight empty panels)."""
    at = open_page(PAGE, tiny_pretraining_dir, text="The cat sat.", attn_tab=tab)
    panel = at.tabs[TABS.index(tab)]
    assert drawn_charts(panel) or panel.get("html")
    assert not [chart for chart in drawn_charts(at) if chart not in drawn_charts(panel)]


CAT = "The cat sat on the mat"


def test_heatmap_csv_is_the_models_matrix_with_queries_as_rows(open_page, bundled, csv_downloads):
    """ "Download this matrix (CSV)" gives encoder layer 2, head 6 as the model computes it: one row per query
    (named in the query column), one column per key; a transposed file reads every weight the wrong way round."""
    at = open_page(PAGE, text=CAT, layer="2", head="6")
    assert not at.exception
    attentions, encoding = model_attentions(bundled, CAT)
    labels = encoding["labels"]
    table = csv_downloads["attention-layer2-head6"]
    assert table["query"].tolist() == labels and list(table.columns[1:]) == labels
    weights = table.drop(columns="query").to_numpy(dtype=float)
    assert not np.allclose(attentions[2, 6], attentions[2, 6].T, atol=1e-3)  # a transposed file would differ
    np.testing.assert_allclose(weights, attentions[2, 6], atol=1e-6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)  # each query's row sums to 1


def test_heatmap_hover_names_the_query_row_and_the_key_column(open_page, bundled):
    """Hovering a cell says "query <row token>, key <column token>" and the cell's weight is that query's
    attention to that key: with x and y swapped the hover named the key as the query."""
    at = open_page(PAGE, text=CAT, layer="2", head="6")
    (heatmap,) = specs(at)
    trace = heatmap["data"][0]
    template = trace["hovertemplate"]
    assert (re.search(r"query %\{(\w)\}", template)[1], re.search(r"key %\{(\w)\}", template)[1]) == ("y", "x")
    assert "weight %{z" in template
    attentions, encoding = model_attentions(bundled, CAT)
    labels = encoding["labels"]
    assert trace["y"] == labels and trace["x"] == labels
    np.testing.assert_allclose(drawn_z(heatmap), attentions[2, 6], atol=1e-7)  # z[row = query][column = key]


def test_the_layer_sliders_help_says_what_an_encoder_layer_reads_and_writes(open_page):
    """One click away (its help), not a caption under the slider: encoder layer L reads hidden state L and writes
    L + 1, numbered from 0."""
    at = open_page(PAGE, text=CAT, layer="2", head="6")
    assert "encoder layer L reads hidden state L and writes hidden state L + 1" in at.slider(key="attn_layer").help
    assert not [c.value for c in at.caption if "reads hidden state" in c.value]


def thumbnail_ticks(spec: dict) -> tuple[dict[int, float], dict[int, float]]:
    """Where the overview's axes put each head (x) and each encoder layer (y): {number shown: coordinate}."""
    layout = spec["layout"]
    return tuple(
        dict(zip(listed(layout[axis]["ticktext"]), listed(layout[axis]["tickvals"]), strict=True))
        for axis in ("xaxis", "yaxis")
    )


def test_all_heads_numbers_from_0_and_outlines_the_chosen_head(open_page, bundled):
    """The thumbnails are numbered from 0 (heads 0-11, layers 0-5, as the sliders are), and the red outline sits
    on encoder layer 1, head 4: the thumbnail inside it is that head's attention from the model."""
    at = open_page(PAGE, text=CAT, layer="1", head="4", attn_tab="All heads")
    assert not at.exception
    (overview,) = specs(at)
    assert listed(overview["layout"]["xaxis"]["ticktext"]) == list(range(12))
    assert listed(overview["layout"]["yaxis"]["ticktext"]) == list(range(6))
    heads, layers = thumbnail_ticks(overview)
    [outline] = [s for s in overview["layout"]["shapes"] if s["type"] == "rect"]
    centre = ((outline["x0"] + outline["x1"]) / 2, (outline["y0"] + outline["y1"]) / 2)
    assert centre == pytest.approx((heads[4], layers[1]))
    attentions, _ = model_attentions(bundled, CAT)
    grid = drawn_z(overview)  # 8 tokens: every thumbnail is the whole 8 × 8 matrix
    rows = [r for r in range(grid.shape[0]) if outline["y0"] < r < outline["y1"]]
    columns = [c for c in range(grid.shape[1]) if outline["x0"] < c < outline["x1"]]
    np.testing.assert_allclose(grid[np.ix_(rows, columns)], attentions[1, 4], atol=1e-6)


def test_clicking_a_thumbnail_opens_that_head_in_the_heatmap(open_page, bundled):
    """A click on the thumbnail in row "encoder layer 1", column "head 4" opens encoder layer 1, head 4 in the
    heatmap (not layer 4, head 1), with the model's matrix."""
    at = open_page(PAGE, text=CAT, attn_tab="All heads")
    (overview,) = specs(at)
    heads, layers = thumbnail_ticks(overview)
    at = click_point(at, "overview_pick", point_at(overview, heads[4], layers[1]))
    assert not at.exception
    assert (at.slider(key="attn_layer").value, at.slider(key="head").value) == (1, 4)
    (heatmap,) = specs(at)
    assert chart_title(heatmap) == "Encoder layer 1, head 4"
    attentions, _ = model_attentions(bundled, CAT)
    np.testing.assert_allclose(drawn_z(heatmap), attentions[1, 4], atol=1e-7)


@pytest.mark.parametrize("forged", [[1, 99], [0, "4"], "14", [[1, 4]], {"layer": 1}, None, [1, 4, 0]])
def test_a_pick_no_point_of_the_chart_could_send_changes_nothing(open_page, forged):
    """Only a hand-made websocket message sends one: it raised in the session's callback (or selected a head the
    model does not have)."""
    at = open_page(PAGE, text=CAT, attn_tab="All heads")
    at = click_point(at, "overview_pick", {"customdata": forged})
    assert not at.exception
    assert (at.slider(key="attn_layer").value, at.slider(key="head").value) == (0, 0)


def statistics_of(bundle, text: str, text_b: str | None = None) -> dict[str, np.ndarray]:
    """Reference head statistics, (layers, heads) each: means over the text's own tokens as queries (no [CLS],
    no [SEP] row) of the attention to the [SEP] tokens, to the token just before, to the token just after."""
    attentions, encoding = model_attentions(bundle, text, text_b)
    queries = np.flatnonzero(encoding["text_rows"])  # never the first or the last position: those are special
    sep = encoding["ids"] == bundle.tokenizer.sep_token_id
    return {
        "sep": attentions[:, :, queries][..., sep].sum(axis=-1).mean(axis=-1),
        "previous": attentions[:, :, queries, queries - 1].mean(axis=-1),
        "next": attentions[:, :, queries, queries + 1].mean(axis=-1),
    }


@pytest.mark.parametrize(
    ("tab", "params"),
    [("Heatmap", {}), ("Token focus", {}), ("Compare", {"compare": "Call 911 or 112 later."})],
)
def test_token_axes_stay_one_label_per_token_when_the_tokens_look_like_numbers(open_page, tab, params):
    """Plotly reads labels such as "2 911" or "8 ." as numbers and turned the axis numeric: an empty grid with
    ticks -1 to 6 (browser review). Every token-labelled axis of the tab is a category axis."""
    at = open_page(PAGE, attn_tab=tab, text="Call 911 or 112 now.", **params)
    assert not at.exception
    token_axes = [
        (chart_title(spec), name, axis)
        for spec in specs(at)
        for name, axis in spec["layout"].items()
        if name.startswith(("xaxis", "yaxis")) and axis.get("title", {}).get("text", "").startswith(("key", "query"))
    ]
    assert token_axes  # the tab draws token axes
    assert all(axis.get("type") == "category" for _, _, axis in token_axes), token_axes


def test_statistics_heatmap_draws_each_heads_attention_to_sep(open_page, bundled):
    """The "To [SEP]" heatmap shows, in the row of encoder layer L and the column of head H, that head's mean
    attention to [SEP]: layers drawn upside down put layer 5's values in layer 0's row."""
    at = open_page(PAGE, attn_tab="Head statistics", stat="To [SEP]", **PAIR)
    assert not at.exception
    chart = specs(at)[0]
    assert chart_title(chart).startswith("To [SEP]")
    heatmap = chart["data"][0]
    assert listed(heatmap["y"]) == list(range(6)) and listed(heatmap["x"]) == list(range(12))
    expected = statistics_of(bundled, PAIR["text"], PAIR["b"])["sep"]
    np.testing.assert_allclose(drawn_z(chart), expected, atol=1e-6)
    assert chart["layout"]["height"] == 80 + 40 * 6


def test_a_small_models_statistics_grid_keeps_a_readable_height():
    """2 layers gave a 160 px chart whose colour scale's labels were printed over each other."""
    figure = statistics_figure(np.random.default_rng(0).random((2, 2)), "sep", None)
    assert figure.layout.height == MIN_STATISTICS_HEIGHT


def test_find_the_head_buttons_name_the_head_where_the_statistic_peaks(open_page, bundled):
    """Each "Find the head" button names the encoder layer and head where the model's statistic is largest, and
    its value: with layer and head swapped, "Next word" named head 1 of layer 8 (this model has 6 layers)."""
    at = open_page(PAGE, attn_tab="Head statistics", **PAIR)
    assert not at.exception
    labels = {b.key: b.label for b in at.button}
    stats = statistics_of(bundled, PAIR["text"], PAIR["b"])
    found = {}
    for key, name, statistic in (
        ("sep", "[SEP] sink", "To [SEP]"),
        ("previous", "Previous word", "To previous token"),
        ("next", "Next word", "To next token"),
    ):
        layer, head = np.unravel_index(np.argmax(stats[key]), stats[key].shape)
        found[key] = (layer, head)
        expected = f"{name}: encoder layer {layer}, head {head} ({statistic}: {{}})"
        assert_shows(labels[f"find_{key}"], expected, stats[key][layer, head], places=2)
    assert any(layer != head for layer, head in found.values())  # else a swap would go unseen


def test_token_focus_bars_show_where_the_token_looks(open_page, bundled):
    """The Token focus bars are the chosen token's own row of the matrix (how much it attends to each key), not
    its column (how much each token attends to it)."""
    at = open_page(PAGE, tab="Token focus", layer="4", head="1")
    assert not at.exception
    text = at.text_input(key="text").value
    token = at.selectbox(key="token").value
    attentions, encoding = model_attentions(bundled, text)
    labels = encoding["labels"]
    bars = specs(at)[0]["data"][0]
    assert listed(bars["x"]) == labels
    row = attentions[4, 1, token]
    assert not np.allclose(row, attentions[4, 1, :, token], atol=1e-3)  # the column would differ
    np.testing.assert_allclose(listed(bars["y"]), row, atol=1e-6)


def test_head_view_focuses_a_token_as_the_query_with_every_line(open_page, bundled):
    """Focusing "cat" on what it attends to draws a line to every key it gives any weight, the faint ones (under
    0.02) too, and the words name its strongest key with that weight."""
    at = open_page(
        PAGE, text=CAT, attn_tab="Head view", attn_layer="1", head="3", focus="2 cat", focus_side="what it attends to"
    )
    assert not at.exception and at.radio(key="focus_side").value == "what it attends to"
    (view,) = specs(at)
    pairs = set().union(*(line_pairs(t) for t in view["data"] if t.get("mode") == "lines"))
    attentions, encoding = model_attentions(bundled, CAT)
    row, column = attentions[1, 3, 2], attentions[1, 3, :, 2]
    assert ((row > 0) & (row < 0.02)).any()  # faint lines exist to be lost
    assert pairs == {(2, k) for k in np.flatnonzero(row > 0)}
    labels = encoding["labels"]
    strongest = int(np.argmax(row))
    assert strongest != int(np.argmax(column))  # the strongest query of "cat" is another token
    assert_shows(
        plain_words(at), f"strongest line of 2 cat: 2 cat → {labels[strongest]} ({{}})", row[strongest], places=3
    )


def test_several_heads_focused_on_a_token_make_line_plural_not_the_token(open_page):
    """With all heads drawn, the words read "strongest line of 10 its": the plural went on the token."""
    heads = {"heads": ["0", "1", "2", "3"]}
    at = open_page(PAGE, text=CAT, attn_tab="Head view", focus="2 cat", **heads)
    assert not at.exception
    said = plain_words(at)
    assert "strongest lines of 2 cat: head 0: " in said and "2 cats" not in said, said


def test_clicking_a_token_in_the_head_view_focuses_it_on_that_side(open_page, bundled):
    """A click on "cat" in the right-hand (key) column focuses it as the key: who attends to it; a click on "sat"
    in the left-hand (query) column focuses that one as the query: what it attends to."""
    at = open_page(PAGE, text=CAT, attn_tab="Head view", attn_layer="1", head="3")
    attentions, _ = model_attentions(bundled, CAT)
    (view,) = specs(at)
    at = click_point(at, "head_view_pick", point_at(view, 1, 2))  # x 1: the keys, y 2: "cat"
    assert not at.exception
    assert at.selectbox(key="focus").value == 2 and at.radio(key="focus_side").value == "who attends to it"
    (view,) = specs(at)
    pairs = set().union(*(line_pairs(t) for t in view["data"] if t.get("mode") == "lines"))
    assert pairs == {(q, 2) for q in np.flatnonzero(attentions[1, 3, :, 2] > 0)}
    at = click_point(at, "head_view_pick", point_at(view, 0, 3))  # x 0: the queries, y 3: "sat"
    assert at.selectbox(key="focus").value == 3 and at.radio(key="focus_side").value == "what it attends to"
    (view,) = specs(at)
    pairs = set().union(*(line_pairs(t) for t in view["data"] if t.get("mode") == "lines"))
    assert pairs == {(3, k) for k in np.flatnonzero(attentions[1, 3, 3] > 0)}
