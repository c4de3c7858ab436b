"""The wire contracts the service speaks, as msgspec Structs, with their paths.

- ``POST /v1/tool-discovery/search`` (``SEARCH_PATH``): ``SearchRequest`` -> ``SearchResponse``,
  errors ``ErrorBody``. Context Gateway v0.4.0-v0.4.1 call it (``api.endpoint``).
- ``POST /api/compress/tool-discovery/`` (``COMPRESS_PATH``): the proxy's later contract,
  ``CompressRequest`` -> ``CompressResponse``, errors ``CompressErrorBody``. v0.4.2-v0.5.1
  use it to pre-filter a whole request (``query`` is the user's last message), v0.5.3+ for
  ``gateway_search_tools``. v0.5.2 posts the first contract's body to this path, so a body
  with ``pattern`` and no ``query`` is answered in the first contract's shape there.

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
    "COMPRESS_PATH",
    "SEARCH_PATH",
    "CompressData",
    "CompressErrorBody",
    "CompressRequest",
    "CompressResponse",
    "CompressTool",
    "ErrorBody",
    "Explanation",
    "SearchRequest",
    "SearchResponse",
    "Tool",
    "ToolName",
]

#: The first contract's path (Context Gateway ``api.endpoint``).
SEARCH_PATH = "/v1/tool-discovery/search"
#: The proxy's later contract (``urls.compresr`` + this path); also served without the slash.
COMPRESS_PATH = "/api/compress/tool-discovery/"

#: A tool name: non-empty, no control characters.
ToolName = Annotated[str, Meta(min_length=1, pattern=r"^[^\x00-\x1f\x7f]+$")]
#: The search pattern: must contain something besides whitespace.
Pattern = Annotated[str, Meta(pattern=r"\S")]


class Tool(Struct, frozen=True):
    """One deferred tool as the proxy sends it.

    ``definition`` is the caller's raw provider tool object (OpenAI Chat, OpenAI
    Responses, Anthropic, MCP or Gemini shape); only the parts the ranker reads
    are ever looked at. ``search_text`` is search-only text: the ranker reads it with the
    description (BM25 and the embedded text), the model never sees it (it is not part of
    ``definition``), so an operator can make a tool findable without changing what the
    model reads; absent (``UNSET``: never encoded, so a client's bytes and a catalog's
    fingerprint are what they were), nothing changes (docs/catalog-lint.md).
    """

    name: ToolName
    description: str | None = None
    definition: dict[str, Any] | None = None
    search_text: str | msgspec.UnsetType | None = msgspec.UNSET


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


class CompressTool(Struct, frozen=True):
    """One tool of the later contract: ``definition`` (v0.5.3+) or ``parameters``.

    ``parameters`` is a JSON schema, or (v0.4.2-v0.5.1) the whole raw provider tool object,
    e.g. Anthropic's ``{name, description, input_schema}``; tool text is read from either.
    ``search_text``: search-only text, as ``Tool.search_text``.
    """

    name: ToolName
    description: str | None = None
    definition: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    search_text: str | msgspec.UnsetType | None = msgspec.UNSET


class CompressRequest(Struct, frozen=True):
    """The later contract's search; unknown fields are ignored.

    ``max_tools`` means what ``top_k`` means. ``compression_model_name`` and ``source``
    (``gateway:<provider>``) are accepted and not used for ranking.
    """

    query: Pattern
    tools: list[CompressTool]
    max_tools: Annotated[int, Meta(ge=1)] = 5
    always_keep: list[str] | None = None
    compression_model_name: str | None = None
    source: str | None = None


class CompressData(Struct, frozen=True):
    """The picked names, best first (the proxy keeps its own order)."""

    relevant_tools: list[str]


class CompressResponse(Struct, frozen=True, kw_only=True):
    """``{"success": true, "data": {"relevant_tools": [...]}}``."""

    success: bool = True
    data: CompressData


class CompressErrorBody(Struct, frozen=True, kw_only=True):
    """An error on the later contract's path: the proxy's fields and ours.

    ``success``/``error``/``message`` are what the proxy reads; ``code``/``detail`` are
    ``ErrorBody``'s, so our own clients read every path's errors alike.
    """

    success: bool = False
    error: str
    message: str
    code: str
    detail: str
