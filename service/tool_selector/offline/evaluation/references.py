"""Reference rankers measured next to the service in every eval run.

Each maps a query to a ranked list of at most ``k`` names over the whole catalog, with no
abstention (the proxy scorer drops tools scoring 0, as the proxy does):

- ``relevance``: the proxy's keyword scorer (``tool_selector_client.relevance``).
- ``bm25``: BM25 over name x2 + description.
- ``bm25+params``: BM25 over name x2 + description + parameter names/descriptions/enums.
- ``dense``: cosine of all-MiniLM-L6-v2 embeddings (same tool text as the service).
- ``rrf``: reciprocal-rank fusion ``1/(60 + rank_bm25+params) + 1/(60 + rank_dense)``
  (Cormack et al. 2009, K=60), as Gatemini-style selectors do.

The BM25 references use their own frozen tokenizer (lowercased words, camelCase and
snake_case split, no stemming, a small stop list) and BM25 as one field (no n-gram field,
``LexicalIndex(ngram_field=False)``) so that changes to the service's tokenisation never move
the baselines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.text import ToolText
from tool_selector_client.relevance import relevance_select

RRF_K = 60
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    """a an and are as at be by can do for from how i in is it me my of on or the this to
    what with you your""".split()
)

#: A reference ranker: (query text, query embedding) -> ranked names.
Ranker = Callable[[str, FloatArray], list[str]]


def plain_tokens(text: str) -> list[str]:
    """The references' tokenizer: split identifiers, lowercase, drop a few stop words."""
    words = (w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text)))
    return [w for w in words if w not in _STOP]


def _bm25_docs(texts: Sequence[ToolText], params: bool) -> list[list[str]]:
    docs = []
    for t in texts:
        name = plain_tokens(t.name)
        doc = name * 2 + plain_tokens(t.description)
        if params:
            doc += plain_tokens(t.params)
        docs.append(doc)
    return docs


def _top(scores: FloatArray, names: Sequence[str], k: int) -> list[str]:
    order = np.argsort(-scores, kind="stable")[:k]
    return [names[int(i)] for i in order]


def _ranks(scores: FloatArray) -> FloatArray:
    """1-based rank of every entry by descending score (ties broken by position)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float32)
    ranks[order] = np.arange(1, len(scores) + 1, dtype=np.float32)
    return ranks


def rrf_scores(*scores: FloatArray, k: int = RRF_K) -> FloatArray:
    """Reciprocal-rank fusion: ``sum 1 / (k + rank)`` over the rankings of ``scores``."""
    return np.asarray(sum(1.0 / (k + _ranks(s)) for s in scores), dtype=np.float32)


def reference_rankers(
    texts: Sequence[ToolText], tool_matrix: FloatArray, k: int
) -> dict[str, Ranker]:
    """Build every reference ranker over one catalog (indexes built once)."""
    names = [t.name for t in texts]
    pairs = [(t.name, t.description) for t in texts]
    plain = LexicalIndex(_bm25_docs(texts, params=False), ngram_field=False)
    with_params = LexicalIndex(_bm25_docs(texts, params=True), ngram_field=False)

    def relevance(query: str, _: FloatArray) -> list[str]:
        return relevance_select(query, pairs, k)

    def bm25(query: str, _: FloatArray) -> list[str]:
        return _top(plain.scores(plain_tokens(query)), names, k)

    def bm25_params(query: str, _: FloatArray) -> list[str]:
        return _top(with_params.scores(plain_tokens(query)), names, k)

    def dense(_: str, qvec: FloatArray) -> list[str]:
        return _top(cosine_scores(qvec, tool_matrix), names, k)

    def rrf(query: str, qvec: FloatArray) -> list[str]:
        lexical = with_params.scores(plain_tokens(query))
        return _top(rrf_scores(lexical, cosine_scores(qvec, tool_matrix)), names, k)

    return {
        "relevance": relevance,
        "bm25": bm25,
        "bm25+params": bm25_params,
        "dense": dense,
        "rrf": rrf,
    }
