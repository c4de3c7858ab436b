import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tool_selector.ranking.fusion import (
    FusionParams,
    evidence,
    fuse,
    is_match,
    lexical_weight,
    standardise,
)

PARAMS = FusionParams()


def test_standardise_centres_and_scales() -> None:
    z = standardise(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    assert z.mean() == pytest.approx(0.0, abs=1e-6)
    assert z.std() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(
    "scores", [[0.0, 0.0, 0.0], [0.4], []], ids=["all-equal", "single", "empty"]
)
def test_standardise_of_constant_scores_is_zero(scores: list[float]) -> None:
    assert not standardise(np.array(scores, dtype=np.float32)).any()


@settings(max_examples=200, deadline=None)
@given(st.floats(-1.0, 100.0, width=32), st.integers(1, 2000))
def test_standardise_of_any_repeated_value_is_zero(value: float, n: int) -> None:
    assert not standardise(np.full(n, value, dtype=np.float32)).any()


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (1, PARAMS.lexical_weight),
        (PARAMS.short_terms, PARAMS.lexical_weight),
        (PARAMS.long_terms, PARAMS.long_lexical_weight),
        (100, PARAMS.long_lexical_weight),
    ],
    ids=["one-word", "short-end", "long-end", "beyond-long"],
)
def test_lexical_weight_ends(terms: int, expected: float) -> None:
    assert lexical_weight(terms, PARAMS) == pytest.approx(expected)


def test_lexical_weight_grows_with_pattern_length() -> None:
    weights = [lexical_weight(n, PARAMS) for n in range(1, 30)]
    assert weights == sorted(weights)
    assert weights[0] < weights[-1]


def test_long_patterns_let_bm25_overrule_a_dense_lean() -> None:
    bm25 = np.array([9.0, 0.0, 0.0, 0.0], dtype=np.float32)
    dense = np.array([0.25, 0.35, 0.10, 0.10], dtype=np.float32)
    assert int(np.argmax(fuse(bm25, dense, PARAMS, terms=2))) == 1
    assert int(np.argmax(fuse(bm25, dense, PARAMS, terms=20))) == 0


def test_fuse_without_dense_orders_by_bm25() -> None:
    bm25 = np.array([1.0, 3.0, 2.0], dtype=np.float32)
    assert np.argsort(-fuse(bm25, None, PARAMS)).tolist() == [1, 2, 0]


@pytest.mark.parametrize(
    ("dense", "coverage", "expected"),
    [(0.5, 0.0, 0.5), (0.2, 0.5, 0.2 + 0.5 * PARAMS.coverage_credit), (None, 0.75, 0.75)],
    ids=["dense-only", "coverage-credited", "lexical-path"],
)
def test_evidence(dense: float | None, coverage: float, expected: float) -> None:
    assert evidence(dense, coverage, PARAMS) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("best", "lexical_only", "expected"),
    [
        (PARAMS.no_match_floor, False, True),
        (PARAMS.no_match_floor - 0.01, False, False),
        (PARAMS.coverage_floor, True, True),
        (PARAMS.coverage_floor - 0.01, True, False),
    ],
    ids=["hybrid-at-floor", "hybrid-below", "lexical-at-floor", "lexical-below"],
)
def test_is_match_thresholds(best: float, lexical_only: bool, expected: bool) -> None:
    assert is_match(best, lexical_only, PARAMS) is expected


def test_per_tool_bar_is_below_the_no_match_floor() -> None:
    assert PARAMS.dense_floor < PARAMS.no_match_floor
