"""Selection: from per-tool scores to the ordered answer, applying SPEC.md rules 1-5."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from tool_selector.ranking.catalog import Catalog, normalise_name
from tool_selector.ranking.controls import BoolArray, fit_budget
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fusion import (
    FusionParams,
    Signals,
    descending,
    ensemble_evidence,
    evidence,
    floors,
    fuse,
    lexical_score,
    relevance,
)
from tool_selector.ranking.steps import interleave
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
    relevance: float


@dataclass(frozen=True, slots=True)
class Ranking:
    """The answer: picked tools best first; ``no_match`` when none cleared the relevance bar.

    ``ranked`` is the top ``top_k`` by fused score before the relevance bar (for evaluation).
    ``removed``: how many tools ``min_score`` and the budget left out (``Controls``).
    ``unmatched``: for an empty answer, the pattern's terms that no tool holds.
    ``learned_moved``: the scope's learned evidence changed the order's first ``top_k``.
    """

    picked: tuple[Picked, ...]
    no_match: bool
    ranked: tuple[str, ...] = ()
    removed: dict[str, int] = field(default_factory=dict)
    unmatched: tuple[str, ...] = ()
    learned_moved: bool = False

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.picked]


@dataclass(frozen=True, slots=True)
class Evidence:
    """Per-tool scores for one query over one catalog (arrays in catalog order), and the
    tools the filters leave in (``None``: all), the only ones an explanation's ranks count."""

    bm25: FloatArray
    dense: FloatArray | None
    fused: FloatArray
    relevance: FloatArray
    allowed: BoolArray | None = None


def signals(
    catalog: Catalog, query: Query, bm25: FloatArray, dense: FloatArray | None, top: int
) -> Signals:
    """Everything the fusion reads about ``query`` over ``catalog`` (see ``fusion``)."""
    return replace(_words(catalog, query, bm25, top, stand_in=dense is None), dense=dense)


def _words(
    catalog: Catalog, query: Query, bm25: FloatArray, top: int, *, stand_in: bool
) -> Signals:
    """``signals`` but the cosines (none): what the pattern's words say, the sub-word
    stand-in only where the ranking has no cosines (``stand_in``)."""
    best = descending(bm25)[:top]
    return Signals(
        bm25=bm25,
        specificity=catalog.index.idf_coverage(query.terms),
        name=catalog.name_match(query.name_terms, query.name_joins),
        dense=None,
        explained=catalog.index.explained(query.terms, best[bm25[best] > 0]),
        terms=len(query.terms),
        subword=catalog.index.subword_coverage(query.terms) if stand_in else None,
    )


@dataclass(frozen=True, slots=True)
class LexicalReading:
    """The part of what ``rank`` reads that needs no cosines, read ahead of them
    (``read_lexical``: a dense arm reads it while its second model encodes): the words'
    signals (those of a ranking with cosines: no sub-word stand-in), the lexical half of the
    fused score (``fusion.lexical_score``) and the tools the pattern names, for one catalog,
    query, BM25 array and params; ``rank`` takes it only for those very objects (``fits``)
    and only with cosines, else reads them itself."""

    catalog: Catalog
    query: Query
    bm25: FloatArray
    params: FusionParams
    words: Signals
    lexical: FloatArray
    named: tuple[set[int], set[int]]

    def fits(self, catalog: Catalog, query: Query, bm25: FloatArray, params: FusionParams) -> bool:
        """Whether this reading is of these objects (identity: no copy of them passes)."""
        same = (self.catalog, self.query, self.bm25, self.params)
        return all(a is b for a, b in zip(same, (catalog, query, bm25, params), strict=True))


def read_lexical(
    catalog: Catalog, query: Query, bm25: FloatArray, params: FusionParams
) -> LexicalReading:
    """``LexicalReading`` of ``query`` over ``catalog``: what ``rank`` with cosines would read
    of it first, the same arrays."""
    words = _words(catalog, query, bm25, params.explained_top, stand_in=False)
    named = named_tools(catalog, query.pattern, params)
    return LexicalReading(catalog, query, bm25, params, words, lexical_score(words, params), named)


