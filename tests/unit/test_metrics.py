import pytest

from tool_selector.offline.evaluation.metrics import (
    MetricSums,
    Scoreboard,
    complete_at,
    ndcg_at,
    recall_at,
    reciprocal_rank,
)

RANKED = ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize(
    ("gold", "k", "expected"),
    [(["a"], 1, 1.0), (["b"], 1, 0.0), (["b", "f"], 5, 0.5), (["x"], 5, 0.0), ([], 5, 0.0)],
    ids=["hit-at-1", "miss-at-1", "half", "absent", "no-gold"],
)
def test_recall_at(gold: list[str], k: int, expected: float) -> None:
    assert recall_at(RANKED, gold, k) == expected


@pytest.mark.parametrize(
    ("gold", "expected"),
    [(["a"], 1.0), (["c"], 1 / 3), (["f"], 1 / 6), (["x"], 0.0)],
    ids=["first", "third", "past-k-still-counts", "absent"],
)
def test_reciprocal_rank(gold: list[str], expected: float) -> None:
    assert reciprocal_rank(RANKED, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        (["a"], 1.0),
        (["b"], 1 / 1.5849625),  # 1/log2(3)
        (["a", "b"], 1.0),
        (["b", "a"], 1.0),
        (["a", "c"], (1 + 0.5) / (1 + 1 / 1.5849625)),
        (["f"], 0.0),
    ],
    ids=["top", "second", "both-top", "order-of-gold-irrelevant", "gap", "past-k"],
)
def test_ndcg_at_5(gold: list[str], expected: float) -> None:
    assert ndcg_at(RANKED, gold, 5) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("gold", "expected"),
    [(["a", "e"], 1.0), (["a", "f"], 0.0), ([], 0.0)],
    ids=["all-in", "one-out", "no-gold"],
)
def test_complete_at_5(gold: list[str], expected: float) -> None:
    assert complete_at(RANKED, gold, 5) == expected


def test_metric_sums_average_in_percent_and_count_empty_answers() -> None:
    sums = MetricSums(k=5)
    sums.add(["a", "b"], ["a"], seconds=0.002)
    sums.add([], ["a"], seconds=0.004)
    assert sums.summary() == {
        "r@1": 50.0,
        "r@5": 50.0,
        "ndcg@5": 50.0,
        "mrr": 50.0,
        "complete@5": 50.0,
        "empty%": 50.0,
        "ms/query": 3.0,
    }


def test_a_no_match_query_counts_as_abstention_never_as_recall() -> None:
    sums = MetricSums(k=5)
    sums.add(["a"], ["a"])
    sums.add([], [])
    sums.add(["b"], [])
    summary = sums.summary()
    assert (summary["r@5"], summary["empty%"], summary["abstain%"]) == (100.0, 0.0, 50.0)
    assert (sums.queries, sums.no_match) == (1, 2)


def test_the_scoreboard_aggregates_per_category_and_overall() -> None:
    board = Scoreboard(k=5)
    for category, ranked, gold in [("kw", ["a"], ["a"]), ("kw", ["b"], ["a"]), ("none", [], [])]:
        board.add("service", category, ranked, gold, 0.0)
    cats = board.categories()
    assert cats["kw"]["rankers"]["service"]["r@1"] == 50.0
    assert (cats["none"]["queries"], cats["none"]["no_match"]) == (0, 1)
    assert board.summary()["service"]["abstain%"] == 100.0
