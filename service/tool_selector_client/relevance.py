"""The proxy's local ``relevance`` scorer, as a reference and for shadow comparison.

Keyword overlap as the proxy's seed implementation does it: a tool scores +50 when its
name appears in the query, +10 for every distinct query token (length >= 3, stop words
removed) found among the tokens of its name and description. Tools scoring 0 are dropped;
the rest keep a stable order (score descending, then catalog order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["relevance_scores", "relevance_select"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = frozenset(
    """the and for with that this from into your you are was were has have had not but can
    all any use using get set what when where which who how why will would should could
    about please need want some them then than there their its our out""".split()
)
NAME_IN_QUERY = 50
PER_TOKEN = 10


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP_WORDS}


def relevance_scores(query: str, tools: Sequence[tuple[str, str]]) -> list[int]:
    """Score of each ``(name, description)`` for ``query``."""
    lowered = query.lower()
    q_tokens = _tokens(query)
    scores = []
    for name, description in tools:
        score = NAME_IN_QUERY if name and name.lower() in lowered else 0
        tool_tokens = _tokens(name.replace("_", " ")) | _tokens(description)
        score += PER_TOKEN * len(q_tokens & tool_tokens)
        scores.append(score)
    return scores


def relevance_select(query: str, tools: Sequence[tuple[str, str]], max_results: int) -> list[str]:
    """Names the relevance scorer picks: positive scores, best first, stable, capped."""
    scores = relevance_scores(query, tools)
    order = sorted(range(len(tools)), key=lambda i: -scores[i])
    return [tools[i][0] for i in order if scores[i] > 0][:max_results]
