"""Tool-text extraction, one row per provider shape."""

from typing import Any

import pytest

from tool_selector.ranking.text import split_namespace, tool_text
from tool_selector_client.wire import Tool

SCHEMA = {
    "type": "object",
    "properties": {
        "repoName": {"type": "string", "description": "Repository to search"},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
}
SHAPES: list[tuple[str, dict[str, Any]]] = [
    (
        "openai_chat",
        {
            "type": "function",
            "function": {"name": "find", "description": "Find issues", "parameters": SCHEMA},
        },
    ),
    (
        "openai_responses",
        {"type": "function", "name": "find", "description": "Find issues", "parameters": SCHEMA},
    ),
    (
        "anthropic",
        {
            "name": "find",
            "description": "Find issues",
            "input_schema": SCHEMA,
            "cache_control": {"type": "ephemeral"},
        },
    ),
    ("mcp", {"name": "find", "description": "Find issues", "inputSchema": SCHEMA}),
    ("gemini", {"name": "find", "description": "Find issues", "parameters": SCHEMA}),
    (
        "gemini_json_schema",
        {"name": "find", "description": "Find issues", "parametersJsonSchema": SCHEMA},
    ),
    (
        "gemini_wrapped",
        {
            "functionDeclarations": [
                {"name": "other", "description": "Wrong one"},
                {"name": "find", "description": "Find issues", "parameters": SCHEMA},
            ]
        },
    ),
]


@pytest.mark.parametrize(("shape", "definition"), SHAPES, ids=[s for s, _ in SHAPES])
def test_every_shape_yields_description_and_params(shape: str, definition: dict[str, Any]) -> None:
    text = tool_text(Tool(name="find", definition=definition))
    assert text.description == "Find issues"
    assert "repo name" in text.params
    assert "Repository to search" in text.params
    assert "open" in text.params
    assert "closed" in text.params


def test_top_level_description_wins_over_definition() -> None:
    tool = Tool(name="t", description="Top level", definition={"name": "t", "description": "Inner"})
    assert tool_text(tool).description == "Top level"


def test_missing_definition_and_description_gives_name_only() -> None:
    text = tool_text(Tool(name="list_pull_requests"))
    assert (text.description, text.params) == ("", "")
    assert text.name_tokens() == ["list", "pull", "requests", "request"]  # plural + singular


def test_nested_object_and_array_params_are_walked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {
                    "labels": {
                        "type": "array",
                        "items": {"type": "string", "description": "Label name"},
                    }
                },
            }
        },
    }
    text = tool_text(Tool(name="t", definition={"name": "t", "inputSchema": schema}))
    assert "labels" in text.params
    assert "Label name" in text.params


def test_schema_walk_is_bounded_in_depth() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    node = schema
    for i in range(30):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"][f"level{i}"] = child
        node = child
    text = tool_text(Tool(name="t", definition={"parameters": schema}))
    assert "level0" in text.params
    assert "level29" not in text.params


def test_escaped_markup_arrives_unescaped() -> None:
    import msgspec  # noqa: PLC0415

    raw = b'{"name":"t","definition":{"description":"a \\u003cb\\u003e \\u0026 c"}}'
    assert tool_text(msgspec.json.decode(raw, type=Tool)).description == "a <b> & c"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mcp__github__create_issue", ("mcp github", "create_issue")),
        ("github.create_issue", ("github", "create_issue")),
        ("server/tool-name", ("server", "tool-name")),
        ("create_issue", ("", "create_issue")),
        ("getWeatherForecast", ("", "getWeatherForecast")),
    ],
    ids=["mcp", "dotted", "slashed", "plain", "camel"],
)
def test_split_namespace(name: str, expected: tuple[str, str]) -> None:
    assert split_namespace(name) == expected


def test_dense_text_contains_every_field() -> None:
    tool = Tool(
        name="mcp__slack__send_message",
        description="Post to a channel",
        definition={"inputSchema": {"properties": {"channelId": {"type": "string"}}}},
    )
    dense = tool_text(tool).dense_text()
    for part in ("slack", "send message", "Post to a channel", "channel id"):
        assert part in dense
