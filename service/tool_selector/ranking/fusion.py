"""Fusion of lexical and dense evidence, and the relevance bar behind "no useful match".

``fused = w_lex * bm25 / max(bm25) + w_dense * cosine`` (max-normalised BM25 so a catalog's
best lexical match is worth 1, cosine as is). A tool clears the relevance bar when its
cosine reaches ``dense_floor`` or at least ``coverage_floor`` of the query's terms occur in
it; a pattern naming a tool exactly always clears it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tool_selector.ranking.dense import FloatArray


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Weights and thresholds of the fusion (tuned on the dev split of ../shared/bench)."""

    lexical_weight: float = 0.4
    dense_weight: float = 0.6
    dense_floor: float = 0.3
    coverage_floor: float = 0.5
    exact_bonus: float = 10.0


def fuse(bm25: FloatArray, dense: FloatArray | None, params: FusionParams) -> FloatArray:
    """One score per tool from BM25 scores and (optionally) cosine similarities."""
    top = float(bm25.max()) if bm25.size else 0.0
    lexical = bm25 / top if top > 0 else np.zeros_like(bm25)
    if dense is None:
        return np.asarray(lexical, dtype=np.float32)
    return np.asarray(
        params.lexical_weight * lexical + params.dense_weight * dense, dtype=np.float32
    )


def clears_bar(dense: float | None, coverage: float, params: FusionParams) -> bool:
    """Whether one tool is relevant enough to return on its own merit."""
    if coverage >= params.coverage_floor:
        return True
    return dense is not None and dense >= params.dense_floor
