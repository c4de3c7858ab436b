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
``top_k`` (every tool, where the bar reads other cosines than the ranking: ``ranker._judged``)
reaches ``no_match_floor``; else the tools reaching ``tool_floor`` are returned.
Where an ensemble ranks and the bar reads its first model's cosines, every model reads it
too: a pattern the first model finds nothing for is still answered when the ensemble's
evidence reaches ``ensemble_floor`` (``ensemble_evidence``, shifted onto the first model's
floors, then picks the tools).
Both floors are English evidence: for a pattern read as not English, an answer the bar
leaves empty is the first ``top_k`` tools instead (``ranker.rank``'s ``abstain``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from tool_selector.ranking.calibration import Calibration
from tool_selector.ranking.dense import FloatArray


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Weights and thresholds of the fusion; the values each arm ships are in ``fitted``.

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
    ``lexical_floor`` for both on the lexical path. ``ensemble_floor`` (none: off): where the
    bar reads the first model's cosines of an ensemble (``Signals.bar_dense``) and finds no
    useful match, the ensemble's own evidence (every model's cosines, their mean) must stay
    under it too (``ranker._verdicts``): a need the first model alone reads weakly is still
    answered when the others read it.
    Calibration: ``relevance`` (and ``lexical_relevance`` on the lexical path) are the
    ``(fused score, probability)`` points ``relevance()`` interpolates, fitted on the dev
    split per ranking path.
    """

    cos_weight: float
    z_weight: float
    rank_weight: float
    rank_k: int
    specificity_weight: float
    name_weight: float
    peak_weight: float
    long_weight: float
    subword_weight: float
    short_terms: int
    long_terms: int
    explained_top: int
    exact_bonus: float
    near_name_bonus: float
    coverage_credit: float
    no_match_floor: float
    tool_floor: float
    lexical_floor: float
    relevance: Calibration
    lexical_relevance: Calibration
    learn_weight: float
    learn_below: float
    ensemble_floor: float | None = None


@dataclass(frozen=True, slots=True)
class Signals:
    """Per-tool evidence for one pattern over one catalog (arrays in catalog order).

    ``specificity`` and ``name`` as in the module docstring; ``explained`` in [0, 1];
    ``terms``: the pattern's distinct lexical terms; ``subword``: sub-word specificity
    (none: zeros); ``bar_dense``: the cosines the relevance bar reads when they are not
    ``dense`` (an ensemble's mean ranks; the floors are its first model's cosines);
    ``learned``: what the scope's model called after near searches (``ranking.learned``;
    none: no evidence).
    """

    bm25: FloatArray
    specificity: FloatArray
    name: FloatArray
    dense: FloatArray | None
    explained: float
    terms: int
    subword: FloatArray | None = None
    bar_dense: FloatArray | None = None
    learned: FloatArray | None = None


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


#: From how many entries ``descending`` sorts keys: below it the stable argsort is faster
#: (measured 2026-12-06: 300 entries 3.2 against 8.5 microseconds, 1,300 11.3 against 12.5,
#: 2,000 22.4 against 15.2, 4,000 50.8 against 22.6).
KEYED_FROM = 1500


def descending(scores: FloatArray) -> npt.NDArray[np.intp]:
    """The entries by descending score, ties by position: ``np.argsort(-scores,
    kind="stable")``, the same indices. From ``KEYED_FROM`` entries, one unsigned key per
    entry (the score's bits made to sort as the float does, then the position; every key
    distinct) sorted by numpy's vectorised sort, two to three times faster than the stable
    argsort at 4,000; fewer entries, NaN, another dtype or shape: the argsort itself."""
    negated = -scores
    n, keyed = len(negated), negated.dtype == np.float32 and negated.ndim == 1
    if not keyed or not KEYED_FROM <= n < 2**32 or np.isnan(negated).any():
        return np.argsort(negated, kind="stable")
    bits = (negated + np.float32(0.0)).view(np.uint32)  # -0.0 ties +0.0, as argsort has it
    bits = np.where(bits >> 31, ~bits, bits | np.uint32(1 << 31))  # sorts as the float
    keys = (bits.astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
    keys.sort()
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)


def ranks(scores: FloatArray) -> FloatArray:
    """1-based rank of every entry by descending score (ties by position)."""
    order = descending(scores)
    out = np.empty(len(scores), dtype=np.float32)
    out[order] = np.arange(1, len(scores) + 1, dtype=np.float32)
    return out


def _peak(s: Signals) -> FloatArray:
    """Cubed BM25 over its maximum: only the best lexical matches count."""
    top = float(s.bm25.max()) if s.bm25.size else 0.0
    return (s.bm25 / top) ** 3 if top > 0 else np.zeros_like(s.bm25)


def _cos(s: Signals) -> FloatArray:
    if s.dense is None:
        raise ValueError("a dense term needs cosines")
    return s.dense


def _subword(s: Signals) -> FloatArray:
    return np.zeros_like(s.bm25) if s.subword is None else s.subword


def _learned(s: Signals) -> FloatArray:
    return np.zeros_like(s.bm25) if s.learned is None else s.learned


Half = Literal["dense", "lexical", "stand-in", "learned"]


@dataclass(frozen=True, slots=True)
class Term:
    """One term of the fused score: ``weight`` names its ``FusionParams`` field, ``half`` the
    arm it reads (``dense``: the cosines; ``lexical``: the pattern's words; ``stand-in``: the
    lexical path's weak stand-in for the dense half; ``learned``: what the scope's model
    called after near searches, ``ranking.learned``), ``damped`` whether ``explained`` scales
    it, ``fitted`` what sets its weight (``fit``: ``offline/evaluation/fit.py``'s listwise
    fit, which reads ``FITTED_TERMS``; ``hand``: chosen by a sweep, docs/quality.md), and
    ``score`` its contribution at weight ``w``."""

    weight: str
    half: Half
    damped: bool
    fitted: Literal["fit", "hand"]
    score: Callable[[Signals, FusionParams, float], FloatArray]


#: Every term of ``fuse``, in the order it sums them (module docstring); the fit's features,
#: the foreign-language damping (``fitted.multilingual_params_of``) and the digest read it.
TERMS = (
    Term("cos_weight", "dense", False, "fit", lambda s, p, w: w * _cos(s)),
    Term("z_weight", "dense", False, "fit", lambda s, p, w: w * standardise(_cos(s))),
    Term(
        "rank_weight",
        "dense",
        False,
        "fit",
        lambda s, p, w: w * p.rank_k / (p.rank_k + ranks(_cos(s))),
    ),
    Term("specificity_weight", "lexical", True, "fit", lambda s, p, w: w * s.specificity),
    Term("name_weight", "lexical", True, "fit", lambda s, p, w: w * s.name),
    Term("peak_weight", "lexical", True, "fit", lambda s, p, w: w * _peak(s)),
    Term(
        "long_weight",
        "lexical",
        False,
        "fit",
        lambda s, p, w: (w * length_share(s.terms, p)) * np.clip(standardise(s.bm25), -3.0, 10.0),
    ),
    Term("subword_weight", "stand-in", False, "hand", lambda s, p, w: w * _subword(s)),
    Term("learn_weight", "learned", False, "hand", lambda s, p, w: w * _learned(s)),
)
#: The terms the listwise fit sets, in its feature order.
FITTED_TERMS = tuple(t for t in TERMS if t.fitted == "fit")


def _sum(terms: Iterable[Term], s: Signals, params: FusionParams) -> FloatArray | None:
    """The terms' contributions added up in order (``None``: no term)."""
    total: FloatArray | None = None
    for term in terms:
        part = term.score(s, params, getattr(params, term.weight))
        total = part if total is None else total + part
    return total


