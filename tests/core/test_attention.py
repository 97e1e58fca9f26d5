"""Attention core: the drawn matrix is the model's own, statistics find constructed heads, rollout
matches a hand computation, thumbnails keep rows summing to 1, pairs are marked."""

import numpy as np
import pytest
import torch

from bertlens.analysis import analyze, encode
from bertlens.attention import (
    PATTERNS,
    PRESETS,
    downsample,
    find_head,
    focus_across_layers,
    head_statistics,
    layer_stack,
    matching_preset,
    mosaic,
    preset_focus,
    preset_hint,
    rollout,
    sentence_b_start,
    statistics_table,
    strongest_targets,
    thumbnail_size,
    token_labels,
)
from components.views.attention.figures import head_view_figure, matrix_figure, overview_figure

PAIR = ("I went to the store.", "At the store, I bought fresh strawberries.")


def model_attentions(bundle, encoding) -> np.ndarray:
    """The reference: the model's own ``output_attentions`` (layers, heads, q, k)."""
    with torch.no_grad():
        out = bundle.model(
            input_ids=torch.tensor([encoding.input_ids]),
            token_type_ids=torch.tensor([encoding.token_type_ids]),
            output_attentions=True,
        )
    return torch.cat(out.attentions).numpy()


@pytest.mark.parametrize("texts", [("The cat sat on the mat",), PAIR])
@pytest.mark.parametrize("layer, head", [(0, 0), (2, 6), (5, 11)])
def test_drawn_matrix_is_the_models_own_attention(bundled, texts, layer, head):
    analysis = analyze(bundled, *texts)
    reference = model_attentions(bundled, analysis.encoding)
    fig = matrix_figure(layer_stack(analysis.attentions, head)[layer], analysis.encoding, "t")
    drawn = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(drawn, reference[layer, head], atol=1e-6)
    np.testing.assert_allclose(drawn.sum(axis=1), 1.0, atol=1e-5)
    assert list(fig.data[0].y) == list(token_labels(analysis.encoding))  # queries on rows
    mean = np.asarray(matrix_figure(layer_stack(analysis.attentions, None)[layer], analysis.encoding, "t").data[0].z)
    np.testing.assert_allclose(mean, reference[layer].mean(axis=0), atol=1e-6)


def constructed(encoding, layers=3, heads=4) -> np.ndarray:
    """Uniform attention everywhere; tests then plant perfect patterns in chosen heads."""
    n = len(encoding)
    return np.full((layers, heads, n, n), 1.0 / n, dtype=np.float32)


def one_hot_rows(n: int, target_of) -> np.ndarray:
    matrix = np.zeros((n, n), dtype=np.float32)
    for q in range(n):
        matrix[q, target_of(q)] = 1.0
    return matrix


def test_statistics_find_planted_heads(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, *PAIR)
    n, ids, segments = len(encoding), encoding.input_ids, encoding.sequence_ids
    seps = [i for i, t in enumerate(encoding.tokens) if t == "[SEP]"]
    attentions = constructed(encoding)
    attentions[1, 2] = one_hot_rows(n, lambda q: min(q + 1, n - 1))  # next token
    attentions[2, 1] = one_hot_rows(n, lambda q: max(q - 1, 0))  # previous token
    attentions[0, 3] = 0.0
    attentions[0, 3][:, seps] = 1.0 / len(seps)  # [SEP] sink

    def same_word_other_sentence(q):
        hits = [
            k
            for k in range(n)
            if ids[k] == ids[q] and None not in (segments[k], segments[q]) and segments[k] != segments[q]
        ]
        return hits[0] if hits else q

    attentions[2, 3] = one_hot_rows(n, same_word_other_sentence)
    stats = head_statistics(attentions, encoding)

    found = {pattern.statistic: find_head(stats, pattern.statistic) for pattern in PATTERNS}
    assert found["next"] == (1, 2) and found["previous"] == (2, 1)
    assert found["sep"] == (0, 3) and found["other_sentence"] == (2, 3)
    assert stats["next"][1, 2] == pytest.approx(1.0) and stats["previous"][2, 1] == pytest.approx(1.0)
    assert stats["sep"][0, 3] == pytest.approx(1.0) and stats["other_sentence"][2, 3] == pytest.approx(1.0)
    assert stats["entropy"][0, 0] == pytest.approx(np.log2(n), rel=1e-5)  # uniform rows
    assert stats["entropy"][1, 2] == pytest.approx(0.0, abs=1e-6)
    assert stats["cls"][0, 0] == pytest.approx(1.0 / n)
    # The table labels every row with its own layer and head: 3 layers ≠ 4 heads, so a swap shows.
    table = statistics_table(stats)
    assert len(table) == 12 and table["layer"].max() == 2 and table["head"].max() == 3
    assert list(zip(table["layer"], table["head"])) == [(layer, head) for layer in range(3) for head in range(4)]
    perfect = lambda label: table.loc[np.isclose(table[label], 1.0), ["layer", "head"]].values.tolist()  # noqa: E731
    assert perfect("To next token") == [[1, 2]] and perfect("To previous token") == [[2, 1]]
    assert perfect("To [SEP]") == [[0, 3]] and perfect("To same token in other sentence") == [[2, 3]]


