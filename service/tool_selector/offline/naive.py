"""The naive baseline the benchmark compares against (``TOOL_SELECTOR_PIPELINE=naive``).

What peers do: per request, build a ``rank_bm25`` index and embed every tool text with no
cache and no deadline. Same text extraction, fusion and selection rules as the real
pipeline, so the comparison isolates the speed work. Not for production.
"""

from __future__ import annotations

import time

import numpy as np

from tool_selector.errors import MissingDependencyError
from tool_selector.pipeline.ask import Ask
from tool_selector.pipeline.selector import Outcome, Selector
from tool_selector.ranking.bm25 import document_tokens
from tool_selector.ranking.catalog import build_catalog, dedupe
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.ranker import Query, rank
from tool_selector_client.wire import SearchRequest


class NaiveSelector(Selector):
    """rank_bm25 + uncached embeddings, every request."""

    def select(self, request: Ask | SearchRequest) -> Outcome:
        """Decode every request's tools, index and embed them all, then rank."""
        ask = request if isinstance(request, Ask) else Ask.of(request)
        try:
            from rank_bm25 import BM25Okapi  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError("rank-bm25", "pip install rank-bm25") from exc
        started = time.perf_counter()
        unique, duplicates = dedupe(ask.tools.load())
        catalog = build_catalog(unique, self.rules.fields)
        query = Query.parse(ask.pattern)
        docs = [document_tokens(t, self.rules.fields) or ["<empty>"] for t in catalog.texts]
        bm25 = np.asarray(BM25Okapi(docs).get_scores(list(query.terms)), dtype=np.float32)
        bm25 = np.maximum(bm25, 0).astype(np.float32)
        dense: FloatArray | None = None
        encoder = self.encoder
        if encoder is not None and len(catalog):
            matrix = encoder.encode([t.dense_text() for t in catalog.texts])
            dense = cosine_scores(encoder.encode([ask.pattern])[0], matrix)
        ranking = rank(
            catalog,
            query,
            bm25=bm25,
            dense=dense,
            top_k=ask.top_k,
            always_keep=ask.always_keep,
            params=self.rules.hybrid,
        )
        return Outcome(
            ranking=ranking,
            path="hybrid" if dense is not None else "lexical",
            tools=len(catalog),
            duplicates=duplicates,
            unknown_always_keep=0,
            cache_misses=len(catalog),
            timings={"naive": time.perf_counter() - started},
        )
