from dataclasses import replace
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tool_selector.ranking import fusion
from tool_selector.ranking.fitted import CROSS, HYBRID, STATIC
from tool_selector.ranking.fusion import (
    FusionParams,
    Signals,
    descending,
    evidence,
    floors,
    fuse,
    length_share,
    ranks,
    relevance,
    standardise,
)

PARAMS = HYBRID


def signals(n: int, dense: np.ndarray | None = None, **arrays: np.ndarray) -> Signals:
    zeros = np.zeros(n, dtype=np.float32)
    return Signals(
        bm25=arrays.get("bm25", zeros),
        specificity=arrays.get("specificity", zeros),
        name=arrays.get("name", zeros),
        dense=dense,
        explained=1.0,
        terms=3,
    )


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
    [(1, 0.0), (PARAMS.short_terms, 0.0), (PARAMS.long_terms, 1.0), (100, 1.0)],
    ids=["one-word", "short-end", "long-end", "beyond-long"],
)
def test_length_share_ends(terms: int, expected: float) -> None:
    assert length_share(terms, PARAMS) == pytest.approx(expected)


def test_ranks_break_ties_by_position() -> None:
    assert ranks(np.array([0.5, 0.9, 0.5], dtype=np.float32)).tolist() == [2.0, 1.0, 3.0]


cosines = arrays(np.float32, st.integers(1, 40), elements=st.floats(-1.0, 1.0, width=32))

#: Few distinct values (ties), both zeros, infinities, subnormals, NaN.
odd = st.sampled_from([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 1e-45, -1e-45, np.nan])


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        arrays(np.float32, st.integers(0, 300), elements=st.floats(width=32)),
        arrays(np.float32, st.integers(0, 300), elements=odd),
        arrays(np.float32, st.integers(0, 300), elements=st.floats(-1, 1, width=32) | odd),
        arrays(np.float64, st.integers(0, 50)),
    )
)
def test_descending_is_the_stable_argsort_of_the_negated_scores(scores: np.ndarray) -> None:
    """Every index as ``np.argsort(-scores, kind="stable")`` gives it, keys sorted from any
    size (``KEYED_FROM`` 0) or not: ties by position, -0.0 tying +0.0, infinities at the
    ends, NaN (its fallback) last."""
    expected = np.argsort(-scores, kind="stable").tolist()
    for keyed_from in (0, fusion.KEYED_FROM):
        with patch.object(fusion, "KEYED_FROM", keyed_from):
            got = descending(scores)
        assert got.dtype == np.intp
        assert got.tolist() == expected


@pytest.mark.parametrize(
    "scores",
    [
        np.array([0.5, -0.0, 0.0, 0.5], dtype=np.float16),
        np.array([3, 1, 3, 2], dtype=np.int32),
        np.array([[0.2, 0.1], [0.1, 0.3]], dtype=np.float32),
    ],
    ids=["float16", "int32", "2-d"],
)
def test_descending_falls_back_to_the_argsort_for_other_kinds(scores: np.ndarray) -> None:
    with patch.object(fusion, "KEYED_FROM", 0):
        got = descending(scores)
    assert got.tolist() == np.argsort(-scores, kind="stable").tolist()


def test_descending_orders_a_large_catalog_with_ties_as_the_stable_argsort() -> None:
    rng = np.random.default_rng(7)
    scores = rng.standard_normal(4000).astype(np.float32)
    scores[::5] = scores[3]  # 800 ties at one value
    scores[1::9] = 0.0
    scores[2::11] = -0.0
    assert descending(scores).tolist() == np.argsort(-scores, kind="stable").tolist()


@settings(max_examples=200, deadline=None)
@given(cosines)
def test_without_lexical_evidence_the_embedding_decides(cos: np.ndarray) -> None:
    fused = fuse(signals(len(cos), dense=cos), PARAMS)
    expected = np.argsort(-cos, kind="stable")
    assert (cos[np.argsort(-fused, kind="stable")] == cos[expected]).all()


