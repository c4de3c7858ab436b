"""The wire contracts as thin adapters over one pipeline: what a request's fields and tools
are called, and how the picked names are answered (errors: ``http.edge``).

Two contracts (``tool_selector_client.wire``), one ranking: nothing after the adapter knows
which contract a request came in on.

- ``SEARCH``: ``{pattern, top_k, always_keep, tools: [{name, description, definition}]}``
  -> ``{"selected_names": [...]}``; errors ``{"code", "detail"}``.
- ``COMPRESS``: ``{query, max_tools, always_keep, tools: [{name, description, definition |
  parameters}]}`` -> ``{"success": true, "data": {"relevant_tools": [...], "tool_count",
  "original_tool_count", "duration_ms"}}`` (Compresr's own server's answer shape: the
  ``Tally``); errors carry the proxy's ``success``/``error``/``message`` and our
  ``code``/``detail``.

The compress path takes both bodies: Context Gateway v0.5.2 posts the first contract's body
there and reads ``selected_names``, so a body with ``pattern`` and no ``query`` is answered
as ``SEARCH`` (``decoding.Decoder``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from tool_selector_client.wire import (
    COMPRESS_PATH,
    CompressData,
    CompressRequest,
    CompressResponse,
    CompressTool,
    Explanation,
    Removed,
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
    """One wire contract: its request type, its tool type and how such a tool becomes the
    pipeline's ``Tool`` (``None``: it is one), and its answer.

    ``fields`` names the contract's own spelling of ``SearchRequest`` fields, read from
    requests and used in error details (``top_k`` is ``max_tools`` in the compress contract).
    """

    name: ContractName
    wire: type[msgspec.Struct]
    tool: type[msgspec.Struct]
    to_tool: Callable[[Any], Tool] | None
    answer: Callable[[list[str], Explained | None, Tally], bytes]
    fields: dict[str, str]

    def field(self, name: str) -> str:
        """The contract's name for ``SearchRequest`` field ``name``."""
        return self.fields.get(name, name)

    def read(self, head: Any, name: str, default: Any = None) -> Any:
        """Field ``name`` (``SearchRequest``'s spelling) of a decoded ``head`` of this contract."""
        return getattr(head, self.field(name), default)


@dataclass(frozen=True, slots=True)
class Explained:
    """What ``"explain": true`` adds to either contract's answer: why each tool is there,
    what each control removed (``None``: no control sent) and, for an empty answer, the
    pattern's terms no tool holds."""

    explanations: list[Explanation]
    removed: Removed | None = None
    unmatched_terms: list[str] | None = None


@dataclass(frozen=True, slots=True)
class Tally:
    """What an answer may say besides the names: the tools sent (duplicates by name merged)
    and the whole milliseconds the service took. The compress contract answers both, as
    Compresr's server does; the search contract's bytes carry neither."""

    tools: int
    duration_ms: int


def _search_answer(names: list[str], why: Explained | None, _: Tally) -> bytes:
    if why is None:
        return _ENCODER.encode(SearchResponse(selected_names=names))
    return _ENCODER.encode(
        SearchResponse(
            selected_names=names,
            explanations=why.explanations,
            removed=why.removed,
            unmatched_terms=why.unmatched_terms,
        )
    )


def _compress_answer(names: list[str], why: Explained | None, tally: Tally) -> bytes:
    data = CompressData(
        relevant_tools=names,
        tool_count=len(names),
        original_tool_count=tally.tools,
        duration_ms=tally.duration_ms,
        explanations=None if why is None else why.explanations,
        removed=None if why is None else why.removed,
        unmatched_terms=None if why is None else why.unmatched_terms,
    )
    return _ENCODER.encode(CompressResponse(data=data))


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
    return Tool(
        name=tool.name,
        description=tool.description,
        definition=definition,
        search_text=tool.search_text,
        safe=tool.safe,
    )


SEARCH = Contract("search", SearchRequest, Tool, None, _search_answer, {})
COMPRESS = Contract(
    "compress",
    CompressRequest,
    CompressTool,
    compress_tool,
    _compress_answer,
    {"pattern": "query", "top_k": "max_tools"},
)
CONTRACTS: tuple[Contract, ...] = (SEARCH, COMPRESS)


def is_compress_path(path: str) -> bool:
    """Whether ``path`` is the compress contract's path (trailing slash optional)."""
    return path.rstrip("/") == COMPRESS_PATH.rstrip("/")
