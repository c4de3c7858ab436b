"""Sibling clusters: tools whose texts are near-identical to the ranker.

Two tools are siblings when both arms of the ranking see them as nearly the same text: the
cosine of their embeddings (the matrix the service ranks with) is at least ``dense_min``,
and their BM25 similarity is at least ``bm25_min``. BM25 similarity of ``a`` to ``b`` is
``bm25(a's words -> b) / bm25(a's words -> a)`` over the catalog's own index (how close
``b`` comes to ``a``'s own score when ``a``'s text is the query), taken both ways, the
smaller kept. Each tool and its siblings make a group (``groups``), and each group is
reported with the words only each member has (``words.apart``): the words an
operator should make lead its description.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.lint.words import apart, quoted
from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector.ranking.dense import FloatArray, normalise_rows
from tool_selector.ranking.text import ToolText
from tool_selector_client.catalog_lint import Finding


@dataclass(frozen=True, slots=True)
class Thresholds:
    """How alike two tools must be to both arms to be siblings (tuned on azure_mcp's dev
    split: the pairs behind its R@1 losses, docs/quality.md)."""

    dense_min: float = 0.88
    bm25_min: float = 0.2


def bm25_similarity(texts: Sequence[ToolText], index: LexicalIndex) -> FloatArray:
    """(n, n) BM25 similarity, symmetric (see the module); the diagonal is 1."""
    n = len(texts)
    sim = np.zeros((n, n), dtype=np.float32)
    for i, text in enumerate(texts):
        words = text.name_tokens() + text.description_tokens() + text.search_tokens()
        query = list(dict.fromkeys(words))
        scores = index.scores(query)
        if scores[i] > 0:
            sim[i] = scores / scores[i]
    return np.minimum(sim, sim.T)


def dense_similarity(matrix: FloatArray) -> FloatArray:
    """(n, n) cosine of the tools' embeddings."""
    unit = normalise_rows(np.asarray(matrix, dtype=np.float32))
    return np.asarray(unit @ unit.T, dtype=np.float32)


def groups(dense: FloatArray | None, bm25: FloatArray, limits: Thresholds) -> list[list[int]]:
    """Sibling groups: each tool with every tool alike to it, a group inside another
    dropped; groups may overlap (a tool alike to two that are not alike to each other is in
    both of their groups; linking by chains grew groups of 100+ tools on azure_mcp)."""
    alike = bm25 >= limits.bm25_min
    if dense is not None:
        alike &= dense >= limits.dense_min
    np.fill_diagonal(alike, False)
    found = {tuple(sorted({i, *np.nonzero(alike[i])[0].tolist()})) for i in range(len(alike))}
    sets = [set(g) for g in found if len(g) > 1]
    return sorted(sorted(g) for g in sets if not any(g < other for other in sets))


def siblings(
    texts: Sequence[ToolText],
    index: LexicalIndex,
    matrix: FloatArray | None,
    limits: Thresholds | None = None,
) -> list[Finding]:
    """A ``siblings`` finding per group, with the words that tell its members apart."""
    limits = limits or Thresholds()
    bm25 = bm25_similarity(texts, index)
    dense = None if matrix is None else dense_similarity(matrix)
    out = []
    for group in groups(dense, bm25, limits):
        block = np.ix_(group, group)
        words = apart(texts, group)
        out.append(
            Finding(
                kind="siblings",
                tools=[texts[i].name for i in group],
                detail=f"{len(group)} tools the ranker can hardly tell apart",
                fix=_fix(words),
                apart=words,
                dense=None if dense is None else round(float(dense[block].min()), 3),
                bm25=round(float(bm25[block].min()), 3),
            )
        )
    return out


def _fix(words: dict[str, list[str]]) -> str:
    bare = [n for n, w in words.items() if not w]
    if bare:
        return (
            f"{', '.join(bare)}: no word of its text is its own in this group; write what "
            "sets it apart (its object, its result) first in its description or search_text"
        )
    leads = "; ".join(f"{quoted(w[:3])} for {n}" for n, w in words.items())
    return f"make the words that set each apart lead its description or search_text: {leads}"
