"""Raw provider tool definitions: read their name and description, map picks back to them.

Accepted shapes (the same ones the service reads):

- OpenAI Chat ``{"type": "function", "function": {"name", "description", "parameters"}}``
- OpenAI Responses (flat) ``{"type": "function", "name", "description", "parameters"}``
- Anthropic ``{"name", "description", "input_schema", ...}`` (extra keys such as
  ``cache_control`` are fine)
- MCP ``{"name", "description", "inputSchema"}``
- Gemini function declarations ``{"name", "description", "parameters"}``; a Gemini ``Tool``
  wrapper ``{"functionDeclarations": [...]}`` is expanded into its declarations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from tool_selector_client.wire import NAME_CONTROLS, Tool

__all__ = [
    "SEARCH_TOOL_DESCRIPTION",
    "SEARCH_TOOL_NAME",
    "by_name",
    "declarations",
    "described",
    "expand",
    "pick_definitions",
    "search_tool_anthropic",
    "search_tool_openai",
    "search_tool_openai_responses",
    "to_wire",
    "tool_description",
    "tool_name",
]

SEARCH_TOOL_NAME = "gateway_search_tools"
SEARCH_TOOL_DESCRIPTION = (
    "Search the available tools by keyword or task description. Returns the tools that "
    "match; call it whenever you need a tool that is not in your list yet."
)
_QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Keywords, a tool name, or a short description of the task.",
        }
    },
    "required": ["query"],
}
_DECLARATION_KEYS = ("functionDeclarations", "function_declarations")
#: What the service refuses in a name (``wire.NAME_CONTROLS``).
_CONTROL = re.compile(f"[{NAME_CONTROLS}]")


def _function_object(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = definition.get("function")
    return inner if isinstance(inner, Mapping) else definition


def declarations(definition: Any) -> list[Any] | None:
    """A Gemini ``Tool`` wrapper's declarations as written (objects or not), or ``None`` when
    ``definition`` is not such a wrapper."""
    if not isinstance(definition, Mapping):
        return None
    return next(
        (definition[k] for k in _DECLARATION_KEYS if isinstance(definition.get(k), list)), None
    )


def expand(definitions: Iterable[Any]) -> Iterator[Any]:
    """Each definition, with Gemini ``functionDeclarations`` wrappers opened up (their
    declarations that are objects)."""
    for definition in definitions:
        decls = declarations(definition)
        if decls is None:
            yield definition
        else:
            yield from (d for d in decls if isinstance(d, Mapping))


def tool_name(definition: Any) -> str | None:
    """The tool's name, or ``None`` when the object has no usable one."""
    if not isinstance(definition, Mapping):
        return None
    name = _function_object(definition).get("name")
    if not isinstance(name, str) or not name.strip() or _CONTROL.search(name):
        return None
    return name


def tool_description(definition: Any) -> str:
    """The tool's description, or ``""``."""
    if not isinstance(definition, Mapping):
        return ""
    desc = _function_object(definition).get("description")
    return desc if isinstance(desc, str) else ""


def to_wire(definition: Any) -> Tool | None:
    """The wire ``Tool`` for one raw definition (raw object kept as ``definition``)."""
    name = tool_name(definition)
    if name is None:
        return None
    return Tool(
        name=name,
        description=tool_description(definition) or None,
        definition=dict(definition),
    )


def by_name(definitions: Iterable[Any]) -> dict[str, Any]:
    """Each usable name's raw definition, in order; a repeated name keeps its first one.

    The service merges duplicate names the same way.
    """
    named: dict[str, Any] = {}
    for definition in expand(definitions):
        name = tool_name(definition)
        if name is not None:
            named.setdefault(name, definition)
    return named


def described(definitions: Iterable[Any]) -> list[tuple[str, str]]:
    """``(name, description)`` of each distinct tool, in order (the relevance scorer's input)."""
    return [(name, tool_description(d)) for name, d in by_name(definitions).items()]


def pick_definitions(definitions: Sequence[Any], names: Iterable[str]) -> list[Any]:
    """The raw definitions of ``names``, in the order of ``names``, each once.

    Names with no definition are skipped; a repeated name maps to its first definition.
    """
    named = by_name(definitions)
    return [named[name] for name in dict.fromkeys(names) if name in named]


def search_tool_openai() -> dict[str, Any]:
    """``gateway_search_tools`` as an OpenAI Chat Completions tool."""
    return {
        "type": "function",
        "function": {
            "name": SEARCH_TOOL_NAME,
            "description": SEARCH_TOOL_DESCRIPTION,
            "parameters": dict(_QUERY_SCHEMA),
        },
    }


def search_tool_openai_responses() -> dict[str, Any]:
    """``gateway_search_tools`` as an OpenAI Responses API (flat) tool."""
    return {
        "type": "function",
        "name": SEARCH_TOOL_NAME,
        "description": SEARCH_TOOL_DESCRIPTION,
        "parameters": dict(_QUERY_SCHEMA),
    }


def search_tool_anthropic() -> dict[str, Any]:
    """``gateway_search_tools`` as an Anthropic Messages tool."""
    return {
        "name": SEARCH_TOOL_NAME,
        "description": SEARCH_TOOL_DESCRIPTION,
        "input_schema": dict(_QUERY_SCHEMA),
    }