@dataclass(frozen=True, slots=True)
class Controls:
    """The caller's controls as ``rank`` applies them (``None``: not sent, no effect).

    ``allowed``: the tools the filters leave in (``controls.allowed``); ``boost``: context
    evidence added to the fused score, and ``context_evidence`` counted by the relevance bar
    beside the pattern's (``context``); ``max_tools`` and ``max_bytes``: the
    budget (``controls.fit_budget``); ``min_score``: the least ``relevance`` a tool other
    than an ``always_keep`` one needs.
    """

    allowed: BoolArray | None = None
    boost: FloatArray | None = None
    context_evidence: FloatArray | None = None
    max_tools: int | None = None
    max_bytes: int | None = None
    min_score: float | None = None


NO_CONTROLS = Controls()


@dataclass(frozen=True, slots=True)
class Clause:
    """One step of a multi-step pattern (``steps.clauses``): its lexical query, its BM25
    scores and its cosines (``None``: the lexical path), as ``rank`` reads the whole one;
    ``reach``: its tools join the merge only from the whole order's first ``reach`` (0: any;
    ``StepRule.reach``)."""

    query: Query
    bm25: FloatArray
    dense: FloatArray | None
    reach: int = 0


def rank(
    catalog: Catalog,
    query: Query,
    *,
    bm25: FloatArray,
    dense: FloatArray | None,
    top_k: int,
    always_keep: Collection[str],
    params: FusionParams,
    controls: Controls = NO_CONTROLS,
    clauses: Sequence[Clause] = (),
    abstain: bool = True,
    bar_dense: FloatArray | None = None,
    learned: FloatArray | None = None,
    read_ahead: LexicalReading | None = None,
) -> Ranking:
    """At most ``top_k``: always_keep (present ones, counted), then the tools clearing the bar
    (``_verdicts``, on ``bar_dense`` if given; ``abstain``: ``_bar``), named tools first, then
    by fused score (``learned`` too), ties by position, ``clauses`` merged in; ``_read``."""
    sig, words = _read(catalog, query, bm25, dense, params=params, ahead=read_ahead)
    sig, allowed = replace(sig, bar_dense=bar_dense, learned=learned), controls.allowed
    fused, (exact, named), moved = _fused(catalog, query, (sig, words), (params, controls), top_k)
    order = descending(fused)
    no_match, clears = _verdicts(sig, order, named, (params, controls), top_k, abstain=abstain)
    if clauses and not named and not no_match:
        eligible = _eligible(catalog, always_keep, clears.copy(), allowed)
        order = _by_steps(order, catalog, clauses, (params, controls), eligible, top_k=top_k)
    open_order, position = _open(order, allowed), _positions(order)  # each tool's place in it
    kept = _kept(catalog, always_keep, allowed, position)[:top_k]
    clears = _in_order(clears, open_order, top_k, sig)
    no_match, ranked_in = _bar(
        open_order, clears, named, kept, no_match=no_match, top_k=top_k, abstain=abstain
    )
    score = relevance(fused, params.lexical_relevance if dense is None else params.relevance)
    chosen, removed = _cut(kept, ranked_in, top_k, score, catalog=catalog, controls=controls)
    ev, keep = Evidence(bm25, dense, fused, relevance=score, allowed=allowed), set(kept)
    chosen.sort(key=position.__getitem__)
    picked = tuple(_explain(catalog, query, i, ev=ev, exact=exact, keep=keep) for i in chosen)
    ranked = tuple(catalog.texts[int(i)].name for i in open_order[:top_k])
    return Ranking(picked, no_match, ranked, removed, _unmatched(catalog, query, picked), moved)


#: What ``_read`` gives beside the signals: ``named_tools``' pair and the lexical half of
#: the fused score when it was read ahead (``LexicalReading``; none: ``fuse`` computes it).
Words = tuple[tuple[set[int], set[int]], FloatArray | None]


