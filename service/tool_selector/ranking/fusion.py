"""Fusion of lexical and dense evidence, and the relevance bar behind "no useful match".

Ranking score, a linear model over per-tool signals whose weights were fitted on the dev
split of every benchmark at once (listwise softmax loss, each set and query kind weighing
the same; Cao et al. 2007, ListNet)::

    fused = dense + lexical
    dense = w_cos * cos + w_z * z(cos) + w_rank * k / (k + rank(cos))
    lexical = explained * (w_spec * specificity + w_name * name + w_peak * (bm25 / max bm25)^3)
              + w_long * long(terms) * clip(z(bm25), -3, 10)

- ``specificity``: the IDF-weighted share of the pattern's terms a tool holds
  (``LexicalIndex.idf_coverage``): a word most tools share weighs little, and a word no
  tool holds still counts against every tool, so one rare shared word in a sentence
  counts as the small share it is (what z-scored BM25 got wrong on paraphrases).
- ``name``: how well the tool's bare name and the pattern match (``NameIndex.match``):
  siblings such as ``keyvault_key_get`` and ``keyvault_secret_get`` differ by one name
  word that the embedding blurs.
- ``explained``: the IDF-weighted share of the pattern that the top BM25 tools hold
  together: how much the lexical arm has to say about this pattern at all. A paraphrase
  shares few words with any tool, so its lexical evidence is damped and the embedding
  decides; a keyword pattern is explained whole.
- ``long``: 0 up to ``short_terms`` terms, 1 from ``long_terms`` on: long multi-step
  instructions credit every tool that one of their steps names, as BM25 does.
- ``z`` standardises over the catalog; ``rank(cos)`` is 1 for the most similar tool.

Without embeddings (the lexical path) ``fused = lexical + w_sub * subword``: the same score
with a weak stand-in for its dense half, so the two paths agree wherever the pattern's words
decide. ``subword`` is ``specificity`` over words cut to their first characters
(``LexicalIndex.subword_coverage``): ``configuration`` meets ``config``, ``frequent`` meets
``frequency``. It is what the dense arm would read in place of a shared word, so the hybrid
leaves it out (on the agent set's dev paraphrases it cost the hybrid 4.5 points of R@5 at
weight 1, where the embedding already reads them); on the lexical path it ranks, and counts
as evidence for, a pattern that shares no whole word with any tool.
A tool the pattern names exactly is lifted above every other tool (then ``exact_bonus``
more); failing an exact name, one a single edit away (a typo) is lifted by
``near_name_bonus``.

Relevance bar (SPEC rule 4), on absolute evidence so it means the same in any catalog size:
``evidence = cos + coverage_credit * specificity`` (lexical path:
``specificity + name + subword``).
The answer is "no useful match" when the pattern names no tool and no tool among the top
``top_k`` reaches ``no_match_floor``; else the tools reaching ``tool_floor`` are returned.
Both floors are English evidence: for a pattern read as not English, an answer the bar
leaves empty is the first ``top_k`` tools instead (``ranker.rank``'s ``abstain``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tool_selector.ranking.calibration import HYBRID, LEXICAL, Calibration
from tool_selector.ranking.dense import FloatArray


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Weights and thresholds of the fusion (fitted on the dev split of ../shared/bench).

    Dense half: ``cos_weight`` (raw cosine), ``z_weight`` (cosine standardised over the
    catalog), ``rank_weight`` (``rank_k / (rank_k + rank)``, reciprocal-rank style).
    Lexical half, damped by how much of the pattern the lexical arm explains:
    ``specificity_weight``, ``name_weight``, ``peak_weight`` (cubed BM25 over its
    maximum: only the best lexical matches count); undamped, ``long_weight`` on z-scored
    BM25 for patterns of ``short_terms`` .. ``long_terms`` terms and more. Lexical path
    only: ``subword_weight`` on sub-word specificity.
    ``explained_top``: how many top BM25 tools ``explained`` reads.
    Bar: ``coverage_credit`` (specificity's share of the evidence), ``no_match_floor`` (the
    best of the top ``top_k`` must reach it), ``tool_floor`` (each returned tool must), and
    ``lexical_floor`` for both on the lexical path.
    Calibration: ``relevance`` (and ``lexical_relevance`` on the lexical path) are the
    ``(fused score, probability)`` points ``relevance()`` interpolates, fitted on the dev
    split per ranking path.
    """

    cos_weight: float = 1.334
    z_weight: float = 0.643
    rank_weight: float = 1.9
    rank_k: int = 10
    specificity_weight: float = 4.257
    name_weight: float = 7.248
    peak_weight: float = 1.133
    long_weight: float = 0.441
    subword_weight: float = 0.2
    short_terms: int = 4
    long_terms: int = 16
    explained_top: int = 5
    exact_bonus: float = 10.0
    near_name_bonus: float = 5.0
    coverage_credit: float = 0.2
    no_match_floor: float = 0.15
    tool_floor: float = 0.12
    lexical_floor: float = 1e-6
    relevance: Calibration = HYBRID
    lexical_relevance: Calibration = LEXICAL


