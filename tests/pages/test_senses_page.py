"""Word senses page, opened on its own with URL parameters (as a shared link opens it)."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from sklearn.metrics.pairwise import cosine_distances, cosine_similarity, euclidean_distances
from transformers import AutoTokenizer

from bertlens.models import BUNDLED_MODEL, bundled_model_path
from bertlens.sense_presets import PRESETS
from bertlens.senses import stress_verdict
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from components.services.text import literal
from components.ui.palette import INK
from components.views.senses.sections import TABS
from tests.conftest import assert_shows, chart_title, drawn_charts, tables
from tests.core.test_senses import COARSE_CLASSES, COARSE_DATA, COARSE_GOLD, model_vectors
from tests.pages.test_attention_page import typed

PAGE = "pages/senses.py"


def coordinates(at):
    return next(d for d in tables(at) if {"x", "y", "sense"} <= set(d.columns))


def messages(at, kind):
    return " ".join(str(e.value) for e in getattr(at, kind))


def test_link_with_word_preset_and_layer_reproduces_the_view(open_page, bundled):
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", word="python", layer="last4", text="I feed my python mice")
    assert not at.exception, at.exception
    assert at.selectbox(key="preset").value == "python"
    assert at.selectbox(key="senses_layer").value == "last4"
    assert at.text_input(key="senses_word").value == "python"
    assert at.text_input(key="refs").value == "snake, programming"
    assert at.text_input(key="text").value == "I feed my python mice"
    assert "mean of the last 4 hidden states (3–6, after encoder layers 2–5)" in messages(at, "caption")
    assert not at.warning and not at.error
    points = coordinates(at)
    preset = PRESETS["python"]
    # Every preset sentence is a point, and the shared sentence joins as "your sentence".
    assert list(points.sentence) == [s.sentence for s in preset.sentences] + ["I feed my python mice"]
    assert list(points.sense)[-1] == "your sentence"
    # Plotted coordinates = PCA of the model's own vectors (mean of the last 4 hidden states) at the word.
    tok = bundled.tokenizer
    reference = []
    for sentence in points.sentence:
        enc = tok(sentence, return_tensors="pt")
        position = enc["input_ids"][0].tolist().index(tok.convert_tokens_to_ids("python"))
        with torch.no_grad():
            hidden = bundled.model.bert(**enc, output_hidden_states=True).hidden_states
        reference.append(torch.stack(hidden[-4:])[:, 0, position].mean(0).numpy())
    # The axes are the preset sentences' own: "your sentence" is placed on their map, not fitted with it.
    expected = PCA(n_components=2).fit(np.stack(reference[:-1])).transform(np.stack(reference))
    for axis, column in enumerate("xy"):
        ours = points[column].to_numpy()
        np.testing.assert_allclose(np.sign(ours @ expected[:, axis]) * ours, expected[:, axis], atol=1e-4)


def test_a_word_typed_with_its_accent_apart_is_found_in_every_sentence(open_page):
    """Word senses said "café" (its accent typed as a combining mark) was "not found" in three sentences that
    plainly had it (an audit of international input): an uncased model reads them all as "cafe"."""
    lines = "\n".join(["The cafe\u0301 was full. | place", "We met at the café. | place", "A CAFE opened. | place",
                       "I drank a cafe\u0301 au lait. | drink"])  # fmt: skip
    at = open_page(PAGE, BUNDLED_MODEL, source="Paste lines", senses_word="cafe\u0301", senses_lines=lines)
    assert not [w.value for w in at.warning if "not found" in w.value]
    assert list(coordinates(at).sense) == ["place", "place", "place", "drink"]


def test_your_sentence_with_the_word_only_past_the_cut_says_so(open_page):
    """QA: "Your own sentence has no “bank”", for a sentence whose bank comes after the tokens the model reads."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="bank", text="word " * 600 + "bank")
    said = " ".join(c.value for c in at.caption)
    assert "Your own sentence's “bank” comes after the first 512 tokens, which are all the model reads" in said, said
    assert "has no “bank”" not in said and "your sentence" not in list(coordinates(at).sense)
    # A listed sentence the same: its "not found" says it was cut
    lines = "\n".join(["word " * 600 + "bank | money", "the bank of the river | river", "a bank loan | money"])
    at = open_page(PAGE, BUNDLED_MODEL, source="Paste lines", senses_word="bank", senses_lines=lines)
    warned = " ".join(w.value for w in at.warning)
    assert "not found (as a whole word) in 1 of 3 sentences" in warned
    assert "(cut: the model reads only its start, and the word may come after)" in warned


