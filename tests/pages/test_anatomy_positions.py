"""Model anatomy → Positions: what is drawn equals the model's own position and token-type embeddings."""

import json

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.metrics.pairwise import cosine_similarity

from components.text import literal
from tests.pages.test_attention_page import typed
from tests.pages.test_tokenizer_page import frame, shown

PAGE = "pages/anatomy.py"


def chart(at, key_fragment: str) -> dict:
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if key_fragment in c.proto.id)


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
    assert f"{pca.explained_variance_ratio_[0]:.1%}" in chart(at, "position_chain")["layout"]["xaxis"]["title"]["text"]
    coordinates = frame(at, "PC1")
    np.testing.assert_allclose(coordinates[["PC1", "PC2"]].to_numpy(), xy, atol=1e-9)
    steps = np.linalg.norm(np.diff(expected, axis=0), axis=1)  # in words: how far apart neighbours are
    words = " ".join(c.value for c in at.caption if c.value.startswith("In words"))
    assert literal(f"neighbours are {steps.min():.3g} to {steps.max():.3g} apart") in words
    assert literal(f"{pca.explained_variance_ratio_.sum():.0%} of the variance") in words


def test_token_types_beside_them(open_page, tiny_pretraining_dir, tiny_bundle):
    at = open_page(PAGE, tiny_pretraining_dir, anatomy_tab="Positions")
    assert not at.exception
    assert at.slider(key="n_positions").value == 64  # the default
    types = tiny_bundle.model.bert.embeddings.token_type_embeddings.weight.detach().numpy()
    np.testing.assert_allclose(frame(at, "‖t‖")["‖t‖"], np.linalg.norm(types, axis=1), rtol=1e-6)
    metric = {m.label: m.value for m in at.metric}["cosine(type 0, type 1)"]
    assert metric == f"{cosine_similarity(types)[0, 1]:.4f}"
    assert "learns one vector per position" in shown(at)


def test_out_of_range_count_warns(open_page):
    at = open_page(PAGE, anatomy_tab="Positions", n_positions="9999")
    assert not at.exception
    assert "`n_positions` parameter (9999)" in shown(at)
    assert at.slider(key="n_positions").value == 64
