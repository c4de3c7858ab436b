"""Eval data sets: every provider tool shape is read as the proxy sends it; bad lines are named."""

import json
from pathlib import Path
from typing import Any

import pytest

from tool_selector.errors import DatasetError
from tool_selector.offline.evaluation.dataset import load_dataset, load_files, tools_of

MINI = Path(__file__).parents[1] / "fixtures" / "agent_mini"
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
SHAPES: list[tuple[dict[str, Any], bool]] = [
    (
        {"type": "function", "function": {"name": "f", "description": "d", "parameters": SCHEMA}},
        True,
    ),
    ({"type": "function", "name": "f", "description": "d", "parameters": SCHEMA}, True),
    ({"name": "f", "description": "d", "input_schema": SCHEMA, "cache_control": {}}, True),
    ({"name": "f", "description": "d", "inputSchema": SCHEMA}, True),
    ({"name": "f", "description": "d", "parameters": SCHEMA, "toolkit": "x"}, False),
]


@pytest.mark.parametrize(
    ("row", "raw"), SHAPES, ids=["openai-chat", "openai-responses", "anthropic", "mcp", "bench"]
)
def test_each_tool_shape_is_read_with_its_name_and_description(
    row: dict[str, Any], raw: bool
) -> None:
    [tool] = tools_of(row)
    assert (tool.name, tool.description) == ("f", "d")
    assert (tool.definition == row) is raw


def test_a_bench_row_is_wrapped_as_an_openai_chat_definition() -> None:
    [tool] = tools_of({"name": "f", "description": "d", "parameters": SCHEMA})
    assert tool.definition == {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": SCHEMA},
    }


def test_a_gemini_wrapper_gives_each_declaration() -> None:
    row = {"functionDeclarations": [{"name": "a"}, {"name": "b", "description": "x"}]}
    assert [t.name for t in tools_of(row)] == ["a", "b"]


def test_the_fixture_set_reads_every_shape_and_its_categories() -> None:
    data = load_dataset(Path("unused"), str(MINI))
    assert (data.name, len(data.tools), len(data.queries)) == ("agent_mini", 5, 6)
    assert {q.category for q in data.queries} == {
        "keyword", "tool_name", "sentence", "paraphrase", "no_match"
    }  # fmt: skip


def _files(tmp_path: Path, tools: list[Any], queries: list[Any]) -> tuple[Path, Path]:
    catalog, asked = tmp_path / "tools.jsonl", tmp_path / "asked.jsonl"
    catalog.write_text("".join(json.dumps(t) + "\n" for t in tools))
    asked.write_text("".join(json.dumps(q) + "\n" for q in queries))
    return catalog, asked


def _query(gold: list[str], qid: str = "q") -> dict[str, Any]:
    return {"id": qid, "query": "x", "gold": gold}


@pytest.mark.parametrize(
    ("tools", "queries", "where", "says"),
    [
        (
            [{"name": "a"}],
            [_query(["a"], "q1"), _query(["a"], "q2"), _query(["zz"], "q3")],
            "asked.jsonl:3",
            "'zz'",
        ),
        ([{"name": "a"}], [_query(["a"]), _query([])], "asked.jsonl:2", "'q' repeats line 1"),
        ([{"name": "a"}, {"type": "function"}], [], "tools.jsonl:2", "no usable name"),
        ([{"name": "a"}], [{"id": "q", "query": "x"}], "asked.jsonl:1", "'gold'"),
        ([{"name": "a"}], [{"id": "q", "query": " ", "gold": []}], "asked.jsonl:1", "'query'"),
    ],
    ids=["gold-not-in-catalog", "repeated-id", "tool-without-name", "no-gold", "blank-query"],
)
def test_bad_lines_are_named_by_file_and_line(
    tmp_path: Path, tools: list[Any], queries: list[Any], where: str, says: str
) -> None:
    with pytest.raises(DatasetError, match=rf"{where}: .*{says}"):
        load_files(*_files(tmp_path, tools, queries))


def test_a_no_match_query_needs_no_catalog_tool(tmp_path: Path) -> None:
    data = load_files(*_files(tmp_path, [{"name": "a"}], [_query([])]))
    assert data.queries[0].gold == ()


def test_the_category_falls_back_to_subset_then_difficulty(tmp_path: Path) -> None:
    rows = [_query(["a"], "q1") | {"subset": "multi"}, _query(["a"], "q2") | {"difficulty": "easy"}]
    data = load_files(*_files(tmp_path, [{"name": "a"}], rows))
    assert [q.category for q in data.queries] == ["multi", "easy"]