def lexical_score(s: Signals, params: FusionParams) -> FloatArray:
    """The lexical half of ``fused`` (module docstring); the whole score without embeddings."""
    lexical = [t for t in TERMS if t.half == "lexical"]
    damped = _sum((t for t in lexical if t.damped), s, params)
    undamped = _sum((t for t in lexical if not t.damped), s, params)
    total = s.explained * (0.0 if damped is None else damped)
    return np.asarray(total if undamped is None else total + undamped, dtype=np.float32)


def dense_score(s: Signals, params: FusionParams) -> FloatArray:
    """The dense half of ``fused``: raw, standardised and reciprocal-rank cosine."""
    total = _sum((t for t in TERMS if t.half == "dense"), s, params)
    return np.asarray(np.zeros_like(s.bm25) if total is None else total, dtype=np.float32)


def columns(s: Signals, params: FusionParams) -> list[FloatArray]:
    """Per fitted term (``FITTED_TERMS`` order), what it adds to ``fuse`` at weight 1: the
    features the fit's weights multiply (``fuse`` is linear in them)."""
    return [
        np.asarray((s.explained if t.damped else 1.0) * t.score(s, params, 1.0), np.float32)
        for t in FITTED_TERMS
    ]


def fuse(s: Signals, params: FusionParams, *, lexical: FloatArray | None = None) -> FloatArray:
    """One score per tool (module docstring); ``lexical``: ``lexical_score(s, params)`` when
    the caller has it already (``ranker.LexicalReading``), else it is computed here."""
    fused = _unlearned(s, params, lexical)
    if s.learned is None:
        return fused
    learned = _sum((t for t in TERMS if t.half == "learned"), s, params)
    return fused if learned is None else np.asarray(fused + learned, dtype=np.float32)


def _unlearned(s: Signals, params: FusionParams, lexical: FloatArray | None) -> FloatArray:
    """``fuse`` without the learned term: the lexical half (``lexical`` if given), then the
    dense half (or its stand-in on the lexical path)."""
    lexical = lexical_score(s, params) if lexical is None else lexical
    if s.dense is not None:
        return np.asarray(lexical + dense_score(s, params), dtype=np.float32)
    if s.subword is None:
        return lexical
    stand_in = _sum((t for t in TERMS if t.half == "stand-in"), s, params)
    return lexical if stand_in is None else np.asarray(lexical + stand_in, dtype=np.float32)


def evidence(s: Signals, params: FusionParams) -> FloatArray:
    """Absolute relevance evidence per tool: ``cos + coverage_credit * specificity``.

    Without embeddings (lexical path) it is ``specificity + name + subword``: any shared
    term, name word or sub-word.
    """
    cos = s.dense if s.bar_dense is None else s.bar_dense
    if cos is None:
        weak = 0.0 if s.subword is None else s.subword
        return np.asarray(s.specificity + s.name + weak, dtype=np.float32)
    return np.asarray(cos + params.coverage_credit * s.specificity, dtype=np.float32)


def ensemble_evidence(s: Signals, params: FusionParams) -> FloatArray | None:
    """``evidence`` on every model's cosines (``dense``, an ensemble's mean) where the bar
    reads its first model's (``bar_dense``), shifted onto the first model's floors: less
    ``ensemble_floor - no_match_floor``; ``None`` where there is no such second reading."""
    if s.bar_dense is None or s.dense is None or params.ensemble_floor is None:
        return None
    shift = params.ensemble_floor - params.no_match_floor
    return np.asarray(evidence(replace(s, bar_dense=None), params) - shift, dtype=np.float32)


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
