"""Dense similarity: cosine between L2-normalised query and tool embeddings."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def cosine_scores(query: FloatArray, matrix: FloatArray) -> FloatArray:
    """Cosine similarity of ``query`` (d,) to each row of ``matrix`` (n, d); inputs unit-length."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    return np.asarray(matrix @ query, dtype=np.float32)


def normalise_rows(matrix: FloatArray) -> FloatArray:
    """Scale each row to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)
