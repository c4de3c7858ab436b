"""The wire contracts as thin adapters over one pipeline: body -> ``SearchRequest``, names ->
response bytes, errors -> bytes in the shape the caller reads.

Two contracts (``tool_selector_client.wire``), one ranking: nothing after the adapter knows
which contract a request came in on.

- ``SEARCH``: ``{pattern, top_k, always_keep, tools: [{name, description, definition}]}``
  -> ``{"selected_names": [...]}``; errors ``{"code", "detail"}``.
- ``COMPRESS``: ``{query, max_tools, always_keep, tools: [{name, description, definition |
  parameters}]}`` -> ``{"success": true, "data": {"relevant_tools": [...]}}``; errors carry
  the proxy's ``success``/``error``/``message`` and our ``code``/``detail``.

The compress path takes both bodies: Context Gateway v0.5.2 posts the first contract's body
there and reads ``selected_names``, so a body with ``pattern`` and no ``query`` is answered
as ``SEARCH`` (``contract_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from tool_selector_client.wire import (
    COMPRESS_PATH,
    SEARCH_PATH,
    CompressData,
    CompressErrorBody,
    CompressRequest,
    CompressResponse,
    CompressTool,
    ErrorBody,
    Explanation,
    SearchRequest,
    SearchResponse,
    Tool,
)

ContractName = Literal["search", "compress"]
#: Keys that mark a ``parameters`` value as a whole provider tool object, not a JSON schema.
_PROVIDER_KEYS = frozenset(
    {
        "function",
        "input_schema",
        "inputSchema",
        "parameters",
        "parametersJsonSchema",
        "parameters_json_schema",
        "functionDeclarations",
        "function_declarations",
    }
)
_ENCODER = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Contract:
    """One wire contract: its request type, how it becomes a ``SearchRequest``, its answer.

    ``fields`` names the contract's own spelling of ``SearchRequest`` fields, for error
    details (``top_k`` is ``max_tools`` in the compress contract).
    """

    name: ContractName
    wire: type[msgspec.Struct]
    to_search: Callable[[Any], SearchRequest]
    answer: Callable[[list[str], list[Explanation] | None], bytes]
    fields: dict[str, str]

    def field(self, name: str) -> str:
        """The contract's name for ``SearchRequest`` field ``name``."""
        return self.fields.get(name, name)


def _same(request: SearchRequest) -> SearchRequest:
    return request


def _search_answer(names: list[str], explanations: list[Explanation] | None) -> bytes:
    return _ENCODER.encode(SearchResponse(selected_names=names, explanations=explanations))


def _compress_answer(names: list[str], _: list[Explanation] | None) -> bytes:
    return _ENCODER.encode(CompressResponse(data=CompressData(relevant_tools=names)))


def compress_tool(tool: CompressTool) -> Tool:
    """A compress-contract tool as the pipeline's ``Tool``.

    ``definition`` wins; else ``parameters`` is taken as the definition when it is a whole
    provider tool object (v0.4.2-v0.5.1 send Anthropic's ``{name, description,
    input_schema}`` there), or wrapped as ``{"parameters": schema}`` when it is a schema.
    """
    definition = tool.definition
    if definition is None and tool.parameters is not None:
        params = tool.parameters
        definition = params if _PROVIDER_KEYS & params.keys() else {"parameters": params}
    return Tool(name=tool.name, description=tool.description, definition=definition)


def compress_to_search(request: CompressRequest) -> SearchRequest:
    """``query`` -> ``pattern``, ``max_tools`` -> ``top_k``; tools as ``compress_tool``."""
    return SearchRequest(
        pattern=request.query,
        tools=[compress_tool(t) for t in request.tools],
        top_k=request.max_tools,
        always_keep=request.always_keep or [],
    )


SEARCH = Contract("search", SearchRequest, _same, _search_answer, {})
COMPRESS = Contract(
    "compress",
    CompressRequest,
    compress_to_search,
    _compress_answer,
    {"pattern": "query", "top_k": "max_tools"},
)
CONTRACTS: tuple[Contract, ...] = (SEARCH, COMPRESS)
#: Every path a search is served on (the compress path with and without its slash).
SEARCH_PATHS = frozenset({SEARCH_PATH, COMPRESS_PATH, COMPRESS_PATH.rstrip("/")})


class _Shape(msgspec.Struct):
    """Which of the two request fields a body has (empty ``Raw``: absent)."""

    pattern: msgspec.Raw = msgspec.Raw()
    query: msgspec.Raw = msgspec.Raw()


_SHAPE = msgspec.json.Decoder(_Shape)


def is_compress_path(path: str) -> bool:
    """Whether ``path`` is the compress contract's path (trailing slash optional)."""
    return path.rstrip("/") == COMPRESS_PATH.rstrip("/")


def contract_for(path: str, body: bytes) -> Contract:
    """The contract a body on ``path`` speaks: ``SEARCH`` on the search path; on the compress
    path ``SEARCH`` for a body with ``pattern`` and no ``query`` (v0.5.2), else ``COMPRESS``.

    The shape is read by a scan that builds no objects; a body that is not a JSON object
    counts as ``COMPRESS``, whose full decode then says what is wrong with it.
    """
    if not is_compress_path(path):
        return SEARCH
    try:
        shape = _SHAPE.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return COMPRESS
    return SEARCH if shape.pattern and not shape.query else COMPRESS


def error_bytes(path: str, code: str, detail: str) -> bytes:
    """The one error body of ``path``: ``{"code","detail"}``, plus the proxy's fields on the
    compress path (every error the service sends is rendered here)."""
    if is_compress_path(path):
        body: msgspec.Struct = CompressErrorBody(
            error=code, message=detail, code=code, detail=detail
        )
    else:
        body = ErrorBody(code=code, detail=detail)
    return _ENCODER.encode(body)
