"""Conversation context as evidence: what the last messages and the recently called tools
say about which tool a follow-up ("show me the next 2", "actually cancel it") needs.

A follow-up names little by itself; the conversation names the product and the object.
Two signals, each standardised over the catalog so they weigh the same in any catalog, are
added to the pattern's fused score (``ranker.Controls.boost``)::

    boost = w_messages * z(sim(messages, tool)) + w_recent * z(max_j sim(recent_j, tool))

- ``sim(messages, tool)``: the cosine of the last messages, embedded as one text (their
  last ``CONTEXT_CHARS`` characters), with each tool (BM25 of their terms on the lexical
  path);
- ``sim(recent_j, tool)``: how close each tool is to a tool the agent called lately (the
  cosine of their embeddings; BM25 of the called tool's name words on the lexical path):
  a follow-up usually needs that tool or one of its siblings.

The pattern's own evidence still decides when it is specific (a named tool is lifted above
every boost), and a request without ``context`` gets no boost at all. Weights were
swept on the dev half of Arcade's ``needs_context`` requests with their real earlier turns
(``python -m tool_selector.offline.evaluation.context``; docs/quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fusion import standardise
from tool_selector.ranking.tokenize import tokenize

#: The context text is at most this many characters, the most recent ones (what the
#: embedding model reads at once).
CONTEXT_CHARS = 1000
#: Messages of the context read, the most recent ones.
CONTEXT_MESSAGES = 4
#: Recently called tools read, the most recent ones.
RECENT_TOOLS = 4


@dataclass(frozen=True, slots=True)
class ContextWeights:
    """How much each context signal adds to the fused score (see the module)."""

    messages: float = 0.5
    recent: float = 1.5


def context_text(messages: Sequence[str]) -> str:
    """The last ``CONTEXT_MESSAGES`` messages joined, cut to their last ``CONTEXT_CHARS``
    characters (on a word boundary when there is one)."""
    text = " ".join(m.strip() for m in messages[-CONTEXT_MESSAGES:] if m.strip())
    if len(text) <= CONTEXT_CHARS:
        return text
    tail = text[-CONTEXT_CHARS:]
    cut = tail.find(" ")
    return tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail


def context_boost(
    messages: FloatArray | None, recent: FloatArray | None, weights: ContextWeights
) -> FloatArray | None:
    """``w_messages * z(messages) + w_recent * z(recent)`` over the signals present; ``None``
    when neither is."""
    parts = [
        w * standardise(np.asarray(s, dtype=np.float32))
        for s, w in ((messages, weights.messages), (recent, weights.recent))
        if s is not None
    ]
    if not parts:
        return None
    return np.asarray(np.sum(parts, axis=0), dtype=np.float32)


def context_signals(
    catalog: Catalog,
    text: str,
    recent_tools: Sequence[str],
    weights: ContextWeights,
    dense: tuple[FloatArray, FloatArray | None] | None = None,
) -> tuple[FloatArray | None, FloatArray | None]:
    """What a conversation adds to each tool's score (``context_boost``) and its evidence
    for the relevance bar (the stronger of the two signals), from the context's ``text``
    (``context_text``) and the last ``RECENT_TOOLS`` called tools. ``dense``: the tool
    matrix and the text's cosines over it (none when there is no text); without it, BM25
    of the text's terms and of the called tools' name words stand in."""
    positions = catalog.positions
    recent = [positions[n] for n in recent_tools[-RECENT_TOOLS:] if n in positions]
    terms = tuple(dict.fromkeys(tokenize(text))) if text else ()
    index = catalog.index
    seen: list[FloatArray | None]
    if dense is None:
        words = list(dict.fromkeys(w for i in recent for w in catalog.texts[i].name_tokens()))
        said = index.scores(terms) if text else None
        near = index.scores(words) if recent else None
        seen = [
            index.idf_coverage(terms) if text else None,
            index.idf_coverage(words) if recent else None,
        ]
    else:
        matrix, cos = dense
        said = None if cos is None else standardise(cos) + standardise(index.scores(terms))
        near = (matrix[recent] @ matrix.T).max(axis=0) if recent else None
        seen = [cos, near]
    strength = [s for s in seen if s is not None]
    return (
        context_boost(said, near, weights),
        np.max(strength, axis=0) if strength else None,
    )
