"""Our BM25 (bm25s) against rank_bm25 as an oracle, on seeded random corpora."""

import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from tool_selector.ranking.bm25 import LexicalIndex


class LuceneBM25(BM25Okapi):
    """rank_bm25's Okapi scorer with Lucene's non-negative idf: ln(1 + (N - df + .5)/(df + .5))."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {
            w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()
        }


def corpus(seed: int, docs: int, vocab: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    return [[rng.choice(words) for _ in range(rng.randint(1, 30))] for _ in range(docs)]


@pytest.mark.parametrize("seed", range(6))
def test_lucene_scores_match_rank_bm25_up_to_scale(seed: int) -> None:
    docs = corpus(seed, docs=60, vocab=80)
    query = [*docs[seed][:3], "w1", "absent"]
    ours = LexicalIndex(docs, k1=1.2, b=0.75).scores(query)
    oracle = np.asarray(LuceneBM25(docs, k1=1.2, b=0.75).get_scores(query))
    # Lucene drops BM25's constant (k1 + 1) numerator factor; rankings are identical.
    np.testing.assert_allclose(ours * (1.2 + 1), oracle, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_robertson_matches_bm25okapi_where_idf_is_positive(seed: int) -> None:
    docs = corpus(seed, docs=200, vocab=2000)  # every term is in far fewer than half the docs
    query = docs[0][:4]
    ours = LexicalIndex(docs, k1=1.5, b=0.75, method="robertson").scores(query)
    oracle = np.asarray(BM25Okapi(docs, k1=1.5, b=0.75).get_scores(query))
    np.testing.assert_allclose(ours * (1.5 + 1), oracle, rtol=1e-4, atol=1e-5)


def test_unknown_or_empty_query_scores_zero() -> None:
    index = LexicalIndex([["a", "b"], ["c"]])
    assert index.scores(["zzz"]).tolist() == [0.0, 0.0]
    assert index.scores([]).tolist() == [0.0, 0.0]


def test_empty_catalog_scores_nothing() -> None:
    assert LexicalIndex([]).scores(["a"]).shape == (0,)


WORDS = ["file", "read", "slack", "send", "issue", "create", "w1"]


@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), max_size=12), max_size=20),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), max_size=5, unique=True),
)
def test_coverage_and_matched_terms_agree_with_term_sets(
    docs: list[list[str]], query: list[str]
) -> None:
    index = LexicalIndex(docs)
    sets = [set(d) for d in docs]
    expected = [sum(t in s for t in query) / len(query) if query else 0.0 for s in sets]
    assert index.coverage(query).tolist() == expected
    matched = [index.matched(i, query) for i in range(len(docs))]
    assert matched == [tuple(t for t in query if t in s) for s in sets]
