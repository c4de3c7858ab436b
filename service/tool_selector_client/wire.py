"""The wire contract of ``POST /v1/tool-discovery/search``, as msgspec Structs.

The client package owns these types; the server imports them, never the reverse.
Bounds that are part of the contract itself live in the types; the limits an
operator tunes (tools per request, field lengths, ``top_k`` ceiling) are server
settings checked after decoding.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

__all__ = [
    "ErrorBody",
    "Explanation",
    "SearchRequest",
    "SearchResponse",
    "Tool",
    "ToolName",
]

#: A tool name: non-empty, no control characters.
ToolName = Annotated[str, Meta(min_length=1, pattern=r"^[^\x00-\x1f\x7f]+$")]
#: The search pattern: must contain something besides whitespace.
Pattern = Annotated[str, Meta(pattern=r"\S")]


class Tool(Struct, frozen=True):
    """One deferred tool as the proxy sends it.

    ``definition`` is the caller's raw provider tool object (OpenAI Chat, OpenAI
    Responses, Anthropic, MCP or Gemini shape); only the parts the ranker reads
    are ever looked at.
    """

    name: ToolName
    description: str | None = None
    definition: dict[str, Any] | None = None


class SearchRequest(Struct, frozen=True):
    """A search over the deferred tools. Unknown fields are ignored."""

    pattern: Pattern
    tools: list[Tool]
    top_k: Annotated[int, Meta(ge=1)] = 5
    always_keep: list[str] = msgspec.field(default_factory=list)
    explain: bool = False


Reason = Literal["ranked", "always_keep", "exact_name"]


class Explanation(Struct, frozen=True, omit_defaults=True):
    """Why one returned tool is in the answer (``"explain": true`` only)."""

    name: str
    reason: Reason
    score: float
    bm25_score: float
    bm25_rank: int
    dense_similarity: float | None = None
    dense_rank: int | None = None
    matched_terms: list[str] = msgspec.field(default_factory=list)


class SearchResponse(Struct, frozen=True, omit_defaults=True):
    """The chosen tool names, best first; empty means no useful match."""

    selected_names: list[str]
    explanations: list[Explanation] | None = None


class ErrorBody(Struct, frozen=True):
    """Every error the service returns has this shape."""

    code: str
    detail: str