def _read(
    catalog: Catalog,
    query: Query,
    bm25: FloatArray,
    dense: FloatArray | None,
    *,
    params: FusionParams,
    ahead: LexicalReading | None,
) -> tuple[Signals, Words]:
    """The signals, then ``named_tools``' pair and the lexical half of the fused score (none:
    ``fuse`` computes it): ``ahead``'s where it is a reading of these very objects and the
    ranking has cosines, else read now (the same values either way)."""
    if ahead is not None and dense is not None and ahead.fits(catalog, query, bm25, params):
        return replace(ahead.words, dense=dense), (ahead.named, ahead.lexical)
    sig = signals(catalog, query, bm25, dense, params.explained_top)
    return sig, (named_tools(catalog, query.pattern, params), None)


def _fused(
    catalog: Catalog,
    query: Query,
    read: tuple[Signals, Words],
    fusion: tuple[FusionParams, Controls],
    top_k: int,
) -> tuple[FloatArray, tuple[set[int], set[int]], bool]:
    """The fused score (the context's boost added) with the named tools lifted, the named
    pair (``read``'s, less the filtered), and whether the learned column changed the
    order's first ``top_k`` (``Ranking.learned_moved``). The learned term counts only where
    the ranking is unsure without it: its first tool's calibrated relevance below
    ``learn_below`` (a confident answer, a named tool's included, stands as it is)."""
    (sig, (pair, lexical)), (params, controls) = read, fusion
    named = _allowed_only(pair, controls.allowed)
    unlearned = _base(replace(sig, learned=None), params, controls, lexical)
    plain = lift_named(catalog, query.pattern, unlearned, named, params)
    if sig.learned is None:
        return plain, named, False
    calibration = params.lexical_relevance if sig.dense is None else params.relevance
    if float(relevance(plain.max(initial=0.0)[None], calibration)[0]) >= params.learn_below:
        return plain, named, False
    fused = lift_named(catalog, query.pattern, _base(sig, params, controls, lexical), named, params)
    first = descending(fused)[:top_k], descending(plain)[:top_k]
    return fused, named, not np.array_equal(*first)


def _verdicts(
    sig: Signals,
    order: npt.NDArray[np.intp],
    named: set[int],
    fusion: tuple[FusionParams, Controls],
    top_k: int,
    *,
    abstain: bool = True,
) -> tuple[bool, BoolArray]:
    """Whether the answer is "no useful match" (the pattern names no tool and none of the
    tools ``_judged`` reaches the no-match floor, on the first model's evidence nor, where
    the ranking reads an ensemble and the bar may abstain, on every model's:
    ``ensemble_evidence``), and each tool's per-tool floor verdict on the evidence that found
    the match, kept in ``order`` (``_in_order``). Without ``abstain`` the first model's
    verdict stands: ``_bar`` answers its empty answer with the first ``top_k`` tools."""
    params, controls = fusion
    bar, strength = floors(sig.dense is None, params), _strength(evidence(sig, params), controls)
    allowed = controls.allowed
    judged = _judged(order, allowed, top_k, sig)
    no_match = not named and not _reaches(strength, judged, bar[0])
    second = ensemble_evidence(sig, params) if no_match and abstain else None
    if second is not None:
        second = _strength(second, controls)
        if _reaches(second, judged, bar[0]):
            no_match, strength = False, second
    return no_match, _in_order(strength >= bar[1], _open(order, allowed), top_k, sig)


def _reaches(strength: FloatArray, tools: npt.NDArray[np.intp], floor: float) -> bool:
    """Whether any of ``tools`` has evidence at ``floor`` or above."""
    return bool((strength[tools] >= floor).any())


def _judged(
    order: npt.NDArray[np.intp], allowed: BoolArray | None, top_k: int, sig: Signals
) -> npt.NDArray[np.intp]:
    """The tools whose evidence decides "no useful match": the order's first ``top_k`` (the
    filters' survivors); where the bar reads other cosines than the ranking
    (``Signals.bar_dense``), every tool the filters leave, so the answer is empty only
    when the pattern has nothing in common with any tool (SPEC rule 4), not when the tool
    the first model finds near is ranked past the first places."""
    tools = _open(order, allowed)
    return tools if sig.bar_dense is not None else tools[:top_k]


