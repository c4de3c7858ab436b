"""The relevance bar keeps the ranking's order whole where it reads other cosines than the
ranking (``rank``'s ``bar_dense``: MiniLM's, the ranking both models'): a tool ranked above
one the answer would take (up to its ``top_k``-th clearing tool) clears too
(``ranker._in_order``), so the answer never skips a tool for one ranked below it; when fewer
than ``top_k`` clear, the floor still cuts below the last one."""

from __future__ import annotations

import numpy as np
import pytest

from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.fitted import HYBRID
from tool_selector.ranking.ranker import Clause, Query, rank
from tool_selector_client.wire import Tool

NAMES = ["alpha_tool", "bravo_tool", "charlie_tool", "delta_tool", "echo_tool", "foxtrot_tool"]
CATALOG = build_catalog([Tool(name=n, description=f"{n} does things") for n in NAMES])
#: what ranks: one cosine per tool, best first in catalog order (the two models' mean)
RANKING = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], dtype=np.float32)


def answer(
    evidence: list[float],
    top_k: int = 5,
    always_keep: tuple[str, ...] = (),
    ranking_cosines: np.ndarray = RANKING,
) -> list[str]:
    """The answer's names when the bar reads ``evidence`` (MiniLM's cosines) per tool."""
    ranking = rank(
        CATALOG,
        Query.parse("zzz qqq"),  # no word of any tool: the order is the cosines'
        bm25=np.zeros(len(NAMES), dtype=np.float32),
        dense=ranking_cosines,
        top_k=top_k,
        always_keep=always_keep,
        params=HYBRID,
        bar_dense=np.array(evidence, dtype=np.float32),
    )
    return list(ranking.names)


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        # bravo falls under the floor but charlie, below it, clears: bravo stays
        ([0.5, 0.05, 0.5, 0.05, 0.05, 0.05], ["alpha_tool", "bravo_tool", "charlie_tool"]),
        # nothing clears below alpha: the floor cuts as before
        ([0.5, 0.05, 0.05, 0.05, 0.05, 0.05], ["alpha_tool"]),
        # every place clears
        ([0.5] * 6, NAMES[:5]),
        # a tool past the first places that clears would join the answer: the tools ranked
        # above it clear too, so the answer skips none of them for it
        ([0.5, 0.05, 0.05, 0.05, 0.05, 0.5], NAMES[:5]),
        # fewer than top_k clear: the reach is the last that does, and all above it clear
        ([0.5, 0.05, 0.5, 0.05, 0.5, 0.05], NAMES[:5]),
    ],
    ids=["a weak tool above a clearing one", "tail cut", "all clear", "no skip", "reach"],
)
def test_a_tool_ranked_above_a_clearing_one_clears(
    evidence: list[float], expected: list[str]
) -> None:
    assert answer(evidence) == expected


def test_always_keep_counts_toward_the_places() -> None:
    """With echo kept and three places: charlie clears within the order's first three, so
    bravo, above it, clears too; echo takes one of the three places, alpha and bravo the
    other two, and charlie is left out for want of room."""
    got = answer([0.5, 0.05, 0.5, 0.05, 0.05, 0.05], top_k=3, always_keep=("echo_tool",))
    assert got == ["alpha_tool", "bravo_tool", "echo_tool"]


def test_no_useful_match_stays_empty() -> None:
    """Empty when neither MiniLM's cosines nor the ensemble's (the ranking's, a tenth of
    ``RANKING``: all under ``HYBRID_ENSEMBLE_FLOOR``) reach the floors."""
    assert answer([0.05] * 6, ranking_cosines=RANKING / 10) == []


def test_a_multi_step_merge_keeps_what_the_order_rule_clears() -> None:
    """A multi-step pattern's merge (``ranker._by_steps``) draws on the tools the answer may
    hold as the order rule sees them: alpha, under the floor but ranked above bravo, which
    clears, stays first, and the clause's foxtrot joins after it."""
    clause = Clause(
        Query.parse("yyy www"),
        bm25=np.zeros(len(NAMES), dtype=np.float32),
        dense=RANKING[::-1].copy(),  # the clause's order is the whole's, reversed
    )
    ranking = rank(
        CATALOG,
        Query.parse("zzz qqq"),
        bm25=np.zeros(len(NAMES), dtype=np.float32),
        dense=RANKING,
        top_k=3,
        always_keep=(),
        params=HYBRID,
        bar_dense=np.array([0.05, 0.5, 0.05, 0.05, 0.05, 0.5], np.float32),
        clauses=[clause],
    )
    assert list(ranking.names) == ["alpha_tool", "foxtrot_tool", "bravo_tool"]
