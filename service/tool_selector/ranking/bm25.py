"""BM25 over tool text, via ``bm25s`` (sparse-matrix BM25; ~100x faster than ``rank_bm25``).

Score (Lucene variant, Robertson & Zaragoza 2009; bm25s ``method="lucene"``):
``sum_t idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``, which never goes negative, so a term
shared by most tools of a small catalog still counts a little instead of penalising.
Field weighting is by repetition: name words count ``name_weight`` times (BM25F-lite).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import numpy.typing as npt

from tool_selector.ranking.text import ToolText

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """How many times each field's words are repeated in the BM25 document."""

    name: int = 3
    namespace: int = 1
    description: int = 1
    params: int = 1


def document_tokens(text: ToolText, weights: FieldWeights) -> list[str]:
    """The BM25 document of one tool: its fields' words, each field repeated by weight."""
    return (
        text.name_tokens() * weights.name
        + text.namespace_tokens() * weights.namespace
        + text.description_tokens() * weights.description
        + text.param_tokens() * weights.params
    )


class LexicalIndex:
    """A BM25 index over one catalog's tool documents."""

    def __init__(
        self,
        documents: Sequence[Sequence[str]],
        k1: float = 1.2,
        b: float = 0.75,
        method: str = "lucene",
    ) -> None:
        self._size = len(documents)
        self._vocab = frozenset(t for doc in documents for t in doc)
        self._bm25 = bm25s.BM25(k1=k1, b=b, method=method)
        if self._vocab:  # bm25s cannot index a corpus without a single token
            self._bm25.index([list(d) for d in documents], show_progress=False)

    def __len__(self) -> int:
        return self._size

    def scores(self, query_tokens: Sequence[str]) -> FloatArray:
        """BM25 score of every document for the query, in document order (zeros if no overlap)."""
        known = [t for t in query_tokens if t in self._vocab]
        if not known or not self._size:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)
