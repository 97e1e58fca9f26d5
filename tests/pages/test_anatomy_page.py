"""The model anatomy page opened as a shared link (URL parameters)."""

import html
import json
import re

import numpy as np
import pytest
import torch

from bertlens.analysis import encode
from bertlens.anatomy import NOT_IN_CHECKPOINT, PoolerCheck, bundle_architecture
from components.services.text import literal
from components.views.anatomy import sections as anatomy_views
from components.views.anatomy.sections import CHARS_PER_UNIT, architecture_figure, pooler_words
from tests.conftest import drawn_charts, tables
from tests.pages.test_attention_page import typed
from tests.pages.test_tokenizer_page import frame, shown

PAGE = "pages/anatomy.py"


def test_bundled_encoder_counts_checks_and_missing_heads(open_page, bundled):
    at = open_page(PAGE, anatomy_tab="Parameters", text="Sinan loves a beautiful day")
    assert not at.exception
    total = sum(p.numel() for p in bundled.model.bert.parameters())
    assert f"**{total:,} parameters**" in shown(at)
    assert "103 named parameters, 103 of them the base encoder's" in shown(at)  # no heads
    matrices = sum(p.numel() for p in bundled.model.bert.parameters() if p.dim() == 2)  # seed 004's count
    assert f"{matrices:,} sit in weight matrices and {total - matrices:,} in vectors" in shown(at)
    assert at.text[0].value == repr(bundled.model.bert)  # the module tree, as print(model) shows it
    # Seed 000's "spot the difference" between BertModel and BertForMaskedLM, said beside the one tree shown (QA), as
    # this checkpoint's tree is: a BertModel without heads here, not a `bert` part and a `cls` (review)
    assert "Shown here: the `BertModel` below, and after it only the heads this checkpoint ships." in shown(at)
    assert "`BertForMaskedLM` is the `BertModel` without its pooler, plus `cls`" in shown(at)
    embeddings = sum(p.numel() for p in bundled.model.bert.embeddings.parameters())
    assert f"in this checkpoint: embeddings {embeddings:,}, one encoder layer" in shown(at)
    counts = frame(at, "adds up to total")
    assert counts["parameters"].iloc[-1] == total
    sunburst_adds_up(at, bundled)
    assert counts.set_index("part").loc[["MLM head", "NSP head"], "note"].tolist() == [NOT_IN_CHECKPOINT] * 2
    assert "hf download bert-base-uncased" in shown(at)
    at = open_page(PAGE, anatomy_tab="Named parameters")
    assert len(frame(at, "shape")) == 103
    at = open_page(PAGE, anatomy_tab="Embeddings", text="Sinan loves a beautiful day")
    assert "Equal up to float32 rounding" in at.success[0].value
    norms = frame(at, "‖word‖")
    assert norms["token"].tolist() == ["[CLS]", "sin", "##an", "loves", "a", "beautiful", "day", "[SEP]"]
    assert (norms["max |difference|"] < 1e-5).all()
    at = open_page(PAGE, anatomy_tab="Pooler", text="Sinan loves a beautiful day")
    assert "Equal up to float32 rounding" in at.success[0].value
    pooled = frame(at, "pooler_output")
    assert len(pooled) == bundled.capabilities.hidden_size
    difference = (pooled["by hand"] - pooled["pooler_output"]).abs().max()
    assert literal(
        f"384 dimensions, one dot each: by hand against pooler_output, which differ by at most {difference:.2g}"
    ) in (" ".join(c.value for c in at.caption))


def test_the_pooler_in_words_says_the_dots_leave_the_diagonal_when_they_do():
    by_hand = np.array([0.5, -0.25, 0.0], dtype=np.float32)
    assert pooler_words(PoolerCheck(by_hand, by_hand + 1e-7)).endswith("so every dot lies on the diagonal")
    assert pooler_words(PoolerCheck(by_hand, by_hand + 0.5)).endswith(
        "differ by at most 0.5, so some dots leave the diagonal"
    )


