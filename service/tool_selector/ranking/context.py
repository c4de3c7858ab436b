"""Conversation context as evidence: what the last messages and the recently called tools
say about which tool a follow-up ("show me the next 2", "actually cancel it") needs.

A follow-up names little by itself; the conversation names the product and the object.
Two signals, each standardised over the catalog so they weigh the same in any catalog, are
added to the pattern's fused score (``ranker.Limits.boost``)::

    boost = w_messages * z(sim(messages, tool)) + w_recent * z(max_j sim(recent_j, tool))

- ``sim(messages, tool)``: the cosine of the last messages, embedded as one text (their
  last ``CONTEXT_CHARS`` characters), with each tool (BM25 of their terms on the lexical
  path);
- ``sim(recent_j, tool)``: how close each tool is to a tool the agent called lately (the
  cosine of their embeddings; BM25 of the called tool's name words on the lexical path):
  a follow-up usually needs that tool or one of its siblings.

The pattern's own evidence still decides when it is specific (a named tool is lifted above
every boost), and a request without ``context`` is ranked exactly as before. Weights were
swept on the dev half of Arcade's ``needs_context`` requests with their real earlier turns
(``python -m tool_selector.offline.evaluation.context``; docs/quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fusion import standardise

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
