"""Selection: from per-tool scores to the ordered answer, applying SPEC.md rules 1-5."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tool_selector.ranking.catalog import Catalog, normalise_name
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fusion import FusionParams, evidence, fuse, is_match
from tool_selector.ranking.tokenize import tokenize

Reason = Literal["ranked", "always_keep", "exact_name"]


@dataclass(frozen=True, slots=True)
class Query:
    """A search pattern and its lexical terms (distinct, in order)."""

    pattern: str
    terms: tuple[str, ...]

    @classmethod
    def parse(cls, pattern: str) -> Query:
        return cls(pattern=pattern, terms=tuple(dict.fromkeys(tokenize(pattern))))


@dataclass(frozen=True, slots=True)
class Picked:
    """One returned tool with the evidence behind it."""

    name: str
    reason: Reason
    score: float
    bm25_score: float
    bm25_rank: int
    dense_similarity: float | None
    dense_rank: int | None
    matched_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ranking:
    """The answer: picked tools best first; ``no_match`` when none cleared the relevance bar.

    ``ranked`` is the top ``top_k`` by fused score before the relevance bar (for evaluation).
    """

    picked: tuple[Picked, ...]
    no_match: bool
    ranked: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.picked]


@dataclass(frozen=True, slots=True)
class Evidence:
    """Per-tool scores for one query over one catalog (arrays in catalog order)."""

    bm25: FloatArray
    dense: FloatArray | None
    fused: FloatArray

    def dense_at(self, i: int) -> float | None:
        return None if self.dense is None else float(self.dense[i])


def select(
    catalog: Catalog,
    query: Query,
    *,
    bm25: FloatArray,
    dense: FloatArray | None,
    top_k: int,
    always_keep: Collection[str],
    params: FusionParams,
) -> Ranking:
    """Pick at most ``top_k`` tools: always_keep (present ones) plus those clearing the bar.

    "No useful match" (``no_match``) when the pattern names no tool and no tool among the
    first ``top_k`` by fused score reaches the no-match floor: then only always_keep names
    are returned. Otherwise tools are taken in fused order while they clear the per-tool bar
    (a tool the pattern names always does).

    Order is by fused score, ties by position in the request, so the answer is
    deterministic. ``always_keep`` names count toward ``top_k``; if there are more of them
    than ``top_k``, the best-scoring ones are kept.
    """
    fused = fuse(bm25, dense, params, terms=len(query.terms))
    exact = set(catalog.exact_matches(query.pattern))
    named = exact or set(catalog.near_matches(query.pattern) if params.near_name_bonus else ())
    bonus = params.exact_bonus if exact else params.near_name_bonus
    for group in _by_exactness(catalog, query.pattern, named):
        fused[group] += float(fused.max() - fused[group].min()) + bonus  # above every other tool
    ev = Evidence(bm25=bm25, dense=dense, fused=fused)
    ranks = np.argsort(-fused, kind="stable")
    order: list[int] = ranks.tolist()  # in C: a per-item int() cost 1 ms at 4,000 tools
    position = np.empty_like(ranks)
    position[ranks] = np.arange(len(ranks))
    coverage = catalog.index.coverage(query.terms)

    def strength(i: int) -> float:
        return evidence(ev.dense_at(i), float(coverage[i]), params)

    best = max((strength(i) for i in order[:top_k]), default=0.0)
    no_match = not named and not is_match(best, dense is None, params)
    keep = {catalog.positions[n] for n in always_keep if n in catalog.positions}
    kept = sorted(keep, key=position.__getitem__)[:top_k]
    chosen = set(kept)
    if not no_match:
        floor = params.coverage_floor if dense is None else params.dense_floor
        for i in order:
            if len(chosen) >= top_k:
                break
            if i in named or strength(i) >= floor:
                chosen.add(i)
            elif dense is None and bm25[i] <= 0:
                break  # lexical only: the rest of the order has no matching term either
    picked = tuple(
        _explain(catalog, query, i, ev=ev, exact=exact, keep=keep)
        for i in sorted(chosen, key=position.__getitem__)
    )
    ranked = tuple(catalog.texts[i].name for i in order[:top_k])
    return Ranking(picked=picked, no_match=no_match, ranked=ranked)


def _by_exactness(catalog: Catalog, pattern: str, named: set[int]) -> list[list[int]]:
    """Named tools grouped least exact first: bare name, full name up to case, name as typed.

    Each group is lifted above everything before it, so ``create_issue`` ranks the tool named
    ``create_issue`` above ``mcp__github__create_issue``, and ``Read_File`` ranks
    ``Read_File`` above ``read_file``.
    """
    key, typed = normalise_name(pattern), pattern.strip()
    groups: list[list[int]] = [[], [], []]
    for i in sorted(named):
        name = catalog.texts[i].name
        groups[2 if name == typed else 1 if normalise_name(name) == key else 0].append(i)
    return [g for g in groups if g]


def _rank_of(scores: FloatArray, i: int) -> int:
    return 1 + int(np.count_nonzero(scores > scores[i]))


def _explain(
    catalog: Catalog, query: Query, i: int, *, ev: Evidence, exact: set[int], keep: set[int]
) -> Picked:
    reason: Reason = "exact_name" if i in exact else "always_keep" if i in keep else "ranked"
    return Picked(
        name=catalog.texts[i].name,
        reason=reason,
        score=round(float(ev.fused[i]), 6),
        bm25_score=round(float(ev.bm25[i]), 6),
        bm25_rank=_rank_of(ev.bm25, i),
        dense_similarity=None if ev.dense is None else round(float(ev.dense[i]), 6),
        dense_rank=None if ev.dense is None else _rank_of(ev.dense, i),
        matched_terms=catalog.index.matched(i, query.terms),
    )