def sunburst_adds_up(at, bundle) -> None:
    """The sunburst's parts are the base encoder's modules, each the sum of its pieces, together the total: a part
    drawn smaller than its pieces leaves them spilling out of its ring."""
    [sunburst] = [json.loads(c.spec)["data"][0] for c in drawn_charts(at)]
    ids, parents, drawn = sunburst["ids"], sunburst["parents"], typed(sunburst["values"])
    bert = bundle.model.bert
    modules = {"Embeddings": bert.embeddings, "Encoder": bert.encoder, "Pooler": bert.pooler}
    tops = {name: int(value) for name, parent, value in zip(ids, parents, drawn, strict=True) if not parent}
    assert tops == {name: sum(p.numel() for p in module.parameters()) for name, module in modules.items()}
    for name, value in tops.items():
        assert value == sum(int(v) for parent, v in zip(parents, drawn, strict=True) if parent == name), name
    assert sum(tops.values()) == sum(p.numel() for p in bert.parameters())
    embeddings = bert.embeddings
    pieces = dict(zip(ids, map(int, drawn), strict=True))
    assert pieces["Embeddings/word embeddings"] == embeddings.word_embeddings.weight.numel()
    assert pieces["Embeddings/position embeddings"] == embeddings.position_embeddings.weight.numel()


def test_the_architecture_opens_first_with_the_checkpoints_own_sizes(
    open_page, bundled, tiny_pretraining_dir, tiny_bundle
):
    at = open_page(PAGE)
    assert not at.exception
    (diagram,) = drawn_charts(at)
    arch = bundle_architecture(bundled)
    for block in arch.blocks():
        assert html.escape(block.name) in diagram.spec
        assert (f"{block.parameters:,} parameters" if block.present else NOT_IN_CHECKPOINT) in diagram.spec
    assert "× 6 (L = 0 … 5)" in diagram.spec
    figure = json.loads(diagram.spec)
    dashed = [shape for shape in figure["layout"]["shapes"] if shape["line"].get("dash") == "dash"]
    assert len(dashed) == 2 and all(shape["fillcolor"] == "white" for shape in dashed)  # the two missing heads
    assert f"In words — {literal(arch.in_words())}" in [c.value for c in at.caption]
    assert any("Dashed boxes" in c.value for c in at.caption)
    assert f"add up to {sum(p.numel() for p in bundled.model.bert.parameters()):,}" in shown(at)

    at = open_page(PAGE, tiny_pretraining_dir)  # every head real: none dashed, all counted
    assert not any("Dashed boxes" in c.value for c in at.caption)
    assert f"add up to {sum(p.numel() for p in tiny_bundle.model.parameters()):,}" in shown(at)


