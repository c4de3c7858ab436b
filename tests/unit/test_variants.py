"""The fusion-variants tool on the tiny agent fixture with the fake encoder."""

import math
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tool_selector.offline.evaluation.dataset import load_dataset
from tool_selector.offline.evaluation.variants import (
    BASE,
    VARIANTS,
    SetRows,
    collect,
    columns,
    fit_weights,
    losses,
    report,
    score,
    top,
)
from tool_selector.pipeline.selector import Selector
from tool_selector_client.wire import SearchRequest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "agent_mini"


@pytest.fixture(scope="module")
def selector() -> Selector:
    return Selector(encoder=HashingEncoder(), embed_deadline=math.inf)


@pytest.fixture(scope="module")
def rows(selector: Selector) -> SetRows:
    return collect(selector, load_dataset(FIXTURE.parent, str(FIXTURE)), "all")


def test_rows_are_the_queries_with_gold_tools(rows: SetRows) -> None:
    assert rows.rows
    assert all(r.gold and set(r.arms) == {"bm25", "bm25+params", "dense", "rrf"} for r in rows.rows)


def test_the_shipped_variant_ranks_as_the_service_does(rows: SetRows, selector: Selector) -> None:
    w = fit_weights([rows], None)
    tools = list(load_dataset(FIXTURE.parent, str(FIXTURE)).tools)
    for row in rows.rows:
        ranked = selector.select(SearchRequest(pattern=row.pattern, tools=tools)).ranking.ranked
        got = [rows.catalog.texts[i].name for i in top(rows, row, None, w)]
        assert got == list(ranked)


def test_a_variant_column_replaces_or_adds(rows: SetRows) -> None:
    sig = rows.rows[0].signals
    names, x = columns(sig, VARIANTS["long-clip-3"])
    assert (names, x.shape[1]) == (list(BASE), len(BASE))
    names, x = columns(sig, VARIANTS["lexical-rank"])
    assert (names[-1], x.shape[1]) == ("lexical rank", len(BASE) + 1)


def test_a_refitted_variant_has_finite_weights_one_per_column(rows: SetRows) -> None:
    w = fit_weights([rows], VARIANTS["query-conditioned"], min_category=1)
    assert w.shape == (3 * len(BASE),)
    assert np.isfinite(w).all()


def test_losses_name_the_cells_below_the_best_arm() -> None:
    cell = {"variant@1": [0.0, 1.0], "variant@5": [1.0, 1.0]}
    cell |= {
        f"{a}@{k}": [1.0, 1.0] for a in ("bm25", "bm25+params", "dense", "rrf") for k in (1, 5)
    }
    assert losses({("set", "all"): cell}, 2) == ["set all R@1 50.0 < bm25 100.0"]
    assert losses({("set", "all"): cell}, 3) == []


def test_the_report_scores_every_set_and_category(rows: SetRows) -> None:
    cells = score([rows], None, fit_weights([rows], None))
    assert {c for d, c in cells} >= {"all"} | {r.category for r in rows.rows}
    assert report("refit", [rows], 1, min_category=1).startswith("== refit: ")


def test_nothing_to_fit_is_an_error(rows: SetRows) -> None:
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_weights([rows], VARIANTS["refit"], min_category=100)
