"""The hand-written agent-style set (``eval/agent``) stays well formed and honest.

Honest means: every gold name is in the catalog, near misses have no gold, and a
``paraphrase`` query shares no word with its gold tools' text as the service reads it.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tool_selector.ranking.text import tool_text
from tool_selector.ranking.tokenize import tokenize
from tool_selector_client.wire import Tool

AGENT = Path(__file__).resolve().parents[2] / "eval" / "agent"
MINIMUMS = {"keyword": 40, "tool_name": 40, "sentence": 50, "paraphrase": 50, "no_match": 45}


def _read(name: str) -> list[dict[str, Any]]:
    lines = (AGENT / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _name(row: dict[str, Any]) -> str | None:
    function = row.get("function")
    if isinstance(function, dict):
        return function.get("name")
    return row.get("name")


def _split(query_id: str) -> str:
    return "dev" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "test"


TOOLS = _read("tools.jsonl")
QUERIES = _read("queries.jsonl")
CATALOG = {_name(row): row for row in TOOLS}
PARAPHRASES = [q for q in QUERIES if q["category"] == "paraphrase"]


def _words(name: str) -> set[str]:
    text = tool_text(Tool(name=name, definition=CATALOG[name]))
    return {
        *text.name_tokens(),
        *text.namespace_tokens(),
        *text.description_tokens(),
        *text.param_tokens(),
    }


def test_the_catalog_holds_at_least_250_unique_names() -> None:
    names = [_name(row) for row in TOOLS]
    assert (len(set(names)), len(names) >= 250) == (len(names), True)


def test_every_tool_is_named_in_a_supported_shape() -> None:
    assert all(isinstance(_name(row), str) and _name(row) for row in TOOLS)


def test_there_are_at_least_250_queries_with_unique_ids() -> None:
    ids = [q["id"] for q in QUERIES]
    assert (len(set(ids)), len(ids) >= 250) == (len(ids), True)


def test_no_query_text_is_asked_twice() -> None:
    texts = [q["query"].casefold() for q in QUERIES]
    assert len(set(texts)) == len(texts)


def test_every_query_has_a_known_category() -> None:
    assert {q["category"] for q in QUERIES} == set(MINIMUMS)


@pytest.mark.parametrize(("category", "minimum"), MINIMUMS.items(), ids=MINIMUMS)
def test_each_category_meets_its_minimum(category: str, minimum: int) -> None:
    assert sum(q["category"] == category for q in QUERIES) >= minimum


def test_every_gold_name_is_in_the_catalog() -> None:
    assert [(q["id"], g) for q in QUERIES for g in q["gold"] if g not in CATALOG] == []


def test_only_no_match_queries_have_empty_gold() -> None:
    assert [q["id"] for q in QUERIES if (q["category"] == "no_match") == bool(q["gold"])] == []


@pytest.mark.parametrize("query", PARAPHRASES, ids=[q["id"] for q in PARAPHRASES])
def test_a_paraphrase_shares_no_word_with_its_gold_tools(query: dict[str, Any]) -> None:
    gold_words = set().union(*(_words(name) for name in query["gold"]))
    assert set(tokenize(query["query"])) & gold_words == set()


@pytest.mark.parametrize("split", ["dev", "test"])
def test_each_split_holds_every_category(split: str) -> None:
    assert {q["category"] for q in QUERIES if _split(q["id"]) == split} == set(MINIMUMS)