def _unmatched(catalog: Catalog, query: Query, picked: tuple[Picked, ...]) -> tuple[str, ...]:
    """For an empty answer, the pattern's terms that no tool holds (else none)."""
    return () if picked else tuple(t for t in query.terms if not catalog.index.holds(t))


def _open(order: npt.NDArray[np.intp], allowed: BoolArray | None) -> npt.NDArray[np.intp]:
    """``order`` less the tools the filters removed."""
    return order if allowed is None else order[allowed[order]]


def _by_steps(
    order: npt.NDArray[np.intp],
    catalog: Catalog,
    clauses: Sequence[Clause],
    fusion: tuple[FusionParams, Controls],
    eligible: BoolArray,
    *,
    top_k: int,
) -> npt.NDArray[np.intp]:
    """Each clause's own order, merged into the first ``top_k`` places of the whole
    ``order`` (``steps.interleave``, its tools within the clauses' ``reach``) among the tools
    the answer may hold (``_eligible``): the whole order's first such tool stays first, so
    the answer's first tool is the same. A clause is fused as the whole pattern is (its
    weights, the context's boost), with no named-tool lift (a clause of three words or more
    names no tool)."""
    params, controls = fusion
    top = params.explained_top
    sigs = (signals(catalog, c.query, c.bm25, c.dense, top) for c in clauses)
    lists = [descending(_base(sig, params, controls)) for sig in sigs]
    return interleave(order, lists, eligible, top_k, max(c.reach for c in clauses))


def _eligible(
    catalog: Catalog, always_keep: Collection[str], clears: BoolArray, allowed: BoolArray | None
) -> BoolArray:
    """The tools an answer may hold: those that clear the floor (``clears``, a new array) or
    that ``always_keep`` names, less those the filters removed."""
    clears[[catalog.positions[n] for n in always_keep if n in catalog.positions]] = True
    return clears if allowed is None else clears & allowed


def _bar(
    order: npt.NDArray[np.intp],
    clears: BoolArray,
    named: set[int],
    kept: list[int],
    *,
    no_match: bool,
    top_k: int,
    abstain: bool,
) -> tuple[bool, list[int]]:
    """Whether the answer is "no useful match" (``no_match``, ``_verdicts``: the pattern
    names no tool and no judged tool reaches the no-match floor; then only always_keep
    names), and the tools of ``order`` taken in order while they clear the per-tool floor
    (``clears``; a named tool always does; ``_clearing``). Without ``abstain`` (a pattern
    read as not English, whose evidence the floors, set on English requests, cannot judge),
    an answer the bar leaves empty is the first ``top_k`` tools of ``order`` instead."""
    ranked_in = [] if no_match else _clearing(order, clears, named, kept)
    if ranked_in or abstain:
        return no_match, ranked_in
    return False, [i for i in order[:top_k].tolist() if i not in kept]


def _base(
    sig: Signals, params: FusionParams, controls: Controls, lexical: FloatArray | None = None
) -> FloatArray:
    """The fused score (its lexical half ``lexical`` where read ahead), plus the context's
    boost when there is one."""
    fused = fuse(sig, params, lexical=lexical)
    boost = controls.boost
    return fused if boost is None else np.asarray(fused + boost, dtype=np.float32)


def _strength(own: FloatArray, controls: Controls) -> FloatArray:
    """Each tool's evidence for the relevance bar: the pattern's (``own``), or the context's
    when that is stronger (a follow-up says little; its conversation says the rest)."""
    if controls.context_evidence is None:
        return own
    return np.asarray(np.maximum(own, controls.context_evidence), dtype=np.float32)


def _clearing(
    order: npt.NDArray[np.intp], clears: BoolArray, named: set[int], kept: list[int]
) -> list[int]:
    """``order`` cut to the tools that clear the per-tool floor (a named tool always does),
    less the ``kept`` ones, whose slots are already counted."""
    clears[list(named)] = True
    clears[kept] = False
    return order[clears[order]].tolist()  # type: ignore[no-any-return]