@pytest.mark.parametrize("projection", ["PCA 2D", "PCA 3D"])
def test_your_sentence_lands_on_the_map_without_moving_it(open_page, projection):
    """QA: typing a sentence refitted the PCA, and on the bank preset every money point jumped across the x axis."""
    before = coordinates(open_page(PAGE, BUNDLED_MODEL, preset="bank", senses_layer="4", projection=projection))
    at = open_page(
        PAGE,
        BUNDLED_MODEL,
        preset="bank",
        senses_layer="4",
        projection=projection,
        text="I sat on the bank of the river.",
    )
    after = coordinates(at)
    assert list(after.sense)[-1] == "your sentence" and len(after) == len(before) + 1
    axes = [c for c in "xyz" if c in before.columns]
    np.testing.assert_allclose(after[axes].to_numpy()[:-1], before[axes].to_numpy(), atol=1e-9)


def test_your_sentence_is_marked_in_3d_too(open_page):
    """A 3D chart has no star symbol: the student's own sentence once crashed PCA 3D."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="field", text="I walked across the field.", projection="PCA 3D")
    assert not at.exception, at.exception
    points = coordinates(at)
    assert list(points.sense)[-1] == "your sentence" and "z" in points.columns
    [chart] = [c for c in drawn_charts(at) if "scatter3d" in c.spec]
    assert '"symbol":"diamond"' in chart.spec.replace(" ", "")
    assert '"dragmode":"turntable"' in chart.spec.replace(" ", "")  # it turns by dragging (review)
    # seen from further than plotly's default camera (eye 1.25 each way), which cut the axis titles at the edges
    assert json.loads(chart.spec)["layout"]["scene"]["camera"]["eye"] == {"x": 1.6, "y": 1.6, "z": 1.4}


def test_your_sentence_without_the_word_is_said_to_be_left_out(open_page):
    """It was left off the map in silence: a student who typed a sentence looked for its star in vain."""
    left_out = "Your own sentence has no “field” (as a whole word), so it is not on the map."
    at = open_page(PAGE, BUNDLED_MODEL, preset="field", text="I walked across the meadow.")
    assert left_out in messages(at, "caption")
    assert "your sentence" not in set(coordinates(at).sense)
    at = open_page(PAGE, BUNDLED_MODEL, preset="field", text="I walked across the field.")
    assert left_out not in messages(at, "caption")
    assert list(coordinates(at).sense)[-1] == "your sentence"
    at = open_page(PAGE, BUNDLED_MODEL, preset="field")  # no sentence of the student's: the box is empty
    assert at.text_input(key="text").value == "" and left_out not in messages(at, "caption")
    assert "your sentence" not in set(coordinates(at).sense)


def test_any_two_axes_of_the_3d_map_are_drawn_flat_by_keyboard_and_link(open_page):
    """Dragging was the only way to turn the 3D map (WCAG 2.1.1): a radio draws any pair of its axes flat, from
    the link too, with the same coordinates as the 3D map and its table."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="field", projection="PCA 3D")
    [chart] = drawn_charts(at)
    fig = json.loads(chart.spec)
    assert {fig["layout"]["scene"][axis]["color"] for axis in ("xaxis", "yaxis", "zaxis")} == {INK}  # WebGL text
    three_d = {trace["name"]: trace for trace in fig["data"]}

    at = open_page(PAGE, BUNDLED_MODEL, preset="field", projection="PCA 3D", senses_axes="PC1 × PC3")
    assert not at.exception, at.exception
    assert at.radio(key="senses_axes").value == "PC1 × PC3"
    [chart] = drawn_charts(at)
    flat = json.loads(chart.spec)
    assert {trace["type"] for trace in flat["data"]} == {"scatter"} and len(flat["data"]) == len(three_d)
    for trace in flat["data"]:
        np.testing.assert_allclose(typed(trace["x"]), typed(three_d[trace["name"]]["x"]))  # PC1
        np.testing.assert_allclose(typed(trace["y"]), typed(three_d[trace["name"]]["z"]))  # PC3
    layout = flat["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("PC1 (") and layout["yaxis"]["title"]["text"].startswith("PC3 (")
    assert chart_title({"layout": layout}).endswith("PCA 3D seen flat: PC1 × PC3")
    assert {"x", "y", "z"} <= set(coordinates(at).columns)  # the table keeps all three

    bad = open_page(PAGE, BUNDLED_MODEL, preset="field", projection="PCA 3D", senses_axes="from below")
    assert any("`senses_axes` parameter" in w.value for w in bad.warning)
    two_d = open_page(PAGE, BUNDLED_MODEL, preset="field")
    assert "senses_axes" not in [radio.key for radio in two_d.radio]  # PCA 2D: no axes to pick


def test_line_breaks_in_a_linked_word_become_spaces(open_page):
    """The word and the reference words are one-line inputs in columns: a link's line break is a space there."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="bank", refs="money,\rriver")
    assert at.text_input(key="refs").value == "money, river"


def test_preset_link_alone_uses_the_presets_word(open_page, bundled):
    at = open_page(PAGE, BUNDLED_MODEL, preset="bank", layer="0", projection="MDS 2D")
    assert not at.exception
    assert at.text_input(key="senses_word").value == "bank"
    assert at.radio(key="projection").value == "MDS 2D"
    assert len(coordinates(at)) == len(PRESETS["bank"].sentences)
    assert "hidden state 0 (embeddings output)" in messages(at, "caption")
    assert "MDS approximates the cosine distances in 2D" in messages(at, "caption")
    assert "keeps cosine distances" not in at.radio(key="projection").help
    sentences = tuple(s.sentence for s in PRESETS["bank"].sentences)
    # Kruskal's stress-1 of the map drawn, against the cosine distances of the model's own hidden state 0
    wanted = cosine_distances(model_vectors(bundled, sentences, "bank")[:, 0])
    drawn = euclidean_distances(coordinates(at)[["x", "y"]].to_numpy(float))
    pairs = np.triu_indices(len(sentences), 1)
    stress = np.sqrt(((wanted[pairs] - drawn[pairs]) ** 2).sum() / (drawn[pairs] ** 2).sum())
    assert_shows(messages(at, "caption"), f"Stress-1 (Kruskal): **{{}}** ({stress_verdict(stress)})", stress, places=3)
    # the verdict and the scale beside it agree (0.111 was "poor" beside "≤ 0.1 fair, above 0.2 poor")
    assert "≤ 0.025 excellent, ≤ 0.05 good, ≤ 0.1 fair, ≤ 0.2 poor, above that bad" in messages(at, "caption")


def test_missing_word_warning_lists_the_sentences(open_page):
    at = open_page(PAGE, BUNDLED_MODEL, preset="field", word="on")
    assert not at.exception
    warning = messages(at, "warning")
    assert "not found (as a whole word) in 4 of 8 sentences" in warning
    for item in PRESETS["field"].sentences[4:]:  # the four without "on"
        assert literal(item.sentence) in warning
    assert len(coordinates(at)) == 4  # "on" in the football, rugby and baseball sentences


def test_bad_links_get_messages_not_exceptions(open_page):
    at = open_page(PAGE, BUNDLED_MODEL, preset="nope", layer="99", projection="x", word="zzz")
    assert not at.exception
    warning = messages(at, "warning")
    assert "`preset` parameter" in warning and "`layer` parameter" in warning and "`projection` parameter" in warning
    assert "not found (as a whole word) in any of the sentences" in warning
    assert not tables(at)  # nothing to plot

    at = open_page(PAGE, BUNDLED_MODEL, word="<b>x</b>")
    assert not at.exception and "“" + literal("<b>x</b>") + "” was not found" in messages(at, "warning")


FIELD_REFERENCES_FOR_BANK = (
    "The reference words pitch, farm, science are the “field” preset's example words, chosen for “field”; "
    "for “bank”, type your own above, such as a word for each of its senses."
)


def test_the_reference_words_note_names_them_and_shows_only_while_they_are_the_presets(open_page, bundled):
    at = open_page(PAGE, BUNDLED_MODEL, senses_word="bank")  # the field preset's sentences, another word
    assert FIELD_REFERENCES_FOR_BANK in messages(at, "caption")
    at.text_input(key="refs").input(" pitch,farm , science").run()  # the same words, typed otherwise
    assert FIELD_REFERENCES_FOR_BANK in messages(at, "caption")
    at.text_input(key="refs").input("pitch, farm").run()
    assert "preset's example words" not in messages(at, "caption")
    at = open_page(PAGE, BUNDLED_MODEL, preset="bank", senses_word="river")
    assert "The reference words money, river are the “bank” preset's example words" in messages(at, "caption")
    assert "preset's example words" not in messages(open_page(PAGE, BUNDLED_MODEL, preset="bank"), "caption")


def test_pasted_lines_and_their_errors(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir, source="Paste lines", word="bank", layer="last4")
    assert not at.exception
    assert "`layer` parameter" in messages(at, "warning")  # the tiny model has 2 layers
    assert at.selectbox(key="senses_layer").options == ["0", "1", "2", "last2"]
    at.text_area(key="senses_lines").input(
        "The bank is open. | money\nThe river bank. | river\nA bank loan. | money"
    ).run()
    assert not at.exception and len(coordinates(at)) == 3
    # The reference words are still the field preset's: said beside them, until the student types others. (It said
    # "These are the “field” preset's": under pasted sentences about a bank it read as if those were the preset's.)
    notice = FIELD_REFERENCES_FOR_BANK
    assert notice in messages(at, "caption") and "These are" not in messages(at, "caption")
    at.text_input(key="senses_word").input("").run()
    assert "preset's example words" not in messages(at, "caption")  # no word: nothing to type references for
    at.text_input(key="senses_word").input("bank").run()
    assert notice in messages(at, "caption")
    at.text_input(key="refs").input("money, river").run()
    assert notice not in messages(at, "caption")
    at.text_area(key="senses_lines").input("one | two | three\nok").run()
    assert "Line 1 has more than one" in messages(at, "error") and not tables(at)
    at.text_area(key="senses_lines").input("Only one bank here. | money").run()
    assert "at least two sentences" in messages(at, "info")
    at.text_input(key="senses_word").input("  ").run()
    assert "Type the word to look for" in messages(at, "info")


def test_uploaded_csv(open_page, tiny_pretraining_dir):
    at = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV", word="apple")
    assert "Choose a CSV file" in messages(at, "info")
    at.file_uploader(key="csv_upload").set_value(
        ("s.csv", b"sentence,sense\nAn apple pie.,fruit\nApple shares.,company\n", "text/csv")
    ).run()
    assert not at.exception and list(coordinates(at).sense) == ["fruit", "company"]
    at.file_uploader(key="csv_upload").set_value(("s.csv", b"text\nAn apple pie.\n", "text/csv")).run()
    assert "`sentence` column" in messages(at, "error") and not tables(at)


def test_an_upload_over_the_budget_is_drawn_at_random_from_the_whole_file(open_page, tiny_pretraining_dir, monkeypatch):
    """A CoarseWSD-20 file can list its senses one after another: its first 50 sentences were all one sense. Seed
    001 draws its sentences at random; so does the page, the same draw every time, and says so."""
    monkeypatch.setenv("BERTLENS_MAX_SENTENCES", "50")
    monkeypatch.setenv("BERTLENS_MAX_OCCURRENCES", "100")
    count = 120
    data = "".join(f"3\tI ate apple number {n} today.\n" for n in range(count)).encode()
    gold = "".join("1\n" if n < count // 2 else "0\n" for n in range(count)).encode()  # fruit first, then Inc
    at = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV", senses_word="apple")
    files = [("train.data.txt", data, "text/plain"), ("train.gold.txt", gold, "text/plain")]
    at.file_uploader(key="csv_upload").set_value(files).run()
    assert not at.exception, at.exception
    assert f"{count} different sentences uploaded; 50 of them are drawn at random" in messages(at, "warning")
    drawn = coordinates(at)
    assert len(drawn) == 50 and set(drawn.sense) == {"0", "1"}  # both senses, from the whole file
    numbers = [int(sentence.split("number ")[1].split()[0]) for sentence in drawn.sentence]
    assert numbers == sorted(numbers) and max(numbers) >= count // 2  # in the file's order, past its first half
    again = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV", senses_word="apple")
    again.file_uploader(key="csv_upload").set_value(files).run()
    assert coordinates(again).sentence.tolist() == drawn.sentence.tolist()  # the same draw


def test_coarsewsd_files_as_seed_001_uses_them(open_page, tiny_pretraining_dir):
    """Seed 001 maps CoarseWSD-20's real "apple" sentences: its data and gold files (and the senses' names) load."""
    at = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV", word="apple")
    at.file_uploader(key="csv_upload").set_value(
        [
            ("train.data.txt", COARSE_DATA, "text/plain"),
            ("train.gold.txt", COARSE_GOLD, "text/plain"),
            ("classes_map.txt", COARSE_CLASSES, "text/plain"),
        ]
    ).run()
    assert not at.exception and list(coordinates(at).sense) == ["apple_fruit", "apple_inc", "apple_fruit"]
    at.file_uploader(key="csv_upload").set_value([("train.data.txt", COARSE_DATA, "text/plain")]).run()
    assert "CoarseWSD-20's files for one word" in messages(at, "error") and not tables(at)
    at.file_uploader(key="csv_upload").set_value([(f"{n}.csv", b"sentence\nAn apple.\n", "text/csv") for n in range(4)])
    assert "4 files are chosen; this takes at most 3. Remove some. Choose a CSV file" in messages(
        at.run(), "error"
    ) and not tables(at)


def test_coarsewsd_files_bring_their_word_once(open_page, tiny_pretraining_dir):
    """After seed 001's files were uploaded the word to follow stayed the preset's "field", found in none of them;
    the files name their word only by its positions. A link does not carry the files: the page says so."""
    at = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV")
    files = [("train.data.txt", COARSE_DATA, "text/plain"), ("train.gold.txt", COARSE_GOLD, "text/plain")]
    at.file_uploader(key="csv_upload").set_value(files).run()
    assert not at.exception and at.text_input(key="senses_word").value == "apple"
    assert at.query_params["senses_word"] == "apple" and len(coordinates(at)) == 3
    assert "the word at the files' word positions" in messages(at, "caption")
    assert "Uploaded files stay in this tab, not in the link" in messages(at, "caption")
    at.text_input(key="senses_word").input("ate").run()  # the student's own choice stays
    assert at.text_input(key="senses_word").value == "ate" and "files' word positions" not in messages(at, "caption")


def test_sentence_cap_is_explained(open_page, monkeypatch, tiny_pretraining_dir):
    monkeypatch.setenv("BERTLENS_MAX_SENTENCES", "3")
    at = open_page(PAGE, tiny_pretraining_dir, preset="apple")
    assert not at.exception
    assert "12 sentences given; only the first 3 are read" in messages(at, "warning")
    assert len(coordinates(at)) == 3


def test_each_tab_opens_from_the_link_and_draws_only_itself(open_page):
    drawn = {}
    for tab in TABS:
        at = open_page(PAGE, BUNDLED_MODEL, preset="bank", senses_tab=tab)
        assert not at.exception, (tab, at.exception)
        assert at.tabs and [t.label for t in at.tabs] == list(TABS)
        drawn[tab] = len(drawn_charts(at)), len(tables(at))
    assert drawn["Map"] == (1, 1)  # the map and its coordinates: nothing of the other tabs
    assert (
        drawn["Separation by layer"][0] == 1 and drawn["Similarity"][0] == 1 and drawn["Static vs contextual"][0] == 1
    )
    assert drawn["Reference words"][0] == 0 and drawn["Reference words"][1] >= 1


def test_separation_and_similarity_charts_offer_their_numbers(open_page, csv_downloads, bundled):
    charts, words, labels, traces = {}, {}, {}, {}
    for tab in ("Separation by layer", "Similarity"):
        at = open_page(PAGE, BUNDLED_MODEL, preset="bank", senses_tab=tab)
        (figure,) = [json.loads(c.spec) for c in drawn_charts(at)]
        traces[tab], labels[tab] = figure["data"], figure["layout"].get("annotations", [])
        charts[tab] = traces[tab][0]
        words[tab] = " ".join(c.value for c in at.caption if c.value.startswith("In words"))
    separation = csv_downloads["senses-bank-separation"]
    # The bundled encoder: hidden states 0 to 6, then the means of the last 2, 3 and 4 (seed 001's exercise).
    assert separation["hidden state"].astype(str).tolist() == [
        *map(str, range(7)),
        *(f"mean of the last {k}" for k in (2, 3, 4)),
    ]
    np.testing.assert_allclose(separation["silhouette"][:7], charts["Separation by layer"]["y"], atol=1e-9)
    # Against scikit-learn on the model's own hidden states of "bank" (one occurrence per sentence).
    bundle = bundled
    states, senses = [], []
    for item in PRESETS["bank"].sentences:
        inputs = bundle.tokenizer(item.sentence, return_tensors="pt")
        with torch.no_grad():
            hidden = torch.stack(bundle.model.bert(**inputs, output_hidden_states=True).hidden_states)[:, 0]
        states.append(hidden[:, inputs.input_ids[0].tolist().index(bundle.tokenizer.convert_tokens_to_ids("bank"))])
        senses.append(item.sense)
    states = torch.stack(states).numpy()  # (sentences, hidden states, hidden)
    expected = [silhouette_score(states[:, h], senses, metric="cosine") for h in range(7)]
    expected += [silhouette_score(states[:, -k:].mean(axis=1), senses, metric="cosine") for k in (2, 3, 4)]
    np.testing.assert_allclose(separation["silhouette"], expected, atol=1e-4)
    assert literal(f"last 2 {separation['silhouette'].iloc[7]:.3f}") in words["Separation by layer"]  # the means
    # Each mean a trace of its own, named in the legend and drawn in a shape of its own, at the middle of the hidden
    # states it averages: labels on the chart sat on each other's bars (field: "last 4" on the last-3 bar).
    means = separation["silhouette"].iloc[7:].tolist()
    drawn = [(t["name"], t["y"], t["x"], t["marker"]["symbol"]) for t in traces["Separation by layer"][1:]]
    assert drawn == [
        ("mean of the last 2", [means[0]], [5.5], "diamond"),
        ("mean of the last 3", [means[1]], [5.0], "square"),
        ("mean of the last 4", [means[2]], [4.5], "triangle-up"),
    ]
    assert not labels["Separation by layer"]
    similarity = csv_downloads["senses-bank-similarity"]
    assert (
        len(similarity) == len(similarity.columns) - 1 == len(PRESETS["bank"].sentences)
        and similarity["point"].tolist() == similarity.columns[1:].tolist()
    )
    np.testing.assert_allclose(similarity.iloc[:, 1:].to_numpy(), typed(charts["Similarity"]["z"]), atol=1e-6)


def test_static_panel_on_a_cased_model_compares_like_with_like(open_page, tmp_path):
    """On a cased model "Field" and "field" are different tokens: the panel says so and compares within one spelling."""
    folder = save_random_bert(tmp_path / "tiny-cased", random_bert_config(**TINY_CONFIG))
    AutoTokenizer.from_pretrained(bundled_model_path(), do_lower_case=False).save_pretrained(folder)
    lines = "Field hockey is fun. | sport\nThe field is green. | land\nA field of wheat. | land\nField work. | work"
    at = open_page(PAGE, folder, source="Paste lines", word="field", lines=lines, senses_tab="Static vs contextual")
    assert not at.exception, at.exception
    assert "occurs as 2 different token sequences" in messages(at, "info")
    table = next(d for d in tables(at) if "all pairs" in d.columns)
    assert abs(table["all pairs"].iloc[0] - 1.0) < 1e-6  # static: Field–Field and field–field pairs only
    assert "**1.000 for every pair**" in messages(at, "markdown")


def test_a_reference_word_the_vocabulary_cannot_spell_is_named(open_page):
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_tab="Reference words", refs="snake, 👩")
    assert not at.exception
    warned = messages(at, "warning")
    assert "Not in the vocabulary: 👩 became [UNK]" in warned and "snake" not in warned


def test_the_link_holds_the_presets_word_only_when_changed(open_page):
    """The preset's word and reference words are its defaults: a bare visit wrote them into the link (two more
    steps in the browser's history for every student who opened the page)."""
    at = open_page(PAGE)
    assert not at.exception and "senses_word" not in at.query_params and "refs" not in at.query_params
    at = open_page(PAGE, preset="bank")
    assert at.text_input(key="senses_word").value == "bank" and "senses_word" not in at.query_params
    at.text_input(key="senses_word").set_value("river").run()
    assert at.query_params["senses_word"] == "river"


def test_a_shared_sentence_b_is_said_to_be_unread(open_page):
    """A B from another page stays in the link; Word senses, which reads no B, now says so (as Fill-mask does)."""
    note = "Sentence B, from another page, is not read here"
    at = open_page(PAGE, BUNDLED_MODEL, preset="bank", b="It was muddy.")
    assert not at.exception and any(note in c.value for c in at.caption)
    assert not any(note in c.value for c in open_page(PAGE, BUNDLED_MODEL, preset="bank").caption)


def test_points_on_one_spot_are_named_with_the_reason(open_page):
    """At hidden state 0 the apple preset's 12 points showed as 4 marks and nothing said why (lessons audit): the
    same word at the same position has the same vector there. The groups named are those the model gives."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="apple", senses_layer="0")
    assert not at.exception
    points = coordinates(at)
    spots = points.groupby([points.x.round(4), points.y.round(4)])["point"].apply(tuple)
    groups = [g for g in spots if len(g) > 1]
    assert groups, "the preset no longer has points on one spot: this test would test nothing"
    [said] = [c.value for c in at.caption if c.value.startswith("Some points lie exactly on others")]
    assert f"the map shows {len(spots)} marks for {len(points)} points" in said
    assert all(f"points {', '.join(map(str, sorted(g)))}" in said for g in groups)
    assert "At hidden state 0 a point is the word's embedding plus its position's" in said
    at = open_page(PAGE, BUNDLED_MODEL, preset="apple")  # the last hidden state: every point its own
    assert not any(c.value.startswith("Some points lie") for c in at.caption)
    lines = "I sat by the bank of the river. | river\nI SAT BY THE BANK OF THE RIVER. | river\nThe bank raised rates. | money"
    at = open_page(PAGE, BUNDLED_MODEL, source="Paste lines", senses_lines=lines, senses_word="bank")
    [said] = [c.value for c in at.caption if c.value.startswith("Some points lie exactly on others")]
    assert "points 1, 2" in said and "as the same tokens" in said and "hidden state 0" not in said  # not position


# ---------------------------------------------------------------- against the model's own hidden states


def read_alone(bundle, word: str) -> np.ndarray:
    """(hidden states, hidden): ``word`` read on its own, the mean of its pieces between [CLS] and [SEP]."""
    inputs = bundle.tokenizer(word, return_tensors="pt")
    with torch.no_grad():
        hidden = bundle.model.bert(**inputs, output_hidden_states=True).hidden_states
    return torch.stack(hidden)[:, 0, 1:-1].mean(dim=1).numpy()


PYTHON = [s.sentence for s in PRESETS["python"].sentences]
PYTHON_SENSES = [s.sense for s in PRESETS["python"].sentences]


def test_the_separation_caption_gives_the_chosen_hidden_states_silhouette(open_page, bundled):
    """ "Silhouette at hidden state 2: …" gave another hidden state's score."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_layer="2", senses_tab="Separation by layer")
    assert not at.exception, at.exception
    states = model_vectors(bundled, PYTHON, "python")
    expected = silhouette_score(states[:, 2], PYTHON_SENSES, metric="cosine")
    last = silhouette_score(states[:, -1], PYTHON_SENSES, metric="cosine")
    assert abs(expected - last) > 1e-3  # else this test could not tell the layers apart
    [said] = [c.value for c in at.caption if c.value.startswith("Silhouette at hidden state 2")]
    assert_shows(said, ": {}. It runs from −1 to 1", expected, places=3)


def test_the_similarity_heatmap_is_the_chosen_hidden_states_cosines_with_labels_that_match(open_page, bundled):
    """At hidden state 0 the heatmap showed the last hidden state's cosines; and once its rows were grouped by
    sense, the axis labels stayed in the sentences' order (python's snake sentences come first, so grouping moves
    them): a cell named "1. snake ↔ 7. programming language" showed another pair's cosine."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_layer="0", senses_tab="Similarity")
    assert not at.exception, at.exception
    [spec] = [json.loads(c.spec)["data"][0] for c in drawn_charts(at)]
    reference = cosine_similarity(model_vectors(bundled, PYTHON, "python")[:, 0])
    order = sorted(range(len(PYTHON)), key=lambda i: PYTHON_SENSES[i])
    assert order != list(range(len(PYTHON)))  # the preset is not already grouped: the labels must move with z
    names = [f"{i + 1}. {PYTHON_SENSES[i]}" for i in order]
    assert spec["x"] == spec["y"] == names
    z = typed(spec["z"])
    np.testing.assert_allclose(z, reference[np.ix_(order, order)], atol=1e-5)
    # each cell is the cosine of the two points its labels name
    point = [int(name.split(".")[0]) - 1 for name in spec["x"]]
    np.testing.assert_allclose(z, reference[np.ix_(point, point)], atol=1e-5)
    assert not np.allclose(reference, cosine_similarity(model_vectors(bundled, PYTHON, "python")[:, -1]), atol=1e-3)


def test_the_nearest_neighbours_are_the_most_similar_other_points(open_page, bundled):
    """Neighbour numbers were one off: point 3's neighbour "4" was point 5's sentence."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_tab="Similarity")
    table = next(d for d in tables(at) if "neighbour" in d.columns)
    reference = cosine_similarity(model_vectors(bundled, PYTHON, "python")[:, -1])
    np.fill_diagonal(reference, -np.inf)
    nearest = np.argsort(-reference, axis=1, kind="stable")[:, :3]
    assert table["point"].tolist() == [p for p in range(1, len(PYTHON) + 1) for _ in range(3)]
    assert table["neighbour"].tolist() == (nearest + 1).ravel().tolist()
    np.testing.assert_allclose(table["cosine"], np.take_along_axis(reference, nearest, axis=1).ravel(), atol=1e-5)
    assert table["neighbour sense"].tolist() == [PYTHON_SENSES[j] for j in nearest.ravel()]
    (heatmap,) = [c for c in drawn_charts(at) if "Cosine similarity" in c.spec]
    layout = json.loads(heatmap.spec)["layout"]  # one label per point, whatever a sense label looks like
    assert layout["xaxis"]["type"] == layout["yaxis"]["type"] == "category"


def test_the_reference_word_cosines_are_at_the_chosen_hidden_state(open_page, bundled):
    """The reference words were read at hidden state 0 whatever the choice, and the per-sense table gave each
    sense's highest cosine, not its mean."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_layer="2", senses_tab="Reference words")
    assert not at.exception, at.exception
    refs = PRESETS["python"].references
    columns = [f"cosine with “{r}”" for r in refs]
    alone = np.stack([read_alone(bundled, r)[2] for r in refs])
    reference = pd.DataFrame(
        cosine_similarity(model_vectors(bundled, PYTHON, "python")[:, 2], alone), columns=columns
    ).assign(sense=PYTHON_SENSES)
    every = next(d for d in tables(at) if "sentence" in d.columns and columns[0] in d.columns)
    assert every["sense"].tolist() == PYTHON_SENSES
    np.testing.assert_allclose(every[columns].to_numpy(dtype=float), reference[columns].to_numpy(), atol=1e-5)
    per_sense = next(d for d in tables(at) if columns[0] in d.columns and "sentence" not in d.columns)
    expected = reference.groupby("sense")[columns].mean()
    np.testing.assert_allclose(
        per_sense.set_index("sense").loc[expected.index, columns].to_numpy(dtype=float), expected.to_numpy(), atol=1e-5
    )


def test_the_static_panel_gives_the_contextual_range_at_the_chosen_hidden_state(open_page, bundled):
    """The contextual vectors' range repeated the static one ("1.000 for every pair" twice)."""
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_layer="2", senses_tab="Static vs contextual")
    assert not at.exception, at.exception
    pairs = cosine_similarity(model_vectors(bundled, PYTHON, "python")[:, 2])[np.triu_indices(len(PYTHON), k=1)]
    said = messages(at, "markdown")
    assert "Pairwise cosine of these static vectors: **1.000 for every pair**" in said  # one row of the table
    contextual = "The contextual vectors at hidden state 2 (after encoder layer 1): **{} – {}**"
    assert_shows(said, contextual, pairs.min(), pairs.max(), places=3)


def test_the_students_own_sentence_is_not_among_the_pairs_compared(open_page, bundled):
    """With the student's sentence (no sense) joined, "all pairs" came out above both "same sense" and "different
    senses" (0.62 beside 0.52 and 0.60): it counted the sentence's pairs, which neither part does."""
    own = "I wrote a python script today."
    at = open_page(PAGE, BUNDLED_MODEL, preset="python", senses_tab="Static vs contextual", text=own)
    assert not at.exception, at.exception
    table = next(t for t in tables(at) if "all pairs" in t.columns)
    listed = model_vectors(bundled, PYTHON, "python")
    assert len(table) == 1 + listed.shape[1]
    for state in range(listed.shape[1]):
        pairs = cosine_similarity(listed[:, state])[np.triu_indices(len(PYTHON), k=1)]
        assert table["all pairs"][1 + state] == pytest.approx(pairs.mean(), abs=1e-5), state
    between = table["all pairs"].between(
        table[["same sense", "different senses"]].min(axis=1) - 1e-9,
        table[["same sense", "different senses"]].max(axis=1) + 1e-9,
    )
    assert between.all(), table  # every listed sentence has a sense: all pairs is a mean of the two parts


@pytest.mark.parametrize(
    ("lines", "own", "held"),
    [
        ("I ate an apple. | fruit\nThe sky is blue. | sky", "Apple shares rose.", "one occurrence"),
        ("The sky is blue. | sky\nGrass is green. | grass", "An apple, then another apple.", "no occurrence"),
    ],
)
def test_with_under_two_listed_occurrences_the_static_panel_says_the_students_sentence_is_not_compared(
    open_page, tiny_pretraining_dir, lines, own, held
):
    """Two listed sentences, one with the word, and the student's own: the panel said "No two occurrences have the
    same pieces", false (both are "apple"): the only pair was with the student's sentence, which is not compared."""
    at = open_page(
        PAGE, tiny_pretraining_dir, source="Paste lines", word="apple", lines=lines, text=own,
        senses_tab="Static vs contextual",
    )  # fmt: skip
    assert not at.exception, at.exception
    said = messages(at, "info")
    assert f"The listed sentences hold {held} of “apple”: your own sentence is on the map" in said, said
    assert "No two occurrences have the same pieces" not in said
    assert not [t for t in tables(at) if "all pairs" in t.columns]


@pytest.mark.parametrize(("size", "refused"), [(2_072_014, False), (2 * 1024 * 1024 + 1, True)])
def test_one_oversize_file_among_three_is_refused(open_page, tiny_pretraining_dir, size, refused):
    """CoarseWSD-20's three files with a data file over 2 MiB were read, as only all three over it were refused. The
    limit is Streamlit's, counted in MiB: a 2,072,014-byte file passed the server's and failed the page's "2 MB"."""
    at = open_page(PAGE, tiny_pretraining_dir, source="Upload CSV", word="apple")
    at.file_uploader(key="csv_upload").set_value(
        [
            ("train.data.txt", COARSE_DATA + b"\n" * (size - len(COARSE_DATA)), "text/plain"),
            ("train.gold.txt", COARSE_GOLD, "text/plain"),
            ("classes_map.txt", COARSE_CLASSES, "text/plain"),
        ]
    ).run()
    assert not at.exception, at.exception
    limit = "A file is larger than 2 MiB (2,097,152 bytes), the upload limit."
    assert (limit in messages(at, "error")) is refused and bool(tables(at)) is not refused