def test_to_cls_averages_over_the_text_rows_only(tiny_bundle):
    """A head whose [CLS] row looks at [CLS] and whose words never do scores 0 "To [CLS]": the [CLS] and
    [SEP] query rows are not the text (averaging them in would show 1/n)."""
    encoding = encode(tiny_bundle.tokenizer, *PAIR)
    n = len(encoding)
    last_sep = n - 1
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[last_sep] == "[SEP]"
    attentions = constructed(encoding, layers=2, heads=3)
    attentions[1, 2] = one_hot_rows(n, lambda q: 0 if q == 0 else last_sep)
    attentions[0, 1] = one_hot_rows(n, lambda q: last_sep if encoding.sequence_ids[q] is None else 0)
    stats = head_statistics(attentions, encoding)
    assert stats["cls"][1, 2] == 0.0  # only the [CLS] row looks at [CLS]
    assert stats["cls"][0, 1] == pytest.approx(1.0)  # every word looks at [CLS]; the special rows do not
    # Against numpy on random rows: the mean attention to [CLS] over the text query rows.
    rng = np.random.default_rng(3)
    random = rng.random((2, 3, n, n)).astype(np.float32)
    random /= random.sum(-1, keepdims=True)
    text = [q for q in range(n) if encoding.sequence_ids[q] is not None]
    np.testing.assert_allclose(head_statistics(random, encoding)["cls"], random[:, :, text, 0].mean(axis=-1), rtol=1e-6)


def test_same_word_elsewhere_and_single_sentence(tiny_bundle):
    encoding = encode(tiny_bundle.tokenizer, "the cat saw the cat")
    n, ids = len(encoding), encoding.input_ids
    attentions = constructed(encoding, layers=2, heads=2)
    attentions[1, 0] = one_hot_rows(n, lambda q: next((k for k in range(1, n - 1) if k != q and ids[k] == ids[q]), q))
    stats = head_statistics(attentions, encoding)
    assert find_head(stats, "same_token") == (1, 0)
    assert stats["same_token"][1, 0] == pytest.approx(1.0)
    assert find_head(stats, "other_sentence") is None  # no pair: undefined, never a guess
    table = statistics_table(stats)
    assert table.shape == (4, 2 + len(stats))
    # Each row names its own head: only layer 1, head 0 sends all to the other "the"/"cat"; uniform rows
    # send 1/n to the one other occurrence.
    same = table.set_index(["layer", "head"])["To same token elsewhere"]
    assert same[(1, 0)] == pytest.approx(1.0)
    assert same.drop((1, 0)).to_numpy() == pytest.approx([1.0 / n] * 3)
    assert table["To same token in other sentence"].isna().all()


def test_rollout_matches_hand_computation():
    attentions = np.array(
        [
            [[[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.5, 0.5]]],  # layer 0: mean [[.5,.5],[.5,.5]]
            [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]],  # layer 1: mean [[1,0],[1,0]]
        ],
        dtype=np.float32,
    )
    # Layer 0: (mean + I) / row sums = [[1.5,.5],[.5,1.5]] / 2.
    layer0 = np.array([[0.75, 0.25], [0.25, 0.75]])
    # Layer 1: [[2,0],[1,1]] / row sums = [[1,0],[.5,.5]]; rollout = that @ layer0.
    layer1 = np.array([[0.75, 0.25], [0.5, 0.5]])
    result = rollout(attentions)
    np.testing.assert_allclose(result[0], layer0, atol=1e-7)
    np.testing.assert_allclose(result[1], layer1, atol=1e-7)
    np.testing.assert_allclose(layer_stack(attentions, 0, "rollout"), result)


def test_rollout_rows_sum_to_one_on_the_model(bundled):
    analysis = analyze(bundled, "The animal didn't cross the street because it was too tired.")
    result = rollout(analysis.attentions)
    assert result.shape == (6, len(analysis.encoding), len(analysis.encoding))
    np.testing.assert_allclose(result.sum(axis=-1), 1.0, atol=1e-5)