def _in_order(
    clears: BoolArray, order: npt.NDArray[np.intp], top_k: int, sig: Signals
) -> BoolArray:
    """The per-tool floor's verdicts (``clears``, changed in place) where the bar reads other
    cosines than the ranking (``Signals.bar_dense``): a tool ranked above one
    the answer would take clears too (the answer's reach in ``order``: up to its
    ``top_k``-th clearing tool), so the answer keeps the ranking's order
    whole: it never skips a tool for one ranked below it, and is cut only after the last
    tool that clears when fewer than ``top_k`` do (docs/quality.md, "The floor keeps the
    ranking's order"). Elsewhere the verdicts stand as they are. Read on the whole order
    before a multi-step merge (what the merge may draw on), then on the merged one."""
    if sig.bar_dense is not None:
        passed = np.flatnonzero(clears[order])
        if passed.size:
            clears[order[: passed[min(top_k, passed.size) - 1] + 1]] = True
    return clears


def _kept(
    catalog: Catalog, always_keep: Collection[str], allowed: BoolArray | None, position: list[int]
) -> list[int]:
    """The ``always_keep`` tools present (and not filtered out), best-ranked first."""
    keep = {catalog.positions[n] for n in always_keep if n in catalog.positions}
    if allowed is not None:
        keep = {i for i in keep if allowed[i]}
    return sorted(keep, key=position.__getitem__)


def _allowed_only(
    tools: tuple[set[int], set[int]], allowed: BoolArray | None
) -> tuple[set[int], set[int]]:
    """``named_tools``' pair without the tools the filters removed."""
    if allowed is None:
        return tools
    exact, named = tools
    return {i for i in exact if allowed[i]}, {i for i in named if allowed[i]}


def _cut(
    kept: list[int],
    ranked: list[int],
    top_k: int,
    score: FloatArray,
    *,
    catalog: Catalog,
    controls: Controls,
) -> tuple[list[int], dict[str, int]]:
    """The answer's tools from ``kept`` (always taken first) then ``ranked`` (best first),
    within ``top_k`` and the controls, and how many tools ``min_score`` and the budget left
    out of what ``top_k`` alone would have answered."""
    plain = kept + ranked[: top_k - len(kept)]
    c = controls
    if c.min_score is None and c.max_tools is None and c.max_bytes is None:
        return plain, {}
    floor = c.min_score
    sure = ranked if floor is None else [i for i in ranked if score[i] >= floor]
    count = top_k if c.max_tools is None else min(top_k, c.max_tools)
    chosen = fit_budget(kept + sure, catalog.traits.size, count, c.max_bytes)
    unsure = set(plain) - set(kept + sure)
    return chosen, {
        "min_score": len(unsure),
        "budget": len(set(plain) - set(chosen) - unsure),
    }


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


def _rank_of(scores: FloatArray, i: int, allowed: BoolArray | None) -> int:
    """``i``'s rank by ``scores`` among the tools the filters leave in: a tool they removed
    was never a candidate, so it never stands above one."""
    above = scores > scores[i]
    return 1 + int(np.count_nonzero(above if allowed is None else above & allowed))


def _explain(
    catalog: Catalog, query: Query, i: int, *, ev: Evidence, exact: set[int], keep: set[int]
) -> Picked:
    reason: Reason = "exact_name" if i in exact else "always_keep" if i in keep else "ranked"
    return Picked(
        name=catalog.texts[i].name,
        reason=reason,
        score=round(float(ev.fused[i]), 6),
        bm25_score=round(float(ev.bm25[i]), 6),
        bm25_rank=_rank_of(ev.bm25, i, ev.allowed),
        dense_similarity=None if ev.dense is None else round(float(ev.dense[i]), 6),
        dense_rank=None if ev.dense is None else _rank_of(ev.dense, i, ev.allowed),
        matched_terms=catalog.index.matched(i, query.terms),
        relevance=round(float(ev.relevance[i]), 4),
    )
