"""Leave-one-set-out: which sets feed each fit (the held-out one never does), and the
service measured with the fitted weights on the held-out set."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import load_dataset
from tool_selector.offline.evaluation.fit import WEIGHTS, Block, Fit
from tool_selector.offline.evaluation.loso import (
    Fold,
    HeldOut,
    Row,
    Score,
    fold_blocks,
    folds,
    leave_one_out,
    lower,
    table,
)
from tool_selector.offline.evaluation.metrics import recall_at
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import HYBRID
from tool_selector_client.wire import SearchRequest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "agent_mini"
SETS = ("alpha", "beta", "gamma")


def block(dataset: str, category: str = "c") -> Block:
    x, y = np.zeros((1, 2, len(WEIGHTS)), np.float32), np.array([[1.0, 0.0]], np.float32)
    return Block(dataset, category, x, y, 1.0)


BLOCKS = [block(s, c) for s in SETS for c in ("c1", "c2")]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["a", "b"], [Fold("a", ("b",)), Fold("b", ("a",))]),
        (["a", "b", "c"], [Fold("a", ("b", "c")), Fold("b", ("a", "c")), Fold("c", ("a", "b"))]),
        (["a", "b", "a"], [Fold("a", ("b",)), Fold("b", ("a",))]),
    ],
    ids=["two sets", "three sets", "a name twice counts once"],
)
def test_each_set_is_held_out_once_and_fitted_on_the_others(
    names: list[str], expected: list[Fold]
) -> None:
    assert folds(names) == expected


@pytest.mark.parametrize("names", [[], ["a"], ["a", "a"]], ids=["none", "one", "one twice"])
def test_fewer_than_two_sets_are_refused(names: list[str]) -> None:
    with pytest.raises(ValueError, match="at least two sets"):
        folds(names)


@pytest.mark.parametrize("held", SETS)
def test_a_folds_blocks_are_the_other_sets_only(held: str) -> None:
    fold = next(f for f in folds(SETS) if f.held_out == held)
    chosen = fold_blocks(BLOCKS, fold)
    assert {b.dataset for b in chosen} == set(SETS) - {held}
    assert len(chosen) == 2 * (len(SETS) - 1)  # every category of every other set


def test_a_fold_naming_its_held_out_set_as_training_still_leaves_it_out() -> None:
    assert fold_blocks(BLOCKS, Fold("alpha", ("alpha", "beta"))) == BLOCKS[2:4]


class Recorder:
    """A fitter and a measure that write down what they were given."""

    def __init__(self) -> None:
        self.fitted: list[set[str]] = []
        self.measured: list[tuple[str, float | None]] = []

    def fit(self, blocks: Sequence[Block]) -> Fit:
        self.fitted.append({b.dataset for b in blocks})
        # a distinct weight per fit, so the measure can tell the fits apart
        weights = {n: float(len(self.fitted)) for n in WEIGHTS}
        return Fit(weights, 0.0, 0.0, 0.0, 1)

    def measure(self, name: str, weights: Mapping[str, float] | None) -> Score:
        tag = None if weights is None else weights[WEIGHTS[0]]
        self.measured.append((name, tag))
        return Score(50.0, 80.0 if tag is None else 80.0 + tag, 10)


def test_the_held_out_set_never_feeds_its_fit_and_every_weighting_is_measured() -> None:
    rec = Recorder()
    rows = leave_one_out(BLOCKS, SETS, rec.measure, rec.fit)
    assert rec.fitted == [set(SETS), {"beta", "gamma"}, {"alpha", "gamma"}, {"alpha", "beta"}]
    assert [r.held_out for r in rows] == list(SETS)
    for n, (row, fitted) in enumerate(zip(rows, rec.fitted[1:], strict=True)):
        assert row.held_out not in fitted
        assert set(row.train) == fitted
        # shipped, the pooled fit (the first), then its own fold's fit
        assert rec.measured[3 * n : 3 * n + 3] == [
            (row.held_out, None),
            (row.held_out, 1.0),
            (row.held_out, float(n + 2)),
        ]
        assert row.held.r5 == 80.0 + n + 2


def score(r1: float, r5: float) -> Score:
    return Score(r1, r5, 100)


@pytest.mark.parametrize(
    ("held", "worse"),
    [
        ((score(50, 80), score(50, 80)), []),
        ((score(51, 81), score(50, 80)), []),
        ((score(49.9, 81), score(50, 80)), ["b"]),
        ((score(51, 79.9), score(50, 80)), ["b"]),
    ],
    ids=["equal", "higher", "R@1 lower", "R@5 lower"],
)
def test_a_fit_is_kept_only_when_no_held_out_set_is_lower(
    held: tuple[Score, Score], worse: list[str]
) -> None:
    same = Row("a", ("b",), score(50, 80), score(50, 80), score(50, 80), {})
    row = Row("b", ("a",), held[1], held[1], held[0], {})
    assert lower([same, row]) == worse
    assert ("not kept" in table([same, row])) == bool(worse)


def selector() -> Selector:
    return Selector(
        encoder=HashingEncoder(),
        catalogs=CatalogStore(1_000),
        queries=BoundedLRU(1_000),
        embed_deadline=math.inf,
    )


def test_the_measure_is_the_services_answer_with_the_weights_replaced() -> None:
    data = load_dataset(FIXTURE.parent, str(FIXTURE))
    base = selector()
    measure = HeldOut(base, {"mini": data}, split="all")
    shipped = measure("mini", None)
    assert shipped.queries == sum(1 for q in data.queries if q.gold)
    plain, tools = selector(), list(data.tools)
    recalls = [
        recall_at(plain.select(SearchRequest(pattern=q.text, tools=tools)).ranking.names, q.gold, 5)
        for q in data.queries
        if q.gold
    ]
    assert shipped.r5 == round(100 * float(np.mean(recalls)), 1)
    weighted = measure.weighted({"cos_weight": 9.0})
    assert weighted.rules.hybrid == replace(HYBRID, cos_weight=9.0)
    assert weighted.catalogs is base.catalogs
    assert weighted.queries is base.queries
    calls = len(base.encoder.calls)  # type: ignore[union-attr]
    measure("mini", {"cos_weight": 9.0})
    assert len(base.encoder.calls) == calls  # type: ignore[union-attr]  # nothing encoded again


def test_leave_one_out_measures_the_hybrid_only(capsys: pytest.CaptureFixture[str]) -> None:
    from tool_selector.offline.evaluation.fit import main  # noqa: PLC0415

    assert main(["--leave-one-out", "--arm", "cross"]) == 2
    assert "--arm model only" in capsys.readouterr().err
