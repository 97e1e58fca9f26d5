"""The learned position and token-type embeddings, read from the weights (no forward pass).

BERT learns one vector per position (0 … max_position_embeddings − 1) and one per segment (token
type 0 = sentence A, 1 = sentence B); both are added to the word embedding of every token. So do most of
its family (RoBERTa's family has one token type, DistilBERT none); ModernBERT has no position table at all
(rotary positions: ``family.NotInThisFamily`` says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bertlens.family import position_table, token_type_table
from bertlens.models import AnyBundle

NO_SPREAD = 1e-6  # a PCA axis explaining less of the variance than this is rounding noise (here and in senses)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarity of every pair of rows (float64)."""
    v = np.asarray(vectors, dtype=np.float64)
    unit = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    similarity: np.ndarray = unit @ unit.T
    return similarity


def pca_2d(vectors: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    """The rows projected on their first two principal components, and each one's share of the variance.

    Signs follow scikit-learn's convention: each axis's largest-magnitude loading is positive.
    """
    v = np.asarray(vectors, dtype=np.float64)
    centred = v - v.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    axes = axes[:2]
    axes *= np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])[:, None]
    variance = singular**2
    share = variance[:2] / variance.sum() if variance.sum() > 0 else np.zeros(2)
    coords = centred @ axes.T
    coords[:, share < NO_SPREAD] = 0.0  # an axis with no spread (two positions span one direction): rounding noise
    return coords, (float(share[0]), float(share[1]) if len(share) > 1 else 0.0)


@dataclass(frozen=True)
class PositionEmbeddings:
    name: str  # what the vectors are, for titles: "position embeddings" (learned) or "sinusoidal encodings"
    count: int  # the first ``count`` positions
    norms: np.ndarray  # (count,) ‖p_i‖
    cosine: np.ndarray  # (count, count)
    projection: np.ndarray  # (count, 2) PCA of p_0 … p_(count-1)
    explained: tuple[float, float]  # share of variance of each PCA axis
    type_norms: np.ndarray  # (types,) ‖t_j‖ (none for a fixed encoding: it has no segments)
    type_cosine: np.ndarray  # (types, types)


def _geometry(name: str, positions: np.ndarray, types: np.ndarray) -> PositionEmbeddings:
    projection, explained = pca_2d(positions)
    return PositionEmbeddings(
        name=name,
        count=len(positions),
        norms=np.linalg.norm(positions, axis=1),
        cosine=cosine_matrix(positions),
        projection=projection,
        explained=explained,
        type_norms=np.linalg.norm(types, axis=1),
        type_cosine=cosine_matrix(types),
    )


def sinusoidal_encoding(count: int, size: int) -> np.ndarray:
    """The original Transformer's fixed position encoding (Vaswani et al., 2017), (count, size):
    PE(pos, 2i) = sin(pos / 10000^(2i/size)), PE(pos, 2i + 1) = cos(pos / 10000^(2i/size))."""
    angles = np.arange(count)[:, None] / 10000 ** (np.arange(0, size, 2) / size)[None, :]
    encoding = np.empty((count, size))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : size // 2])
    return encoding


def position_embeddings(bundle: AnyBundle, count: int) -> PositionEmbeddings:
    """Cosine similarities and a 2D PCA of the first ``count`` position embeddings (from the first token's row:
    RoBERTa's family skips its padding rows); the token-type embeddings, for a model that has them.
    ``family.NotInThisFamily`` under rotary positions (ModernBERT): there is no table to show."""
    table, first = position_table(bundle.model, bundle.description)
    positions = table.detach().float().cpu().numpy()[first : first + count]
    type_table = token_type_table(bundle.model, bundle.description)
    types = np.zeros((0, positions.shape[1])) if type_table is None else type_table.detach().float().cpu().numpy()
    name = "sinusoidal encodings" if bundle.description.positions == "fixed sinusoidal" else "position embeddings"
    return _geometry(name, positions, types)


def sinusoidal_embeddings(count: int, size: int) -> PositionEmbeddings:
    """The same views of the fixed sinusoidal encoding, at the model's hidden size, for comparison (seed 001)."""
    return _geometry("sinusoidal encodings", sinusoidal_encoding(count, size), np.zeros((0, size)))
