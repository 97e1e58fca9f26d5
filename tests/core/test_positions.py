"""Position and token-type embeddings: every number equals numpy / scikit-learn on the model's own weights."""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.metrics.pairwise import cosine_similarity

from bertlens.positions import (
    cosine_matrix,
    pca_2d,
    position_embeddings,
    sinusoidal_embeddings,
    sinusoidal_encoding,
)


def reference_sinusoids(count: int, size: int) -> np.ndarray:
    """Vaswani et al. (2017), one value at a time: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(…)."""
    pe = np.zeros((count, size))
    for pos in range(count):
        for i in range(0, size, 2):
            pe[pos, i] = np.sin(pos / 10000 ** (i / size))
            if i + 1 < size:
                pe[pos, i + 1] = np.cos(pos / 10000 ** (i / size))
    return pe


def weights(bundle):
    embeddings = bundle.model.bert.embeddings
    return (
        embeddings.position_embeddings.weight.detach().numpy().astype(np.float64),
        embeddings.token_type_embeddings.weight.detach().numpy().astype(np.float64),
    )


@pytest.mark.parametrize("count", [3, 24, 64])
def test_position_geometry_equals_the_weights(bundled, count):
    positions, types = weights(bundled)
    view = position_embeddings(bundled, count)
    assert view.count == count and view.name == "position embeddings"
    np.testing.assert_allclose(view.norms, np.sqrt((positions[:count] ** 2).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(view.cosine, cosine_similarity(positions[:count]), atol=1e-6)
    np.testing.assert_allclose(view.type_norms, np.sqrt((types**2).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(view.type_cosine, cosine_similarity(types), atol=1e-6)
    pca = PCA(n_components=2).fit(positions[:count])
    np.testing.assert_allclose(view.explained, pca.explained_variance_ratio_, rtol=1e-6)


def test_pca_2d_is_scikit_learns_pca_signs_included():
    """The docstring's promise: scikit-learn's coordinates exactly, not merely up to each axis's sign (the
    chart's left/right and up/down would flip between the page and a student's own notebook)."""
    rng = np.random.default_rng(0)
    flipped = 0
    for _ in range(8):
        vectors = rng.normal(size=(20, 7))
        coords, explained = pca_2d(vectors)
        pca = PCA(n_components=2).fit(vectors)
        np.testing.assert_allclose(coords, pca.transform(vectors), atol=1e-9)
        np.testing.assert_allclose(explained, pca.explained_variance_ratio_, rtol=1e-9)
        centred = vectors - vectors.mean(axis=0)
        raw = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
        flipped += not np.allclose(raw, coords)
    assert flipped  # some plain SVD axes point the other way: the sign convention is exercised


def test_pca_2d_of_two_points_has_no_second_axis():
    """Two positions span one direction: PC2 is exactly 0 and explains nothing; PC1 is ± half their distance."""
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 6.0, 3.0])  # 5 apart
    coords, explained = pca_2d(np.stack([a, b]))
    assert explained[0] == pytest.approx(1.0) and explained[1] == pytest.approx(0.0, abs=1e-12)
    assert coords[:, 1].tolist() == [0.0, 0.0]
    assert sorted(coords[:, 0]) == pytest.approx([-2.5, 2.5])


def test_cosine_matrix_by_hand():
    vectors = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 3.0], [-2.0, 0.0], [0.0, 0.0]])
    half = np.sqrt(0.5)
    expected = [
        [1, half, 0, -1, 0],
        [half, 1, half, -half, 0],
        [0, half, 1, 0, 0],
        [-1, -half, 0, 1, 0],
        [0, 0, 0, 0, 0],  # a zero vector is similar to nothing (not NaN)
    ]
    np.testing.assert_allclose(cosine_matrix(vectors), expected, atol=1e-12)


@pytest.mark.parametrize(("count", "size"), [(24, 384), (5, 7), (50, 32)])
def test_sinusoidal_encoding_is_vaswanis_formula(count, size):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i + 1) = cos(pos / 10000^(2i/d)), one value at a time."""
    expected = reference_sinusoids(count, size)
    np.testing.assert_allclose(sinusoidal_encoding(count, size), expected, atol=1e-12)
    view = sinusoidal_embeddings(count, size)
    np.testing.assert_allclose(view.norms, np.linalg.norm(expected, axis=1), rtol=1e-9)
    np.testing.assert_allclose(view.cosine, cosine_similarity(expected), atol=1e-9)
    assert view.type_norms.shape == (0,) and view.name == "sinusoidal encodings"


def test_an_axis_under_one_millionth_of_the_variance_is_drawn_flat():
    """Three points almost on a line: PC2 holds ~1e-9 of the variance (rounding noise, NO_SPREAD = 1e-6), so it is
    exactly 0 rather than drawn as spread on an axis scaled up to fill the chart."""
    points = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 1e-4, 0.0]])
    coords, explained = pca_2d(points)
    assert 0 < explained[1] < 1e-6
    assert coords[:, 1].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(coords[:, 0], PCA(n_components=2).fit_transform(points)[:, 0], atol=1e-9)