@dataclass(frozen=True, slots=True)
class Signals:
    """Per-tool evidence for one pattern over one catalog (arrays in catalog order).

    ``specificity`` and ``name`` as in the module docstring; ``explained`` in [0, 1];
    ``terms``: the pattern's distinct lexical terms; ``subword``: sub-word specificity
    (none: zeros).
    """

    bm25: FloatArray
    specificity: FloatArray
    name: FloatArray
    dense: FloatArray | None
    explained: float
    terms: int
    subword: FloatArray | None = None


def standardise(scores: FloatArray) -> FloatArray:
    """``(x - mean) / std`` over the catalog; all zeros when the scores are all equal."""
    if scores.size == 0:
        return scores
    std = float(scores.std())
    if std <= 1e-9 or scores.min() == scores.max():  # float32 rounding leaves std ~1e-8
        return np.zeros_like(scores)
    return np.asarray((scores - scores.mean()) / std, dtype=np.float32)


def length_share(terms: int, params: FusionParams) -> float:
    """0 for patterns of up to ``short_terms`` terms, 1 from ``long_terms``, linear between."""
    span = max(params.long_terms - params.short_terms, 1)
    return min(max((terms - params.short_terms) / span, 0.0), 1.0)


def ranks(scores: FloatArray) -> FloatArray:
    """1-based rank of every entry by descending score (ties by position)."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(scores), dtype=np.float32)
    out[order] = np.arange(1, len(scores) + 1, dtype=np.float32)
    return out


def lexical_score(s: Signals, params: FusionParams) -> FloatArray:
    """The lexical half of ``fused`` (module docstring); the whole score without embeddings."""
    top = float(s.bm25.max()) if s.bm25.size else 0.0
    peak = (s.bm25 / top) ** 3 if top > 0 else np.zeros_like(s.bm25)
    specific = (
        params.specificity_weight * s.specificity
        + params.name_weight * s.name
        + params.peak_weight * peak
    )
    long = params.long_weight * length_share(s.terms, params)
    return np.asarray(
        s.explained * specific + long * np.clip(standardise(s.bm25), -3.0, 10.0),
        dtype=np.float32,
    )


def dense_score(cos: FloatArray, params: FusionParams) -> FloatArray:
    """The dense half of ``fused``: raw, standardised and reciprocal-rank cosine."""
    return np.asarray(
        params.cos_weight * cos
        + params.z_weight * standardise(cos)
        + params.rank_weight * params.rank_k / (params.rank_k + ranks(cos)),
        dtype=np.float32,
    )


def fuse(s: Signals, params: FusionParams) -> FloatArray:
    """One score per tool (module docstring)."""
    lexical = lexical_score(s, params)
    if s.dense is None:
        if s.subword is None:
            return lexical
        return np.asarray(lexical + params.subword_weight * s.subword, dtype=np.float32)
    return np.asarray(lexical + dense_score(s.dense, params), dtype=np.float32)


def evidence(s: Signals, params: FusionParams) -> FloatArray:
    """Absolute relevance evidence per tool: ``cos + coverage_credit * specificity``.

    Without embeddings (lexical path) it is ``specificity + name + subword``: any shared
    term, name word or sub-word.
    """
    if s.dense is None:
        weak = 0.0 if s.subword is None else s.subword
        return np.asarray(s.specificity + s.name + weak, dtype=np.float32)
    return np.asarray(s.dense + params.coverage_credit * s.specificity, dtype=np.float32)


def relevance(fused: FloatArray, calibration: Calibration) -> FloatArray:
    """A tool's calibrated relevance in 0..1: the probability that a tool at that fused
    score is one the caller needs, interpolated between the ``(score, probability)`` points
    of ``calibration`` (an increasing map fitted by isotonic regression on the dev split of
    every set, ``python -m tool_selector.offline.evaluation.relevance fit``; Zadrozny &
    Elkan 2002), flat beyond its ends. A named tool, lifted above every other, takes the
    top point's probability."""
    xs = np.array([x for x, _ in calibration], dtype=np.float64)
    ps = np.array([p for _, p in calibration], dtype=np.float64)
    return np.asarray(np.interp(fused.astype(np.float64), xs, ps), dtype=np.float32)


def floors(lexical_only: bool, params: FusionParams) -> tuple[float, float]:
    """The bar as ``(no_match_floor, tool_floor)``: the best candidate's, then each tool's."""
    if lexical_only:
        return params.lexical_floor, params.lexical_floor
    return params.no_match_floor, params.tool_floor
