"""The caller's controls as the ranking applies them, derived once per catalog.

Filters become a mask of the tools they leave in; a conversation's context becomes a boost
and evidence per tool (``ranking.context``), read in the space of the arm that answered
(its first model's cosines for an ensemble's mean, as the relevance bar's); the budget and
``min_score`` pass through. Masks and context signals are kept on the catalog entry
(``CatalogEntry.memo``): a proxy resends its policy and its conversation with every search
of a turn.
"""

from __future__ import annotations

import hashlib

import msgspec

from tool_selector.embeddings.encoder import Ensemble
from tool_selector.pipeline.ask import Ask
from tool_selector.pipeline.catalog_store import CatalogEntry
from tool_selector.pipeline.columns import Columns
from tool_selector.pipeline.query_vectors import QueryVectors
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.context import ContextWeights, context_signals, context_text
from tool_selector.ranking.controls import BoolArray, allowed
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.ranker import NO_CONTROLS, Controls
from tool_selector_client.wire import Context, Filters

_ENCODE = msgspec.json.Encoder().encode


def _digest(value: object) -> bytes:
    """A memo key's stand-in for a request's own value (its filters, its conversation): a
    digest, so a memo entry weighs the same whatever the caller sent."""
    return hashlib.blake2b(_ENCODE(value), digest_size=16).digest()


def controls_of(
    ask: Ask,
    entry: CatalogEntry,
    columns: Columns,
    queries: QueryVectors,
    weights: ContextWeights,
) -> tuple[Controls, dict[str, int]]:
    """``ask``'s controls as ``rank`` applies them, and how many tools each filter removed."""
    context, filters, catalog = ask.context, ask.filters, entry.catalog
    plain = filters is None and ask.budget is None and ask.min_score is None
    if plain and not context:
        return NO_CONTROLS, {}
    mask, filtered = filter_mask(filters, entry)
    budget = ask.budget
    boost, seen = None, None
    if context is not None:
        model = "" if columns.cosines is None else columns.cosines.encoder.model_id
        key = ("context", columns.path, model, weights, _digest(context))
        boost, seen = entry.memo(key, lambda: _context(context, catalog, columns, queries, weights))
    return Controls(
        allowed=mask,
        boost=boost,
        context_evidence=seen,
        max_tools=None if budget is None else budget.max_tools,
        max_bytes=None if budget is None else budget.max_bytes,
        min_score=ask.min_score,
    ), filtered


def filter_mask(
    filters: Filters | None, entry: CatalogEntry
) -> tuple[BoolArray | None, dict[str, int]]:
    """The tools ``filters`` leave in (``None``: no filters) and how many each filter
    removed, kept on the entry (the shortlist arm may read it first, ``controls_of`` after)."""
    if filters is None:
        return None, {}
    catalog = entry.catalog
    return entry.memo(("filters", _digest(filters)), lambda: _mask(catalog, filters))


def _mask(catalog: Catalog, filters: Filters) -> tuple[BoolArray, dict[str, int]]:
    """The tools ``filters`` leave in (read-only: it is kept for later requests)."""
    mask, removed = allowed([(t.name, t.bare_name) for t in catalog.texts], catalog.traits, filters)
    mask.setflags(write=False)
    return mask, removed


def _context(
    context: Context,
    catalog: Catalog,
    columns: Columns,
    queries: QueryVectors,
    weights: ContextWeights,
) -> tuple[FloatArray | None, FloatArray | None]:
    """``ranking.context.context_signals`` in the answering arm's space: its first model's
    tool matrix and that model's cosines of the context's text; BM25 on the lexical path."""
    text, answer = context_text(context.messages), columns.cosines
    if answer is None:
        return context_signals(catalog, text, context.recent_tools, weights)
    ensemble = Ensemble.of(answer.encoder)
    matrix, encoder = ensemble.first(answer.matrix), ensemble.primary
    cos = cosine_scores(queries.one(encoder, text)[0], matrix) if text else None
    return context_signals(catalog, text, context.recent_tools, weights, (matrix, cos))
