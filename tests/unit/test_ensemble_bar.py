"""Every encoder reads the relevance bar: where the first model (MiniLM) finds no useful
match, the answer is empty only when the ensemble's evidence (the mean of every model's
cosines, ``Signals.dense``) stays under ``ensemble_floor`` too (``ranker._verdicts``,
``fusion.ensemble_evidence``). "will I need an umbrella in Porto tomorrow" over the agent
catalog: MiniLM 0.14 under its 0.15, bge-small 0.62, their mean 0.38 over 0.31."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.fitted import CROSS, ENSEMBLE_FLOOR, HYBRID, STATIC
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.ranker import Query, rank
from tool_selector_client.wire import Tool

NAMES = ["alpha_tool", "bravo_tool", "charlie_tool", "delta_tool"]
CATALOG = build_catalog([Tool(name=n, description=f"{n} does things") for n in NAMES])
#: MiniLM's cosines: every tool under the hybrid's no-match floor (0.15)
WEAK_FIRST = np.array([0.14, 0.10, 0.05, 0.02], dtype=np.float32)


def answer(
    mean: list[float], params: FusionParams = HYBRID, first: np.ndarray = WEAK_FIRST
) -> tuple[list[str], bool]:
    """The names and the no-match verdict when the ranking reads ``mean`` (both models'
    cosines) and the bar ``first`` (MiniLM's)."""
    ranking = rank(
        CATALOG,
        Query.parse("zzz qqq"),  # no word of any tool: only the cosines count
        bm25=np.zeros(len(NAMES), dtype=np.float32),
        dense=np.array(mean, dtype=np.float32),
        top_k=3,
        always_keep=(),
        params=params,
        bar_dense=first,
    )
    return list(ranking.names), ranking.no_match


def test_the_ensemble_answers_a_need_the_first_model_reads_weakly() -> None:
    """Alpha's mean (0.38) reaches the ensemble floor: not "no match"; each tool then clears
    on the ensemble's evidence shifted onto the first model's floors (0.38 - 0.16 = 0.22 and
    0.33 - 0.16 = 0.17 over the tool floor 0.12; charlie's 0.20 - 0.16 under it)."""
    assert answer([0.38, 0.33, 0.20, 0.10]) == (["alpha_tool", "bravo_tool"], False)


def test_empty_when_every_model_reads_it_weakly() -> None:
    assert answer([0.29, 0.25, 0.20, 0.10]) == ([], True)


def test_the_floor_is_a_floor() -> None:
    """Just under ``ENSEMBLE_FLOOR``: still empty; at it: answered."""
    under = ENSEMBLE_FLOOR - 1e-3
    assert answer([under, 0.1, 0.1, 0.1]) == ([], True)
    assert answer([ENSEMBLE_FLOOR + 1e-3, 0.1, 0.1, 0.1])[1] is False


def test_off_without_a_floor_and_on_a_single_model() -> None:
    """No ``ensemble_floor`` (the static table's own query) or no second reading (one model:
    no ``bar_dense``): the first model's floors alone decide, as before."""
    assert answer([0.38, 0.33, 0.2, 0.1], params=replace(HYBRID, ensemble_floor=None)) == (
        [],
        True,
    )
    single = rank(
        CATALOG,
        Query.parse("zzz qqq"),
        bm25=np.zeros(len(NAMES), dtype=np.float32),
        dense=WEAK_FIRST,
        top_k=3,
        always_keep=(),
        params=HYBRID,
    )
    assert (list(single.names), single.no_match) == ([], True)
    assert STATIC.ensemble_floor is None


def test_a_match_the_first_model_finds_is_unchanged() -> None:
    """Where MiniLM finds the match, its evidence picks the tools; the ensemble's is not
    read (a high mean adds no tool the first model's floor leaves out)."""
    first = np.array([0.5, 0.05, 0.05, 0.05], dtype=np.float32)
    assert answer([0.9, 0.9, 0.9, 0.9], first=first) == (["alpha_tool"], False)


@pytest.mark.parametrize(
    ("params", "floor"), [(HYBRID, ENSEMBLE_FLOOR), (CROSS, CROSS.ensemble_floor)]
)
def test_each_dense_path_has_its_floor_over_its_no_match_floor(
    params: FusionParams, floor: float | None
) -> None:
    """The hybrid and the cold path (tables against both models' query vectors) each read
    the ensemble; its floor lies over the first model's (the mean runs higher: bge-small's
    cosines do)."""
    assert floor is not None
    assert floor > params.no_match_floor
