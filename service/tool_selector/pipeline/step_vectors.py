"""A multi-step pattern's clauses read in the pattern's context (``StepRule.in_context``).

One forward pass over the whole pattern gives its query vector and, from its tokens' states,
a vector per clause (``SpanEncoder.encode_spans``). The selector's query read puts the
clauses' vectors in the query cache beside the pattern's (``read_spans``, under
``steps_key``), so ranking the clauses (``clause_cosines``) finds them without a second
encode; a miss (a pattern first read without them, or evicted since) is read again the same
way, so the answer never depends on the cache. A pattern the model reads in windows
(``ranking.dense.windows``), or an encoder that cannot read spans, has none: its clauses
keep the whole pattern's cosines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tool_selector.embeddings.encoder import Encoder, Ensemble, SpanEncoder
from tool_selector.lru import BoundedLRU
from tool_selector.ranking.dense import WHOLE_CHARS, FloatArray

#: Query vectors by (model id, pattern); a pattern's clause vectors under ``steps_key``.
QueryCache = BoundedLRU[tuple[str, str], FloatArray]
Spans = Sequence[tuple[int, int]]
#: What sets a pattern's clause vectors apart from its own vector in the query cache.
_TAG = "#steps"


def steps_key(model_id: str, pattern: str) -> tuple[str, str]:
    """The query cache's key of ``pattern``'s clause vectors under ``model_id``."""
    return f"{model_id}{_TAG}", pattern


def wants_spans(encoder: Encoder, queries: QueryCache, pattern: str, spans: Spans) -> bool:
    """Whether reading ``pattern`` with ``encoder`` should read its clauses too: it can
    (``_readable``) and the cache does not hold them."""
    return _readable(encoder, pattern, spans) and (
        queries.get(steps_key(encoder.model_id, pattern)) is None
    )


def read_spans(encoder: Encoder, queries: QueryCache, pattern: str, spans: Spans) -> FloatArray:
    """``encoder``'s query vector of ``pattern`` (read-only), its clauses' vectors put in
    ``queries`` from the same pass (``wants_spans`` says when it can)."""
    return _read(encoder, queries, pattern, spans)[0]


def clause_cosines(
    encoder: Encoder,
    queries: QueryCache,
    pattern: str,
    spans: Spans,
    tools: tuple[FloatArray, FloatArray],
    *,
    share: float,
) -> list[FloatArray] | None:
    """Each clause's cosines over the catalog: ``share`` (``StepRule.context_share``) of
    its in-context vector's (``encoder``'s, an ensemble's parts joined) against the tool
    matrix, the rest the whole pattern's cosines (``tools``: the matrix and those cosines);
    ``None`` when a part cannot read spans or the pattern is read in windows."""
    matrix, whole = tools
    ensemble = Ensemble.of(encoder)
    got: list[FloatArray] = []
    for part in ensemble.parts:
        vectors = queries.get(steps_key(part.model_id, pattern))
        if vectors is None and _readable(part, pattern, spans):
            vectors = _read(part, queries, pattern, spans)[1]
        if vectors is None or len(vectors) != len(spans):
            return None
        got.append(vectors)
    own = np.asarray(matrix @ ensemble.combine(got).T, dtype=np.float32)
    return [
        np.asarray(share * own[:, i] + (1 - share) * whole, dtype=np.float32)
        for i in range(len(spans))
    ]


def _readable(encoder: Encoder, pattern: str, spans: Spans) -> bool:
    """Whether ``encoder`` can read ``pattern``'s clauses in its context: it has some, the
    encoder reads spans, and the pattern is read whole (not in ``dense.windows``)."""
    return bool(spans) and isinstance(encoder, SpanEncoder) and len(pattern) <= WHOLE_CHARS


def _read(
    encoder: Encoder, queries: QueryCache, pattern: str, spans: Spans
) -> tuple[FloatArray, FloatArray]:
    """One pass of ``encoder`` (a ``SpanEncoder``) over ``pattern``: its query vector and its
    clauses' vectors (both read-only), the clauses' put in ``queries``."""
    if not isinstance(encoder, SpanEncoder):
        raise TypeError(f"{encoder.model_id} cannot read spans (check _readable first)")
    whole, steps = encoder.encode_spans(pattern, spans)
    vec = np.ascontiguousarray(whole, dtype=np.float32)
    for array in (vec, steps):
        array.setflags(write=False)
    queries.put(steps_key(encoder.model_id, pattern), steps)
    return vec, steps
