"""``--catalog``: the operator's tool list in any of the shapes a proxy keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import ROOT
from tool_selector.offline.tool_file import ToolFileError, load_tools, read_tool_list
from tool_selector_client.definitions import tool_name

REQUEST = ROOT / "tests" / "fixtures" / "context-gateway" / "D-v0.5.3-search.json"
ANTHROPIC = {"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}
OPENAI = {"type": "function", "function": {"name": "read_file", "description": "Read a file"}}


def test_a_request_body_as_the_proxy_sent_it() -> None:
    tools = load_tools(REQUEST)
    assert len(tools) == 150
    assert "input_schema" in tools[0]  # the raw Anthropic object, not the wrapper


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([ANTHROPIC, OPENAI, ANTHROPIC]),
        json.dumps(ANTHROPIC) + "\n" + json.dumps(OPENAI) + "\n",
        json.dumps({"tools": [{"name": "get_weather", "parameters": ANTHROPIC}, OPENAI]}),
        json.dumps(
            {
                "session_id": "s",
                "tools": [
                    {"tool_name": "get_weather", "schema": ANTHROPIC},
                    {"tool_name": "read_file", "schema": OPENAI},
                ],
            }
        ),
    ],
    ids=["json_list_with_duplicate", "jsonl", "prefilter_wrappers", "session_tools_json"],
)
def test_shapes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(text)
    assert [tool_name(t) for t in load_tools(path)] == ["get_weather", "read_file"]


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps(ANTHROPIC) + "\n{oops\n")
    with pytest.raises(ToolFileError, match=r"tools.jsonl:2: not JSON"):
        load_tools(path)


def test_a_file_nested_too_deep_is_named_not_a_traceback(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ToolFileError, match=r"deep\.json: nested too deep"):
        load_tools(deep)
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"name": "a"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ToolFileError, match=r"deep\.jsonl:2: not JSON"):
        load_tools(lines)


def test_what_is_left_out_is_said_by_entry(tmp_path: Path) -> None:
    """``load_tools`` dropped nameless entries and repeated names without a word; then a
    Gemini wrapper's declarations that are not objects were dropped unsaid, and the others
    numbered as if each were an entry of the file's list."""
    other = {**OPENAI, "function": {**OPENAI["function"], "description": "Another"}}
    entries = [
        ANTHROPIC,
        "a string",
        {"description": "no name"},
        {"functionDeclarations": [{"name": "bad\nname"}, "oops", 42, {"name": "  "}]},
        ANTHROPIC,
        OPENAI,
        other,
        OPENAI,
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(entries))
    found = read_tool_list(path)
    assert [tool_name(t) for t in found.tools] == ["get_weather", "read_file"]
    assert found.unusable == [
        ("entry 2", None),
        ("entry 3", None),
        ("entry 4, declaration 1", "bad\nname"),
        ("entry 4, declaration 2", None),
        ("entry 4, declaration 3", None),
        ("entry 4, declaration 4", "  "),
    ]
    assert found.repeated == {"get_weather": 2, "read_file": 3}
    assert found.differing == {"read_file"}


def test_a_jsonl_files_entry_left_out_is_said_by_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text(f"{json.dumps(ANTHROPIC)}\n\n[1]\n")
    assert read_tool_list(path).unusable == [("line 3", None)]
