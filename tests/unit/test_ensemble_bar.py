"""Every encoder reads the relevance bar: where the first model (MiniLM) finds no useful
match, the answer is empty only when the ensemble's evidence (the mean of every model's
cosines, ``Signals.dense``) stays under ``ensemble_floor`` too (``ranker._verdicts``,
``fusion.ensemble_evidence``). "will I need an umbrella in Porto tomorrow" over the agent
catalog, as the eval encodes it in a batch: MiniLM 0.14 under its 0.15, bge-small 0.62,
their mean 0.38 over 0.31."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

import numpy as np
import pytest

from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.fitted import CROSS, HYBRID, HYBRID_ENSEMBLE_FLOOR, STATIC
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.ranker import NO_CONTROLS, Clause, Controls, Query, rank
from tool_selector_client.wire import Tool

NAMES = ["alpha_tool", "bravo_tool", "charlie_tool", "delta_tool"]
CATALOG = build_catalog([Tool(name=n, description=f"{n} does things") for n in NAMES])
#: MiniLM's cosines: every tool under the hybrid's no-match floor (0.15)
WEAK_FIRST = [0.14, 0.10, 0.05, 0.02]
#: the mean of both models' cosines: alpha's over the hybrid's ensemble floor (0.31)
STRONG_MEAN = [0.38, 0.33, 0.20, 0.10]
NONE = np.zeros(len(NAMES), dtype=np.float32)


def answer(
    mean: list[float],
    *,
    first: list[float] | None = WEAK_FIRST,
    params: FusionParams = HYBRID,
    controls: Controls = NO_CONTROLS,
    always_keep: Collection[str] = (),
    abstain: bool = True,
    clauses: tuple[Clause, ...] = (),
) -> tuple[list[str], bool]:
    """The names and the no-match verdict when the ranking reads ``mean`` (both models'
    cosines) and the bar ``first`` (MiniLM's; none: one model, no second reading)."""
    ranking = rank(
        CATALOG,
        Query.parse("zzz qqq"),  # no word of any tool: only the cosines count
        bm25=NONE,
        dense=np.array(mean, dtype=np.float32),
        top_k=3,
        always_keep=always_keep,
        params=params,
        controls=controls,
        clauses=clauses,
        abstain=abstain,
        bar_dense=None if first is None else np.array(first, dtype=np.float32),
    )
    return list(ranking.names), ranking.no_match


def test_the_ensemble_answers_a_need_the_first_model_reads_weakly() -> None:
    """Alpha's mean (0.38) reaches the ensemble floor: not "no match"; each tool then clears
    on the ensemble's evidence shifted onto the first model's floors (0.38 - 0.16 = 0.22 and
    0.33 - 0.16 = 0.17 over the tool floor 0.12; charlie's 0.20 - 0.16 under it)."""
    assert answer(STRONG_MEAN) == (["alpha_tool", "bravo_tool"], False)


def test_empty_when_every_model_reads_it_weakly() -> None:
    assert answer([0.29, 0.25, 0.20, 0.10]) == ([], True)


@pytest.mark.parametrize(
    ("best", "no_match"),
    [(HYBRID_ENSEMBLE_FLOOR - 1e-3, True), (HYBRID_ENSEMBLE_FLOOR + 1e-3, False)],
    ids=["just under", "just over"],
)
def test_the_floor_is_a_floor(best: float, no_match: bool) -> None:
    assert answer([best, 0.1, 0.1, 0.1])[1] is no_match


@pytest.mark.parametrize(
    ("params", "first"),
    [(replace(HYBRID, ensemble_floor=None), WEAK_FIRST), (HYBRID, None), (STATIC, WEAK_FIRST)],
    ids=["no floor", "one model, no second reading", "the static table's own query"],
)
def test_the_first_models_verdict_stands_without_a_second_reading(
    params: FusionParams, first: list[float] | None
) -> None:
    """No ``ensemble_floor`` (the static table's own query has none) or no second reading
    (one model: no ``bar_dense``, the ranking's cosines are the bar's, here MiniLM's weak
    ones): empty, as before."""
    mean = STRONG_MEAN if first is not None else WEAK_FIRST
    assert answer(mean, first=first, params=params) == ([], True)


def test_the_cold_path_reads_the_ensemble_on_its_own_floors() -> None:
    """The cold path's floors (no match 0.14, ensemble 0.16, tool 0.08): a mean of 0.17
    answers where the tables' MiniLM half (0.10) does not; 0.15 does not."""
    first = [0.10, 0.05, 0.05, 0.05]
    assert answer([0.17, 0.05, 0.05, 0.05], first=first, params=CROSS) == (["alpha_tool"], False)
    assert answer([0.15, 0.05, 0.05, 0.05], first=first, params=CROSS) == ([], True)


def test_a_match_the_first_model_finds_is_unchanged() -> None:
    """Where MiniLM finds the match, its evidence picks the tools; the ensemble's is not
    read (a high mean adds no tool the first model's floor leaves out)."""
    got = answer([0.9, 0.9, 0.9, 0.9], first=[0.5, 0.05, 0.05, 0.05])
    assert got == (["alpha_tool"], False)


def test_without_abstention_the_first_top_k_stand() -> None:
    """A pattern the bar may not abstain on (read as maybe not English): MiniLM's empty
    verdict gives the first ``top_k`` tools, as before; the ensemble does not cut them."""
    assert answer(STRONG_MEAN, abstain=False) == (NAMES[:3], False)


def test_a_filtered_tool_does_not_lift_the_verdict() -> None:
    """Alpha alone reaches the ensemble floor; the filters leave it out: still no match."""
    allowed = np.array([False, True, True, True])
    assert answer([0.38, 0.25, 0.2, 0.1], controls=Controls(allowed=allowed)) == ([], True)


def test_always_keep_joins_an_answer_the_ensemble_fills() -> None:
    got = answer(STRONG_MEAN, always_keep=("delta_tool",))
    assert got == (["alpha_tool", "bravo_tool", "delta_tool"], False)


def test_the_context_counts_beside_the_ensembles_evidence() -> None:
    """The context's evidence (charlie's 0.5) is taken where it is stronger than the
    ensemble's shifted evidence, as it is beside MiniLM's."""
    context = np.array([0.0, 0.0, 0.5, 0.0], dtype=np.float32)
    got = answer(STRONG_MEAN, controls=Controls(context_evidence=context))
    assert got == (["alpha_tool", "bravo_tool", "charlie_tool"], False)


def test_a_filled_answer_merges_its_steps() -> None:
    """A multi-step pattern the ensemble answers merges its clause's tools as any answer
    does (``_by_steps``, among the tools that clear: all four here): the clause's delta,
    fourth in the whole order, joins the three places after the whole's first tool."""
    mean = [0.38, 0.33, 0.30, 0.29]
    assert answer(mean) == (NAMES[:3], False)
    clause = Clause(Query.parse("yyy www"), bm25=NONE, dense=np.array([0.0, 0.0, 0.1, 0.9]))
    names, no_match = answer(mean, clauses=(clause,))
    assert (names[0], "delta_tool" in names, no_match) == ("alpha_tool", True, False)
