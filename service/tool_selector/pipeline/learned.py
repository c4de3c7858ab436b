"""The learned arm: what a scope's model called after searches near this one.

``LearnedArm`` reads the scope's evidence (the models' ``learning``) and, when it holds events
near the pattern, adds the learned column (``ranking.learned.learned_scores``) that the
fusion weighs (``fusion.TERMS``' ``learn_weight``). The pattern is read as the learner
remembered it (``search_reading``): the first model's query vector of the pattern as sent
and its hashed terms. With no evidence in the scope, or none near, nothing is added and the
answer is the one without evidence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tool_selector.embeddings.encoder import Encoder
from tool_selector.pipeline.catalog_store import CatalogEntry
from tool_selector.pipeline.columns import ArmRequest, Columns, Sources, timed
from tool_selector.pipeline.query_vectors import QueryVectors
from tool_selector.ranking.dense import FloatArray, normalise_rows
from tool_selector.ranking.learned import (
    Evidence,
    TermWeights,
    learned_scores,
    pattern_terms,
    term_hash,
    tool_identity,
)


@dataclass(frozen=True, slots=True)
class LearnedArm:
    """The learned column of the request's scope (the module)."""

    sources: Sources
    clock: Callable[[], float] = time.time

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        src = self.sources
        encoders = src.models.encoders
        learning = src.models.learning
        if learning is None or request.scope is None or encoders is None:
            return columns
        evidence = learning.evidence(request.scope)
        if evidence is None or not len(evidence):
            return columns
        with timed(request.timings, "learned"):
            key, entry = learning.terms_key, request.found.entry
            vector, terms = search_reading(src.queries, encoders.primary, request.pattern.text, key)
            slots = _slots(entry, evidence)
            now, rule, idf = self.clock(), src.rules.learn, term_weights(entry, key)
            scores = learned_scores(evidence, vector, terms, slots, rule=rule, now=now, idf=idf)
        return columns if scores is None else replace(columns, learned=scores)


def search_reading(
    queries: QueryVectors, encoder: Encoder, pattern: str, key: bytes = b""
) -> tuple[FloatArray, tuple[int, ...]]:
    """How the learner reads a pattern: ``encoder``'s unit query vector of it (a long one's
    windows averaged) and its terms hashed under ``key`` (``ranking.learned.pattern_terms``)."""
    vector, _ = queries.one(encoder, pattern)
    if vector.ndim > 1:
        vector = normalise_rows(vector.mean(axis=0, keepdims=True))[0]
    return vector, pattern_terms(pattern, key)


def identities(entry: CatalogEntry) -> list[str]:
    """Each catalog tool's identity (``ranking.learned.tool_identity``), derived once."""
    return entry.memo(
        ("identities",),
        lambda: [tool_identity(t.name, t.description) for t in entry.catalog.texts],
    )


def term_weights(entry: CatalogEntry, key: bytes = b"") -> TermWeights:
    """Each catalog term's IDF by its hash under ``key``, and an unheld term's
    (``learned._jaccard``), derived once per catalog."""
    index = entry.catalog.index

    def weights() -> TermWeights:
        return {term_hash(t, key): index.idf(t) for t in index.terms()}, index.idf("")

    return entry.memo(("term-weights", key), weights)


def _slots(entry: CatalogEntry, evidence: Evidence) -> np.ndarray:
    """Each catalog tool's slot in ``evidence`` (-1: never shown in the scope), kept on the
    entry for this version of the evidence."""
    return entry.memo(
        ("learned-slots", evidence.generation),
        lambda: np.asarray([evidence.tools.get(i, -1) for i in identities(entry)], np.int64),
    )
