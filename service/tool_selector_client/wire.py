"""The wire contracts the service speaks, as msgspec Structs, with their paths.

- ``POST /v1/tool-discovery/search`` (``SEARCH_PATH``): ``SearchRequest`` -> ``SearchResponse``,
  errors ``ErrorBody``. Context Gateway v0.4.0-v0.4.1 call it (``api.endpoint``).
- ``POST /api/compress/tool-discovery/`` (``COMPRESS_PATH``): the proxy's later contract,
  ``CompressRequest`` -> ``CompressResponse``, errors ``CompressErrorBody``. v0.4.2-v0.5.1
  use it to pre-filter a whole request (``query`` is the user's last message), v0.5.3+ for
  ``gateway_search_tools``. v0.5.2 posts the first contract's body to this path, so a body
  with ``pattern`` and no ``query`` is answered in the first contract's shape there.
- ``POST /v1/tool-discovery/feedback`` (``FEEDBACK_PATH``): ``FeedbackRequest`` -> ``Feedback``:
  which tools of a search's answer the model then called (``X-Tool-Selector-Search-Id``
  names the search); ``DELETE`` it with ``?scope=NAME`` forgets a scope's feedback.

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
    "FEEDBACK_PATH",
    "MAX_CALLED",
    "MAX_CONTEXT_ITEMS",
    "MAX_GLOBS",
    "MAX_GLOB_CHARS",
    "NAME_CONTROLS",
    "SCOPE_HEADER",
    "SEARCH_ID_HEADER",
    "SEARCH_PATH",
    "Budget",
    "CompressData",
    "CompressErrorBody",
    "CompressRequest",
    "CompressResponse",
    "CompressTool",
    "Context",
    "ErrorBody",
    "Explanation",
    "Feedback",
    "FeedbackRequest",
    "Filters",
    "Removed",
    "SearchRequest",
    "SearchResponse",
    "Tool",
    "ToolName",
]

#: The first contract's path (Context Gateway ``api.endpoint``).
SEARCH_PATH = "/v1/tool-discovery/search"
#: The proxy's later contract (``urls.compresr`` + this path); also served without the slash.
COMPRESS_PATH = "/api/compress/tool-discovery/"

#: Feedback on a search (``FeedbackRequest``); ``DELETE ?scope=`` forgets a scope's feedback.
FEEDBACK_PATH = "/v1/tool-discovery/feedback"
#: The header every answer names its search by, and the one a search names its scope by.
SEARCH_ID_HEADER = "X-Tool-Selector-Search-Id"
SCOPE_HEADER = "X-Tool-Selector-Scope"
#: Most names in one feedback's ``called``.
MAX_CALLED = 64

#: A tool name: non-empty, no control characters.
#: What no tool name holds, as a regex character class's body: control characters (C0, DEL,
#: C1: NEL, CSI) and the line and paragraph separators (a name holding one would break the
#: one-line log and may act on a terminal showing it).
NAME_CONTROLS = r"\x00-\x1f\x7f-\x9f\u2028\u2029"
ToolName = Annotated[str, Meta(min_length=1, pattern=rf"^[^{NAME_CONTROLS}]+$")]
#: The search pattern: must contain something besides whitespace.
Pattern = Annotated[str, Meta(pattern=r"\S")]
#: Longest name glob in ``filters.allow`` / ``filters.deny``, and most globs in each list.
MAX_GLOB_CHARS = 200
MAX_GLOBS = 256
#: A name glob (``fnmatch``: ``*``, ``?``, ``[...]``), matched case-insensitively.
Glob = Annotated[str, Meta(min_length=1, max_length=MAX_GLOB_CHARS)]
#: Most entries in ``context.messages`` and in ``context.recent_tools``.
MAX_CONTEXT_ITEMS = 64
#: A calibrated relevance: the probability that a tool at that score is one the caller needs.
Score = Annotated[float, Meta(ge=0.0, le=1.0)]


class Tool(Struct, frozen=True, omit_defaults=True):
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
    safe: bool | None = None


class Filters(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Which tools may be answered at all, applied before ranking; a removed tool is never
    returned, not through ``always_keep`` and not through the exact-name rule.

    ``allow``: only tools whose full or bare name (``mcp__github__create_issue`` /
    ``create_issue``) matches one of these globs (``None``: every tool). ``deny``: no tool
    whose full or bare name matches one. ``read_only``: only tools annotated
    ``readOnlyHint: true``. ``exclude_destructive``: no tool that may be destructive: per
    the MCP defaults an unannotated tool may be (``destructiveHint`` defaults to true and
    counts only when ``readOnlyHint`` is not true). ``allow_unsafe``: tools marked
    ``"safe": false`` are left out unless true.
    """

    allow: Annotated[list[Glob], Meta(max_length=MAX_GLOBS)] | None = None
    deny: Annotated[list[Glob], Meta(max_length=MAX_GLOBS)] = msgspec.field(default_factory=list)
    read_only: bool = False
    exclude_destructive: bool = False
    allow_unsafe: bool = False