def test_a_name_and_its_specific_words_overrule_a_small_dense_lead() -> None:
    cos = np.array([0.50, 0.46], dtype=np.float32)
    name = np.array([0.5, 1.0], dtype=np.float32)
    specificity = np.array([0.5, 1.0], dtype=np.float32)
    fused = fuse(signals(2, dense=cos, name=name, specificity=specificity), PARAMS)
    assert int(np.argmax(fused)) == 1


def test_unexplained_lexical_evidence_does_not_overrule_the_embedding() -> None:
    cos = np.array([0.45, 0.30], dtype=np.float32)
    lexical = signals(2, dense=cos, name=np.array([0.0, 0.5], dtype=np.float32))
    assert int(np.argmax(fuse(replace(lexical, explained=0.1), PARAMS))) == 0


def test_fuse_without_dense_orders_by_specific_words() -> None:
    spec = np.array([0.2, 0.9, 0.5], dtype=np.float32)
    fused = fuse(signals(3, specificity=spec, bm25=spec), PARAMS)
    assert np.argsort(-fused).tolist() == [1, 2, 0]


@pytest.mark.parametrize(
    ("dense", "expected"),
    [(0.5, 0.5 + PARAMS.coverage_credit * 0.25), (None, 0.25 + 0.5)],
    ids=["hybrid", "lexical-path"],
)
def test_evidence(dense: float | None, expected: float) -> None:
    cos = None if dense is None else np.array([dense], dtype=np.float32)
    one = signals(
        1,
        dense=cos,
        specificity=np.array([0.25], dtype=np.float32),
        name=np.array([0.5], dtype=np.float32),
    )
    assert float(evidence(one, PARAMS)[0]) == pytest.approx(expected)


@pytest.mark.parametrize("lexical_only", [False, True], ids=["hybrid", "lexical"])
def test_per_tool_floor_is_at_most_the_no_match_floor(lexical_only: bool) -> None:
    match_floor, tool_floor = floors(lexical_only, PARAMS)
    assert tool_floor <= match_floor


@pytest.mark.parametrize(
    ("dense", "expected"),
    [(None, [1, 0]), (np.array([0.4, 0.3], dtype=np.float32), [0, 1])],
    ids=["lexical-path-reads-it", "hybrid-leaves-it-to-the-embedding"],
)
def test_subword_evidence_ranks_only_on_the_lexical_path(
    dense: np.ndarray | None, expected: list[int]
) -> None:
    weak = replace(signals(2, dense=dense), subword=np.array([0.0, 0.6], dtype=np.float32))
    assert np.argsort(-fuse(weak, PARAMS), kind="stable").tolist() == expected


def test_subword_evidence_clears_the_lexical_bar() -> None:
    weak = replace(signals(2), subword=np.array([0.0, 0.3], dtype=np.float32))
    _, tool_floor = floors(True, PARAMS)
    assert (evidence(weak, PARAMS) >= tool_floor).tolist() == [False, True]


@pytest.mark.parametrize(
    "params",
    [HYBRID, STATIC, CROSS],
    ids=["hybrid", "static", "cross"],
)
def test_relevance_is_an_increasing_probability(params: FusionParams) -> None:
    for table in (params.relevance, params.lexical_relevance):
        scores = np.linspace(-5.0, 40.0, 400, dtype=np.float32)
        p = relevance(scores, table)
        assert float(p.min()) >= 0.0
        assert float(p.max()) <= 1.0
        assert bool(np.all(np.diff(p) >= 0))


def test_relevance_is_flat_beyond_the_fitted_points() -> None:
    table = ((0.0, 0.1), (1.0, 0.9))
    got = relevance(np.array([-9.0, 0.5, 99.0], dtype=np.float32), table)
    assert got.tolist() == pytest.approx([0.1, 0.5, 0.9])
