"""Move a distilled static table's rows toward what its model says of whole sentences.

Model2Vec's distillation (``embeddings/distill.py``) gives each word piece the model's output
for that piece alone; a text's static vector, the weighted mean of its pieces' rows, then
points well away from the model's own vector of that text. Tokenlearn's idea
(Tulkens & van Dongen, the Model2Vec authors), written here as one ridge regression: for
sentences the model has encoded, the rows of the pieces they use move, by least squares,
so that each sentence's weighted-mean row points where the model's vector points, with a
penalty on moving away from the distilled row (so rare pieces stay near it, and pieces no
sentence uses stay as they are):

    minimise  || B R - s Y ||^2 + lambda || R - R0 ||^2

``B``: one row per sentence, its pieces' SIF weights over their sum (``weighted_means``);
``Y``: the model's unit sentence vectors, scaled by ``s``, the median norm of ``B R0``, so
both terms speak of rows of the distilled table's size; ``lambda``: ``alpha`` times the mean
diagonal of ``B^T B``. The normal equations are solved by conjugate gradients, every
dimension at once (the matrix is the same for each), from ``R0``.

How far it moves MiniLM's table toward its model, on sentences held out of the fit, and what
that does to the first answers: docs/quality.md, "The static table fitted to its model's
sentences".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.sparse import diags  # type: ignore[import-untyped]

from tool_selector.embeddings.pieces import piece_matrix
from tool_selector.ranking.dense import FloatArray

#: The penalty's weight against the mean squared norm of a sentence's pieces' weights.
ALPHA = 1.0
#: Bump when the fit or its sentences change (``distill.is_current`` rebuilds the table).
FIT_VERSION = 1
_ITERATIONS = 500
_TOLERANCE = 1e-6


def piece_counts(texts: Sequence[str], tokenizer: Any, vocabulary: int) -> Any:
    """One sparse row per text: how often each word piece occurs in it, read as
    ``StaticEncoder`` reads a text (``pieces.piece_matrix``). ``tokenizer``: a
    ``tokenizers.Tokenizer``'s word-piece model."""

    def pieces_of(words: set[str]) -> dict[str, bytes]:
        return {
            w: np.asarray([t.id for t in tokenizer.tokenize(w)], dtype=np.int32).tobytes()
            for w in words
        }

    counts = piece_matrix(texts, pieces_of, vocabulary).astype(np.float64)
    counts.sum_duplicates()
    return counts


def refit(
    rows: FloatArray, weights: FloatArray, counts: Any, targets: FloatArray, alpha: float = ALPHA
) -> FloatArray:
    """``rows`` (the distilled table, one row per piece) with the rows ``counts`` uses fitted
    so each text's weighted mean points along its row of ``targets`` (the model's vectors)."""
    used = np.unique(counts.indices)
    if not len(used):
        return rows.copy()
    mass = np.asarray(counts[:, used] @ weights[used].astype(np.float64)).ravel()
    means = diags(1.0 / np.maximum(mass, 1e-12)) @ counts[:, used] @ diags(weights[used])
    start = rows[used].astype(np.float64)
    scale = float(np.median(np.linalg.norm(means @ start, axis=1)))
    unit = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    gram = (means.T @ means).tocsr()
    penalty = alpha * float(gram.diagonal().mean())
    rhs = means.T @ (scale * unit.astype(np.float64)) + penalty * start
    fitted = rows.astype(np.float32, copy=True)
    fitted[used] = _solve(lambda v: gram @ v + penalty * v, rhs, start)
    return fitted


def _solve(apply: Any, rhs: np.ndarray[Any, Any], start: np.ndarray[Any, Any]) -> Any:
    """Conjugate gradients on every column of ``rhs`` at once (one symmetric positive
    definite matrix, given as ``apply``), from ``start``; each column its own step sizes."""
    x = start.copy()
    residual = rhs - apply(x)
    direction = residual.copy()
    norms = np.sum(residual * residual, axis=0)
    bound = (_TOLERANCE * np.linalg.norm(rhs, axis=0)) ** 2
    for _ in range(_ITERATIONS):
        if np.all(norms <= bound):
            break
        step = apply(direction)
        alpha = norms / np.maximum(np.sum(direction * step, axis=0), 1e-300)
        x += direction * alpha
        residual -= step * alpha
        new = np.sum(residual * residual, axis=0)
        direction = residual + direction * (new / np.maximum(norms, 1e-300))
        norms = new
    return x


def median_cosine(rows: FloatArray, weights: FloatArray, counts: Any, targets: FloatArray) -> float:
    """The median cosine between each text's static vector and its row of ``targets``."""
    static = np.asarray(counts @ (rows * weights[:, None]), dtype=np.float64)
    static /= np.maximum(np.linalg.norm(static, axis=1, keepdims=True), 1e-12)
    unit = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    return float(np.median(np.sum(static * unit, axis=1)))
