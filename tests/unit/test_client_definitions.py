"""Reading raw provider definitions, mapping picks back, the search tool's shapes."""

from __future__ import annotations

from typing import Any

import pytest

from tool_selector_client.definitions import (
    SEARCH_TOOL_NAME,
    pick_definitions,
    search_tool_anthropic,
    search_tool_openai,
    search_tool_openai_responses,
    to_wire,
)
from tool_selector_client.wire import Tool

SHAPES: list[tuple[dict[str, Any], str, str | None]] = [
    (
        {"type": "function", "function": {"name": "a", "description": "d", "parameters": {}}},
        "a",
        "d",
    ),
    ({"type": "function", "name": "a", "description": "d", "parameters": {}}, "a", "d"),
    ({"name": "a", "description": "d", "input_schema": {}, "cache_control": {}}, "a", "d"),
    ({"name": "a", "description": "d", "inputSchema": {}}, "a", "d"),
    ({"name": "a", "parameters": {"type": "OBJECT"}}, "a", None),
]


@pytest.mark.parametrize(
    ("raw", "name", "description"),
    SHAPES,
    ids=["openai", "responses", "anthropic", "mcp", "gemini"],
)
def test_to_wire_reads_name_and_description(
    raw: dict[str, Any], name: str, description: str | None
) -> None:
    assert to_wire(raw) == Tool(name=name, description=description, definition=raw)


@pytest.mark.parametrize(
    "raw",
    [
        {"description": "no name"},
        {"name": ""},
        {"name": "a\nb"},
        {"name": "a\u0085b"},
        {"name": "a\u2028b"},
        "text",
        None,
    ],
    ids=["missing", "empty", "control", "c1-control", "line-separator", "string", "none"],
)
def test_to_wire_skips_unnamed(raw: Any) -> None:
    assert to_wire(raw) is None


def test_pick_definitions_keeps_order_dedupes_first_wins() -> None:
    first, dup, other = {"name": "a", "v": 1}, {"name": "a", "v": 2}, {"name": "b"}
    assert pick_definitions([first, dup, other], ["b", "a", "a", "zz"]) == [other, first]


def test_pick_definitions_opens_gemini_wrappers() -> None:
    decl = {"name": "a", "description": "d"}
    assert pick_definitions([{"functionDeclarations": [decl]}], ["a"]) == [decl]


@pytest.mark.parametrize(
    "make",
    [search_tool_openai, search_tool_openai_responses, search_tool_anthropic],
    ids=["openai", "responses", "anthropic"],
)
def test_search_tool_shapes_are_readable(make: Any) -> None:
    wire = to_wire(make())
    assert wire is not None
    assert wire.name == SEARCH_TOOL_NAME
