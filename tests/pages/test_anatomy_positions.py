"""Model anatomy → Positions: what is drawn equals the model's own position and token-type embeddings."""

import json

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.metrics.pairwise import cosine_similarity

from components.services.text import literal
from tests.conftest import assert_shows, chart_title, drawn_charts, renderings
from tests.core.test_positions import reference_sinusoids
from tests.pages.test_attention_page import typed
from tests.pages.test_tokenizer_page import frame, shown

PAGE = "pages/anatomy.py"


def chart(at, key_fragment: str) -> dict:
    return next(json.loads(c.spec) for c in drawn_charts(at) if key_fragment in c.id)


def reference(bundle, count: int):
    weights = bundle.model.bert.embeddings.position_embeddings.weight.detach().numpy()[:count]
    return cosine_similarity(weights), PCA(n_components=2).fit(weights)


@pytest.mark.parametrize("count", [2, 16, 40])
def test_positions_from_the_link_equal_the_weights(open_page, bundled, count):
    at = open_page(PAGE, anatomy_tab="Positions", n_positions=str(count))
    assert not at.exception, at.exception
    assert at.slider(key="n_positions").value == count
    cosine, pca = reference(bundled, count)
    drawn = chart(at, "position_cosine")
    np.testing.assert_allclose(typed(drawn["data"][0]["z"]), cosine, atol=1e-6)
    chain = chart(at, "position_chain")["data"][1]  # the markers; trace 0 is the joining line
    xy = np.column_stack([typed(chain["x"]), typed(chain["y"])])
    expected = pca.transform(bundled.model.bert.embeddings.position_embeddings.weight.detach().numpy()[:count])
    signs = np.sign((xy * expected).sum(axis=0))  # PCA axes are defined up to sign
    np.testing.assert_allclose(xy, expected * signs, atol=1e-4)
    assert list(typed(chain["marker"]["color"])) == list(range(count))  # coloured by position, in order
    if count <= 11:  # whole positions, each: 0.5 was a tick for five
        assert (chain["marker"]["colorbar"]["tick0"], chain["marker"]["colorbar"]["dtick"]) == (0, 1)
    title = chart(at, "position_chain")["layout"]["xaxis"]["title"]["text"]
    assert_shows(title, "PC1 ({}% of the variance)", pca.explained_variance_ratio_[0], places=1, percent=True)
    coordinates = frame(at, "PC1")
    np.testing.assert_allclose(coordinates[["PC1", "PC2"]].to_numpy(), xy, atol=1e-9)
    steps = np.linalg.norm(np.diff(expected, axis=0), axis=1)  # in words: how far apart neighbours are
    words = " ".join(c.value for c in at.caption if c.value.startswith("In words"))
    low, high = (renderings(step, lambda v: f"{v:.3g}") for step in (steps.min(), steps.max()))
    assert any(literal(f"neighbours are {a} to {b} apart") in words for a in low for b in high)
    assert_shows(words, "{}% of the variance", pca.explained_variance_ratio_.sum(), places=0, percent=True)


def test_token_types_beside_them(open_page, tiny_pretraining_dir, tiny_bundle):
    """The token types' norms and cosine, and for scale the mean norm of the positions shown (not of the types)."""
    at = open_page(PAGE, tiny_pretraining_dir, anatomy_tab="Positions")
    assert not at.exception
    assert at.slider(key="n_positions").value == 64  # the default
    types = tiny_bundle.model.bert.embeddings.token_type_embeddings.weight.detach().numpy()
    np.testing.assert_allclose(frame(at, "‖t‖")["‖t‖"], np.linalg.norm(types, axis=1), rtol=1e-6)
    metric = {m.label: m.value for m in at.metric}["cosine(type 0, type 1)"]
    assert_shows(metric, "{}", cosine_similarity(types)[0, 1], places=4)
    positions = tiny_bundle.model.bert.embeddings.position_embeddings.weight.detach().numpy()[:64]
    mean = np.linalg.norm(positions.astype(np.float64), axis=1).mean()
    [scale] = [c.value for c in at.caption if c.value.startswith("For scale")]
    assert_shows(scale, "For scale: the position embeddings shown have a mean norm of {}.", mean, places=4)
    assert "learns one vector per position" in shown(at)


def test_the_sinusoidal_encoding_beside_the_learned_one(open_page, bundled):
    """Seed 001: BERT learns its positions, the original Transformer's were a fixed sinusoid; on request both are
    drawn the same way, the sinusoid at the model's hidden size (384 for the bundled encoder)."""
    plain = open_page(PAGE, anatomy_tab="Positions", n_positions="24")
    assert not [c for c in drawn_charts(plain) if "sinusoid" in c.id]
    at = open_page(PAGE, anatomy_tab="Positions", n_positions="24", sinusoid="true")
    assert not at.exception and at.toggle(key="sinusoid").value is True
    encoding = reference_sinusoids(24, bundled.capabilities.hidden_size)
    drawn = chart(at, "sinusoid_cosine")
    np.testing.assert_allclose(typed(drawn["data"][0]["z"]), cosine_similarity(encoding), atol=1e-6)
    assert chart_title(drawn) == "Cosine similarity of sinusoidal encodings 0–23"
    chain = chart(at, "sinusoid_chain")["data"][1]
    xy = np.column_stack([typed(chain["x"]), typed(chain["y"])])
    expected = PCA(n_components=2).fit_transform(encoding)
    np.testing.assert_allclose(xy, expected * np.sign((xy * expected).sum(axis=0)), atol=1e-4)
    np.testing.assert_allclose(
        typed(chart(at, "position_cosine")["data"][0]["z"]), reference(bundled, 24)[0], atol=1e-6
    )
    two = chart(open_page(PAGE, anatomy_tab="Positions", n_positions="2", sinusoid="true"), "sinusoid_chain")["data"][1]
    assert not typed(two["y"]).any()  # two positions span one direction: PC2 is flat, not 1e-16 noise drawn tall


def test_the_cosine_download_is_the_weights_cosine_with_positions_as_labels(open_page, bundled, csv_downloads):
    """The CSV's column headers name positions 0 … N − 1, as its rows do: a header off by one pairs every
    value with the wrong position."""
    at = open_page(PAGE, anatomy_tab="Positions", n_positions="12")
    assert not at.exception
    table = csv_downloads["position-cosine-12"]
    assert table.columns.tolist() == ["position", *(str(i) for i in range(12))]
    assert table["position"].tolist() == list(range(12))
    np.testing.assert_allclose(table.drop(columns="position").to_numpy(), reference(bundled, 12)[0], atol=1e-6)


def test_out_of_range_count_warns(open_page):
    at = open_page(PAGE, anatomy_tab="Positions", n_positions="9999")
    assert not at.exception
    assert "`n_positions` parameter (9999)" in shown(at)
    assert at.slider(key="n_positions").value == 64
