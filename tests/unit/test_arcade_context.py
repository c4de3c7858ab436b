import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import BENCH_SLICE
from tool_selector.offline.evaluation.dataset import REPO_ROOT

CONTEXT = REPO_ROOT / "eval" / "arcade_context" / "context.jsonl"
ARCADE = BENCH_SLICE / "arcade"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def context() -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in _rows(CONTEXT)}


@pytest.fixture(scope="module")
def bench() -> tuple[list[dict[str, Any]], set[str]]:
    queries = [q for q in _rows(ARCADE / "queries.jsonl") if q["category"] == "needs_context"]
    return queries, {str(t["name"]) for t in _rows(ARCADE / "tools.jsonl")}


def test_every_needs_context_query_has_a_row(
    context: dict[str, dict[str, Any]], bench: tuple[list[dict[str, Any]], set[str]]
) -> None:
    queries, _ = bench
    assert len(queries) == 62
    assert {q["id"] for q in queries} == set(context)
    for query in queries:
        row = context[query["id"]]
        assert (row["eval_file"], row["suite"], row["case"]) == (
            query["eval_file"],
            query["suite"],
            query["case"],
        )
        assert row["n_context_messages"] == query["n_context_messages"]


def test_messages_are_non_empty_strings(context: dict[str, dict[str, Any]]) -> None:
    for row in context.values():
        assert row["messages"], row["id"]
        assert all(isinstance(m, str) and m.strip() for m in row["messages"]), row["id"]
        assert all(len(m) <= 2000 for m in row["messages"]), row["id"]
        assert len(row["roles"]) == len(row["messages"])
        assert set(row["roles"]) <= {"user", "assistant", "tool"}


def test_recent_tools_are_bench_tools_most_recent_last(
    context: dict[str, dict[str, Any]], bench: tuple[list[dict[str, Any]], set[str]]
) -> None:
    _, names = bench
    for row in context.values():
        assert set(row["recent_tools"]) <= names, row["id"]
        assert len(set(row["recent_tools"])) == len(row["recent_tools"])
        if row["tool_calls"]:
            assert row["recent_tools"][-1] == row["tool_calls"][-1]
