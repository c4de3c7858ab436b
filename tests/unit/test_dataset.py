import json
from pathlib import Path

import pytest

from tool_selector.offline.evaluation.dataset import (
    REPO_ROOT,
    BenchQuery,
    DatasetError,
    as_tool,
    load_dataset,
    pick_queries,
    split_of,
)

QUERIES = [BenchQuery(id=f"q{i}", text=f"query {i}", gold=("t",)) for i in range(200)]


@pytest.mark.parametrize(
    ("query_id", "split"),
    [("multiple_0", "dev"), ("q0", "dev"), ("q1", "test")],
    ids=["sha256-0x9a", "sha256-0x34", "sha256-0xc7"],
)
def test_split_is_the_parity_of_the_ids_first_sha256_byte(query_id: str, split: str) -> None:
    assert split_of(query_id) == split


def test_both_splits_are_used() -> None:
    assert {split_of(q.id) for q in QUERIES} == {"dev", "test"}


@pytest.mark.parametrize("split", ["dev", "test"], ids=["dev", "test"])
def test_pick_queries_keeps_one_split(split: str) -> None:
    assert all(split_of(q.id) == split for q in pick_queries(QUERIES, split, None))  # type: ignore[arg-type]


def test_dev_and_test_partition_the_queries() -> None:
    dev, test = pick_queries(QUERIES, "dev", None), pick_queries(QUERIES, "test", None)
    assert len(dev) + len(test) == len(QUERIES)
    assert not {q.id for q in dev} & {q.id for q in test}


def test_a_larger_sample_contains_a_smaller_one() -> None:
    small = {q.id for q in pick_queries(QUERIES, "all", 10)}
    large = {q.id for q in pick_queries(QUERIES, "all", 50)}
    assert len(small) == 10
    assert small < large


def test_sample_does_not_depend_on_file_order() -> None:
    forward = pick_queries(QUERIES, "all", 10)
    backward = pick_queries(list(reversed(QUERIES)), "all", 10)
    assert forward == backward


def test_as_tool_wraps_an_openai_chat_definition() -> None:
    tool = as_tool({"name": "f", "description": "d", "parameters": {"type": "object"}})
    assert tool.definition == {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
    }


def test_load_dataset_reads_tools_and_queries(tmp_path: Path) -> None:
    folder = tmp_path / "metatool"
    folder.mkdir()
    (folder / "tools.jsonl").write_text(json.dumps({"name": "a", "description": "x"}) + "\n")
    row = {"id": "q", "query": "find a", "gold": ["a"]}
    (folder / "queries.jsonl").write_text(json.dumps(row) + "\n")
    data = load_dataset(tmp_path, "metatool")
    assert [t.name for t in data.tools] == ["a"]
    assert data.queries == (BenchQuery(id="q", text="find a", gold=("a",)),)


@pytest.mark.parametrize("name", ["metatool", "nope"], ids=["missing-folder", "unknown-name"])
def test_load_dataset_errors_clearly(tmp_path: Path, name: str) -> None:
    with pytest.raises(DatasetError):
        load_dataset(tmp_path, name)


def test_the_default_folders_are_found_from_the_package() -> None:
    assert (REPO_ROOT / "pyproject.toml").is_file()
    assert (REPO_ROOT / "eval" / "agent" / "tools.jsonl").is_file()


def test_a_line_nested_too_deep_is_named_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "tools.jsonl").write_text(
        '{"name": "a", "description": "d"}\n' + "[" * 100_000 + "\n"
    )
    (folder / "queries.jsonl").write_text('{"id": "q", "query": "x", "gold": ["a"]}\n')
    with pytest.raises(DatasetError, match=r"tools\.jsonl:2: not JSON"):
        load_dataset(tmp_path, str(folder))