@pytest.mark.parametrize("model", ["bundled", "tiny_bundle"])
def test_the_architectures_text_fits_its_boxes_on_a_phone(model, request):
    """Each box's lines fit its width at 390 pixels (the MLM head's text once ran across the pooler's box),
    and at most four lines fit its height."""
    figure = architecture_figure(bundle_architecture(request.getfixturevalue(model)))

    def centre(x: float, y: float) -> tuple[float, float]:
        return round(x, 6), round(y, 6)

    boxes = {
        centre((s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2): s.x1 - s.x0 for s in figure.layout.shapes if s.type == "rect"
    }
    texts = [a for a in figure.layout.annotations if a.text and a.text.startswith("<b>") and a.xanchor != "left"]
    assert len(texts) == 11  # every block, each in its box
    for note in texts:
        width = boxes[centre(note.x, note.y)]
        lines = [html.unescape(re.sub("<[^>]+>", "", line)) for line in note.text.split("<br>")]
        assert len(lines) <= 4, lines
        assert all(len(line) <= CHARS_PER_UNIT * width for line in lines), (lines, width)


def test_only_the_open_tab_is_drawn(open_page):
    at = open_page(PAGE, anatomy_tab="Parameters", text="Sinan loves a beautiful day")
    assert len(drawn_charts(at)) == 1  # the parameters sunburst
    assert not any("‖word‖" in d.columns for d in tables(at))
    at = open_page(PAGE, anatomy_tab="Pooler", text="Sinan loves a beautiful day")
    assert not any("adds up to total" in d.columns for d in tables(at))
    assert at.text_input(key="text").value == "Sinan loves a beautiful day"


def test_pretraining_checkpoint_counts_its_heads(open_page, tiny_pretraining_dir, tiny_bundle):
    at = open_page(PAGE, tiny_pretraining_dir, anatomy_tab="Parameters", text="hello world")
    assert not at.exception
    counts = frame(at, "adds up to total").set_index("component")
    assert counts.loc["decoder weight", "parameters"] == 0 and "tied" in counts.loc["decoder weight", "note"]
    assert counts.loc["is-next classifier", "parameters"] == 2 * tiny_bundle.capabilities.hidden_size + 2
    assert counts["parameters"].iloc[-1] == sum(p.numel() for p in tiny_bundle.model.parameters())
    assert "weight tying" in shown(at)
    assert at.text[0].value == repr(tiny_bundle.model)  # the whole BertForPreTraining, as its caption says
    assert "Shown here: `BertForPreTraining`: its `bert` part below is the `BertModel`" in shown(at)
    base = len(list(tiny_bundle.model.bert.named_parameters()))  # BertModel's list (seed 004: 199 for bert-base)
    heads = len(list(tiny_bundle.model.cls.named_parameters()))  # the tied decoder weight is the word embeddings'
    assert f"{base + heads - 1} named parameters, {base} of them the base encoder's" in shown(at)
    # Each share as rounded: 2 decimals, a tiny one to 2 significant figures (the NSP head once read 0.00).
    nsp_share = 100 * counts.loc["is-next classifier", "parameters"] / counts["parameters"].iloc[-1]
    (markup,) = [e.value for e in at.get("html") if 'aria-label="parameter counts"' in e.value]
    assert nsp_share < 0.01 and f">{nsp_share:.2g}</td>" in markup and ">0.00</td>" not in markup


def test_filter_and_token_from_the_link(open_page, bundled):
    """The filter's caption counts the parameters it keeps; the heatmap shows the linked token's own vectors."""
    at = open_page(PAGE, anatomy_tab="Named parameters", filter="layer.0.attention")
    named = frame(at, "shape")
    assert len(named) == 10 and named["name"].str.contains("layer.0.attention", regex=False).all()
    assert at.text_input(key="filter").value == "layer.0.attention"
    kept = [p.numel() for name, p in bundled.model.bert.named_parameters() if "layer.0.attention" in name]
    everything = len(list(bundled.model.bert.named_parameters()))
    assert f"{len(kept)} of {everything} named parameters · {sum(kept):,} parameters" in [c.value for c in at.caption]
    text = "Sinan loves a beautiful day"
    at = open_page(PAGE, anatomy_tab="Embeddings", text=text, pos="2")
    assert at.slider(key="pos").value == 2
    heatmap = next(c for c in drawn_charts(at) if "Token 2" in c.spec)
    assert "##an" in heatmap.spec
    trace = json.loads(heatmap.spec)["data"][0]
    drawn = dict(zip(trace["y"], typed(trace["customdata"]), strict=True))  # the hover's real values, by row
    expected_rows = embedding_rows(bundled, text, 2)
    for row, expected in expected_rows.items():
        np.testing.assert_allclose(drawn[row], expected, atol=1e-5, err_msg=row)
    # In words: each row's real range (the colours are scaled row by row; read from them it once said -1 to 1).
    words = next(c.value for c in at.caption if c.value.startswith("In words — token 2")).replace("\\", "")
    for row, expected in expected_rows.items():
        shown = re.search(rf"{re.escape(row)} from (\S+) to ([^;]+)", words)
        assert shown, row
        np.testing.assert_allclose([float(shown[1]), float(shown[2])], [expected.min(), expected.max()], rtol=5e-3)
    # The norms table, column by column, from the model's own tables.
    norms = frame(at, "‖word‖")
    for row, expected in expected_rows.items():
        if row != "embeddings output":
            assert norms[f"‖{row}‖"].iloc[2] == pytest.approx(float(np.linalg.norm(expected)), rel=1e-5), row


def embedding_rows(bundle, text: str, position: int) -> dict[str, np.ndarray]:
    """Token ``position``'s embeddings, read from the model's own tables and its embeddings module."""
    embeddings = bundle.model.bert.embeddings
    encoded = bundle.tokenizer(text, return_tensors="pt")
    token, segment = encoded["input_ids"][0, position], encoded["token_type_ids"][0, position]
    with torch.no_grad():
        word = embeddings.word_embeddings.weight[token]
        where = embeddings.position_embeddings.weight[position]
        kind = embeddings.token_type_embeddings.weight[segment]
        summed = word + where + kind
        output = embeddings(input_ids=encoded["input_ids"], token_type_ids=encoded["token_type_ids"])[0, position]
        rows = {
            "word": word,
            "position": where,
            "token type": kind,
            "sum": summed,
            "LayerNorm(sum)": embeddings.LayerNorm(summed),
            "embeddings output": output,
        }
    return {name: row.numpy() for name, row in rows.items()}


def test_seed_004_i_am_sinan_against_i_am_matt(open_page, bundled):
    """The same token in another sentence: its word-embedding row is the same (a look-up); entering layer 0 it is the
    same only at the same position, which [SEP] is not (5 in "I am Sinan", 4 in "I am Matt")."""
    at = open_page(PAGE, anatomy_tab="Embeddings", text="I am Sinan")
    assert "Type another sentence" in " ".join(c.value for c in at.caption) and at.text_input(key="emb_other")
    at.text_input(key="emb_other").input("I am Matt").run()
    assert not at.exception and at.query_params["emb_other"] == "I am Matt"
    table = frame(at, "position in the other")
    assert table["token"].tolist() == ["[CLS]", "i", "am", "[SEP]"]
    embeddings = bundled.model.bert.embeddings
    with torch.no_grad():
        sinan, matt = (
            embeddings(bundled.tokenizer(t, return_tensors="pt")["input_ids"])[0] for t in ("I am Sinan", "I am Matt")
        )
    expected = [float((sinan[i] - matt[j]).abs().max()) for i, j in ((0, 0), (1, 1), (2, 2), (5, 4))]
    np.testing.assert_allclose(table["entering layer 0: largest difference"], expected, atol=1e-6)
    assert (table["word embedding: largest difference"] == 0).all()
    assert "[SEP] (position 5 here, 4 there)" in shown(at).replace("\\", "")
    again = open_page(PAGE, anatomy_tab="Embeddings", text="I am Sinan", emb_other="I am Matt")  # the shared link
    assert frame(again, "position in the other").equals(table)
    # As a pair, B's tokens have token type 1; the other sentence, read alone, has only 0: said, and shown.
    pair = open_page(PAGE, anatomy_tab="Embeddings", text="I am", b="Matt", emb_other="I am a Matt")
    assert "matt (position 4 here, 4 there" not in shown(pair)
    assert "matt (token type 1 here, 0 there)" in shown(pair) and "read alone" in shown(pair)


def test_second_sentence_gets_token_type_one(open_page, bundled):
    at = open_page(PAGE, anatomy_tab="Embeddings", text="I am Sinan", b="And you?")
    assert at.text_input(key="b").value == "And you?"
    norms = frame(at, "‖word‖")
    expected = encode(bundled.tokenizer, "I am Sinan", "And you?").token_type_ids
    assert norms["token_type_ids"].tolist() == list(expected) and 1 in expected


def test_outputs_tab_lists_the_forward_pass_for_the_sentence(open_page, tiny_pretraining_dir, tiny_bundle):
    """The Outputs tab's shapes are this sentence pair's: its tokens, the checkpoint's layers, heads and sizes."""
    at = open_page(PAGE, tiny_pretraining_dir, anatomy_tab="Outputs", text="I am Sinan", b="And you?")
    assert not at.exception
    outputs = frame(at, "holds").set_index("output")
    caps, n = tiny_bundle.capabilities, len(tiny_bundle.tokenizer("I am Sinan", "And you?")["input_ids"])
    assert outputs.loc["input_ids", "shape"] == f"(1, {n})"
    assert outputs.loc["attentions", "shape"] == f"{caps.num_layers} × (1, {caps.num_heads}, {n}, {n})"
    assert outputs.loc["prediction_logits", "values"] == n * caps.vocab_size
    assert outputs.loc["seq_relationship_logits", "shape"] == "(1, 2)"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"text": ""}, "empty"),
        ({"text": "  "}, "empty"),
        ({"text": "word " * 700}, "702 tokens long"),
        ({"text": "word " * 700}, "512 tokens are analysed: [CLS], the text's first 510 tokens and [SEP]"),
        ({"text": "🤖 <script>alert(1)</script> **x**"}, "Equal up to float32 rounding"),
        ({"text": "hello", "pos": "99"}, "`pos` parameter"),
        ({"text": "hello", "pos": "-1"}, "`pos` parameter"),
        ({"text": "hello", "anatomy_tab": "Organs"}, "`anatomy_tab` parameter"),
    ],
)
def test_bad_input_gets_a_message(open_page, params, message):
    at = open_page(PAGE, **{"anatomy_tab": "Embeddings", **params})
    assert not at.exception, at.exception
    assert message in shown(at)
    if params.get("anatomy_tab") == "Organs":  # a malformed tab falls back to the first: the architecture
        assert "BERT's architecture" in drawn_charts(at)[0].spec


def test_the_diagram_is_built_once_per_model(open_page, bundled, monkeypatch):
    """Its plotly calls took 70 ms on every visit of the page's first tab (a cached visit's budget is 60 ms)."""
    built = []
    real = anatomy_views.architecture_figure
    monkeypatch.setattr(anatomy_views, "architecture_figure", lambda arch, size: built.append(1) or real(arch, size))
    anatomy_views.architecture_chart.clear()
    at = open_page(PAGE)
    at.run()
    assert not at.exception and len(built) == 1 and drawn_charts(at)
