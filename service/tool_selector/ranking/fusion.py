"""Fusion of lexical and dense evidence, and the relevance bar behind "no useful match".

Ranking score (tuned on the dev split of ``../shared/bench``)::

    fused = w_lex * z(bm25) + (1 - w_lex) * z(cosine)

where ``z`` standardises a score over the catalog (``(x - mean) / std``), so neither arm
dominates by scale: BM25 is unbounded and catalog-dependent, cosine lives in a narrow band.
``w_lex`` grows with the pattern's length (``lexical_weight``): short patterns lean on the
embedding, long multi-step instructions on BM25.
A tool the pattern names exactly is lifted above every other tool (then ``exact_bonus``
more); failing an exact name, one a single edit away (a typo) is lifted the same way by
``near_name_bonus``.

Relevance bar (SPEC rule 4), on absolute evidence so it means the same in any catalog size:
``evidence = cosine + coverage_credit * coverage`` (``coverage``: the share of the pattern's
terms found in the tool's text). The answer is "no useful match" when no tool among the
top ``top_k`` by fused score reaches ``no_match_floor`` and the pattern names no tool; else
the tools reaching the lower per-tool ``dense_floor`` are returned. Without embeddings the
evidence is the coverage and both floors are ``coverage_floor``. The floors were tuned on
dev queries (positives) and on negatives built from them: BFCL queries against another
query's BFCL tool list, and queries of one dataset against 20 tools of another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tool_selector.ranking.dense import FloatArray


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Weights and thresholds of the fusion (tuned on the dev split of ../shared/bench)."""

    lexical_weight: float = 0.15
    long_lexical_weight: float = 0.4
    short_terms: int = 4
    long_terms: int = 16
    dense_floor: float = 0.2
    coverage_floor: float = 0.5
    exact_bonus: float = 10.0
    near_name_bonus: float = 5.0
    coverage_credit: float = 0.6
    no_match_floor: float = 0.27


def standardise(scores: FloatArray) -> FloatArray:
    """``(x - mean) / std`` over the catalog; all zeros when the scores are all equal."""
    if scores.size == 0:
        return scores
    std = float(scores.std())
    if std <= 1e-9 or scores.min() == scores.max():  # float32 rounding leaves std ~1e-8
        return np.zeros_like(scores)
    return np.asarray((scores - scores.mean()) / std, dtype=np.float32)


def lexical_weight(terms: int, params: FusionParams) -> float:
    """BM25's share for a pattern of ``terms`` terms: linear from short to long patterns.

    Short patterns (a few words, a question) lean on the embedding, which handles synonyms;
    long, multi-step instructions lean more on BM25, which credits each named step.
    """
    span = max(params.long_terms - params.short_terms, 1)
    t = min(max((terms - params.short_terms) / span, 0.0), 1.0)
    return params.lexical_weight + t * (params.long_lexical_weight - params.lexical_weight)


def fuse(
    bm25: FloatArray,
    dense: FloatArray | None,
    params: FusionParams,
    *,
    terms: int = 0,
) -> FloatArray:
    """One score per tool from BM25 scores and (optionally) cosine similarities."""
    lexical = standardise(bm25)
    if dense is None:
        return np.asarray(lexical, dtype=np.float32)
    w_lex = lexical_weight(terms, params)
    return np.asarray(w_lex * lexical + (1.0 - w_lex) * standardise(dense), dtype=np.float32)


def evidence(dense: float | None, coverage: float, params: FusionParams) -> float:
    """Absolute relevance evidence of one tool: ``cosine + coverage_credit * coverage``.

    Without an embedding (lexical path) it is the coverage alone.
    """
    if dense is None:
        return coverage
    return dense + params.coverage_credit * coverage


def clears_bar(dense: float | None, coverage: float, params: FusionParams) -> bool:
    """Whether one tool is relevant enough to be returned at all (the per-tool bar)."""
    floor = params.coverage_floor if dense is None else params.dense_floor
    return evidence(dense, coverage, params) >= floor


def is_match(best_evidence: float, lexical_only: bool, params: FusionParams) -> bool:
    """Whether the best candidate's evidence is a useful match (else: no useful match)."""
    floor = params.coverage_floor if lexical_only else params.no_match_floor
    return best_evidence >= floor
