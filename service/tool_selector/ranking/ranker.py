"""Selection: from per-tool scores to the ordered answer, applying SPEC.md rules 1-5."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tool_selector.ranking.catalog import Catalog, normalise_name
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fusion import FusionParams, Signals, evidence, floors, fuse
from tool_selector.ranking.tokenize import name_joins, name_words, tokenize
from tool_selector_client.wire import Reason


@dataclass(frozen=True, slots=True)
class Query:
    """A search pattern, its lexical terms, its name words and adjacent name-word pairs
    (each distinct, in order)."""

    pattern: str
    terms: tuple[str, ...]
    name_terms: tuple[str, ...] = ()
    name_joins: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, pattern: str) -> Query:
        return cls(
            pattern=pattern,
            terms=tuple(dict.fromkeys(tokenize(pattern))),
            name_terms=tuple(name_words(pattern)),
            name_joins=tuple(name_joins(pattern)),
        )


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


def signals(
    catalog: Catalog, query: Query, bm25: FloatArray, dense: FloatArray | None, top: int
) -> Signals:
    """Everything the fusion reads about ``query`` over ``catalog`` (see ``fusion``)."""
    best = np.argsort(-bm25, kind="stable")[:top]
    return Signals(
        bm25=bm25,
        specificity=catalog.index.idf_coverage(query.terms),
        name=catalog.name_match(query.name_terms, query.name_joins),
        dense=dense,
        explained=catalog.index.explained(query.terms, best[bm25[best] > 0]),
        terms=len(query.terms),
        subword=None if dense is not None else catalog.index.subword_coverage(query.terms),
    )


def rank(
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

    Named tools (exact, else one edit away) first, then by fused score, ties by position
    in the request (deterministic). "No useful match" when the pattern names no tool and
    none of the first ``top_k`` reaches the no-match floor: then only always_keep names.
    Otherwise tools are taken in order while they clear the per-tool floor (a named tool
    always does). ``always_keep`` names count toward ``top_k``, best-ranked first.
    """
    sig = signals(catalog, query, bm25, dense, params.explained_top)
    exact, named = named_tools(catalog, query.pattern, params)
    fused = lift_named(catalog, query.pattern, fuse(sig, params), (exact, named), params)
    order = np.argsort(-fused, kind="stable")
    position = _positions(order)
    match_floor, tool_floor = floors(dense is None, params)
    strength = evidence(sig, params)
    no_match = not named and not bool((strength[order[:top_k]] >= match_floor).any())
    keep = {catalog.positions[n] for n in always_keep if n in catalog.positions}
    kept = sorted(keep, key=position.__getitem__)[:top_k]
    clears = strength >= tool_floor
    clears[list(named)] = True
    clears[kept] = False  # already chosen: their slots are counted in kept
    fits = [] if no_match else order[clears[order]][: top_k - len(kept)].tolist()
    chosen = sorted(set(kept) | set(fits), key=position.__getitem__)
    ev = Evidence(bm25=bm25, dense=dense, fused=fused)
    picked = tuple(_explain(catalog, query, i, ev=ev, exact=exact, keep=set(kept)) for i in chosen)
    ranked = tuple(catalog.texts[int(i)].name for i in order[:top_k])
    return Ranking(picked=picked, no_match=no_match, ranked=ranked)


def named_tools(catalog: Catalog, pattern: str, params: FusionParams) -> tuple[set[int], set[int]]:
    """The tools ``pattern`` names exactly, and those it names (exact, else one edit away)."""
    exact = set(catalog.exact_matches(pattern))
    named = exact or set(catalog.near_matches(pattern) if params.near_name_bonus else ())
    return exact, named


def lift_named(
    catalog: Catalog,
    pattern: str,
    fused: FloatArray,
    tools: tuple[set[int], set[int]],
    params: FusionParams,
) -> FloatArray:
    """``fused`` with the named tools (``named_tools``' pair) lifted above every other tool,
    least exact first (``_by_exactness``), by ``exact_bonus`` or ``near_name_bonus`` more."""
    exact, named = tools
    bonus = params.exact_bonus if exact else params.near_name_bonus
    return _lift(fused, _by_exactness(catalog, pattern, named), bonus)


def _positions(order: npt.NDArray[np.intp]) -> list[int]:
    """Inverse permutation of ``order``: the position of every tool in it."""
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return position.tolist()  # type: ignore[no-any-return]


def _lift(fused: FloatArray, groups: list[list[int]], bonus: float) -> FloatArray:
    """``fused`` with each group raised above every tool before it (a new array)."""
    out = fused.copy()
    for group in groups:
        out[group] += float(out.max() - out[group].min()) + bonus
    return out


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