class Budget(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Caps on the answer besides ``top_k``: ``max_bytes`` of the returned tools'
    definitions (compact JSON) and ``max_tools`` names."""

    max_bytes: Annotated[int, Meta(ge=0)] | None = None
    max_tools: Annotated[int, Meta(ge=1)] | None = None


class Context(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The conversation around the search: its last ``messages`` (oldest first) and the
    tools the agent called lately (``recent_tools``, most recent last)."""

    messages: Annotated[list[str], Meta(max_length=MAX_CONTEXT_ITEMS)] = msgspec.field(
        default_factory=list
    )
    recent_tools: Annotated[list[str], Meta(max_length=MAX_CONTEXT_ITEMS)] = msgspec.field(
        default_factory=list
    )


class SearchRequest(Struct, frozen=True, omit_defaults=True):
    """A search over the deferred tools. Unknown fields are ignored."""

    pattern: Pattern
    tools: list[Tool]
    top_k: Annotated[int, Meta(ge=1)] = 5
    always_keep: list[str] = msgspec.field(default_factory=list)
    explain: bool = False
    filters: Filters | None = None
    budget: Budget | None = None
    min_score: Score | None = None
    context: Context | None = None


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
    relevance: float | None = None


class Removed(Struct, frozen=True, omit_defaults=True):
    """How many tools each control removed (``"explain": true`` only).

    A tool removed by several filters is counted once, under the first of ``allow``,
    ``deny``, ``unsafe``, ``read_only``, ``destructive``. ``budget``: ranked tools left out
    because they did not fit ``budget`` (bytes or ``max_tools``); ``min_score``: tools whose
    relevance was below ``min_score``.
    """

    allow: int = 0
    deny: int = 0
    unsafe: int = 0
    read_only: int = 0
    destructive: int = 0
    budget: int = 0
    min_score: int = 0


class SearchResponse(Struct, frozen=True, omit_defaults=True):
    """The chosen tool names, best first; empty means no useful match.

    With ``"explain": true``: ``explanations`` (why each tool is there), ``removed`` (what
    each control removed) and, for an empty answer, ``unmatched_terms`` (the pattern's
    terms that no tool holds).
    """

    selected_names: list[str]
    explanations: list[Explanation] | None = None
    removed: Removed | None = None
    unmatched_terms: list[str] | None = None


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
    safe: bool | None = None


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
    explain: bool = False
    filters: Filters | None = None
    budget: Budget | None = None
    min_score: Score | None = None
    context: Context | None = None


class CompressData(Struct, frozen=True, omit_defaults=True):
    """The picked names, best first (the proxy keeps its own order), and what Compresr's own
    server answers beside them: ``tool_count`` (names returned), ``original_tool_count``
    (tools sent, duplicates by name merged) and ``duration_ms`` (whole milliseconds the
    service took, as Compresr writes it); with ``explain``, the same reasons as
    ``SearchResponse``'s."""

    relevant_tools: list[str]
    tool_count: Annotated[int, Meta(ge=0)]
    original_tool_count: Annotated[int, Meta(ge=0)]
    duration_ms: Annotated[int, Meta(ge=0)]
    explanations: list[Explanation] | None = None
    removed: Removed | None = None
    unmatched_terms: list[str] | None = None


class CompressResponse(Struct, frozen=True, kw_only=True):
    """``{"success": true, "data": {"relevant_tools": [...], "tool_count": 2,
    "original_tool_count": 40, "duration_ms": 3}}``."""

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


#: A search id as ``X-Tool-Selector-Search-Id`` carries it: 32 hex digits.
SearchId = Annotated[str, Meta(pattern=r"^[0-9a-f]{32}$", min_length=32, max_length=32)]


class FeedbackRequest(Struct, frozen=True):
    """Which tools of search ``search_id``'s answer the model called after it (``[]``: none
    of them). Names the answer did not hold are counted apart and move nothing."""

    search_id: SearchId
    called: Annotated[list[ToolName], Meta(max_length=MAX_CALLED)]


class Feedback(Struct, frozen=True, kw_only=True):
    """What became of a feedback: ``kept`` (true: kept, and it survives a restart), the
    called names kept, the names the search had not shown (``unshown``: moved nothing), and
    ``duplicate`` (the search already had its feedback; this one moved nothing)."""

    kept: bool
    called: list[str]
    unshown: list[str]
    duplicate: bool = False