def test_downsample_block_means_keep_rows_summing_to_one():
    matrix = np.array([[0.5, 0.5, 0, 0], [0, 0, 1, 0], [0.25, 0.25, 0.25, 0.25], [0, 0, 0, 1]], dtype=np.float32)
    np.testing.assert_allclose(downsample(matrix, 2), [[0.5, 0.5], [0.25, 0.75]])
    rng = np.random.default_rng(0)
    big = rng.random((2, 3, 100, 100)).astype(np.float32)
    big /= big.sum(-1, keepdims=True)
    small = downsample(big, 48)
    assert small.shape == (2, 3, 48, 48)
    np.testing.assert_allclose(small.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(downsample(big, 200), big)  # never enlarged


def test_thumbnails_are_small_and_in_their_tiles():
    assert thumbnail_size(512, 12, 12) <= 48 and thumbnail_size(512, 24, 16) ** 2 * 24 * 16 <= 160_000
    assert thumbnail_size(9, 6, 12) == 9
    rng = np.random.default_rng(1)
    attentions = rng.random((2, 3, 10, 10)).astype(np.float32)
    grid = mosaic(attentions, 4)
    assert grid.shape == (2 * 5 - 1, 3 * 5 - 1)
    np.testing.assert_allclose(grid[5:9, 10:14], downsample(attentions[1, 2], 4))
    assert np.isnan(grid[4]).all()  # gap between layers
    fig = overview_figure(grid, 4, 2, 3, (1, 2))
    picker = fig.data[1]
    assert [list(c) for c in picker.customdata][-1] == [1, 2] and len(picker.customdata) == 6


def test_pair_segments_are_marked(bundled):
    encoding = encode(bundled.tokenizer, *PAIR)
    start = sentence_b_start(encoding)
    assert encoding.tokens[start] == "at" and encoding.tokens[start - 1] == "[SEP]"
    assert sentence_b_start(encode(bundled.tokenizer, PAIR[0])) is None
    matrix = np.eye(len(encoding), dtype=np.float32)
    heatmap = matrix_figure(matrix, encoding, "t")
    lines = {(s.x0, s.y0) for s in heatmap.layout.shapes}
    assert (start - 0.5, 0) in lines and (0, start - 0.5) in lines  # a vertical and a horizontal line
    head_view = head_view_figure(matrix, encoding, None, "t")
    assert [s.y0 for s in head_view.layout.shapes] == [start - 0.5]


def test_head_view_stays_small_and_focuses(bundled):
    encoding = encode(bundled.tokenizer, "word " * 600)
    rng = np.random.default_rng(2)
    matrix = rng.random((512, 512)).astype(np.float32) ** 8
    matrix /= matrix.sum(-1, keepdims=True)
    lines = sum(len(t.x) // 3 for t in head_view_figure(matrix, encoding, None, "t").data if t.mode == "lines")
    assert 0 < lines <= 1500
    focused = head_view_figure(matrix, encoding, 7, "t")
    starts = {y for t in focused.data if t.mode == "lines" for y in t.y[::3]}
    assert starts == {7}
    heads = [(f"head {h}", np.roll(matrix, h, axis=1)) for h in range(16)]  # bert-large's 16 heads together
    for focus in (None, 7):
        together = head_view_figure(heads, encoding, focus, "t")
        assert sum(len(t.x) // 3 for t in together.data if t.mode == "lines" and t.x[0] is not None) <= 1500


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_presets_find_their_tokens(bundled, preset):
    """In each wording of the preset (seed 000 writes "didn't" and "couldn't"): its focus token, then its targets."""
    for text in (preset.text, *preset.also):
        assert matching_preset(text, preset.text_b) is preset
        encoding = encode(bundled.tokenizer, text, preset.text_b)
        focus, targets = preset_focus(preset, encoding)
        assert [encoding.tokens[t].lower() for t in (focus, *targets)] == [
            w.lower() for w in (preset.focus, *preset.targets)
        ]


def test_default_focus_targets_are_the_most_attended_words(tiny_bundle):
    """The two words a token attends to most (never itself, [CLS] or [SEP]), in sentence order."""
    encoding = encode(tiny_bundle.tokenizer, "the cat sat on the mat")
    assert encoding.tokens == ("[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]")
    row = np.array([0.30, 0.05, 0.20, 0.10, 0.01, 0.04, 0.15, 0.15])  # [CLS] and "sat" itself are left out
    assert strongest_targets(row, 3, encoding) == [2, 6]  # cat, mat
    assert strongest_targets(row, 3, encoding, count=3) == [1, 2, 6]
    assert strongest_targets(row, 2, encoding, count=1) == [6]  # "cat" itself left out: mat


def test_a_preset_layer_hint_only_names_a_layer_the_model_has():
    """France points to encoder layer 10: a model with 11 layers (0-10) has it, one with 10 (0-9) does not."""
    france = next(p for p in PRESETS if p.name == "France [MASK]")
    assert france.layer == 10
    assert "look at encoder layer 10" in preset_hint(france, 11)
    assert "this model has 10" in preset_hint(france, 10)
    assert "look at encoder layer" not in preset_hint(france, 10)
    assert preset_hint(france, 12).startswith(france.questions)


def test_animal_it_focus_across_layers(bundled):
    preset = next(p for p in PRESETS if p.text.endswith("tired."))
    analysis = analyze(bundled, preset.text)
    focus, targets = preset_focus(preset, analysis.encoding)
    stack = layer_stack(analysis.attentions, 3)
    values = focus_across_layers(stack, focus, targets)
    assert values.shape == (6, 2)
    np.testing.assert_allclose(values[:, 1], analysis.attentions[:, 3, focus, targets[1]])
