"""The suite's slice of the bench (``tests/fixtures/bench``) is what ``bench_slice`` makes:
sliced again, every file comes out byte for byte the same, and it holds each split's first
sampled queries, so a test asking for that many reads what it reads on the whole set."""

from pathlib import Path

import pytest

from tests.support import BENCH_SLICE
from tool_selector.offline.evaluation import bench_slice
from tool_selector.offline.evaluation.dataset import AGENT_SETS, API_SETS, load_dataset, split_of

SETS = (*API_SETS, *AGENT_SETS)


@pytest.mark.parametrize("name", SETS)
def test_the_slice_sliced_again_is_the_slice(name: str, tmp_path: Path) -> None:
    bench_slice.slice_set(BENCH_SLICE, name, tmp_path)
    for file in bench_slice.FILES:
        assert (tmp_path / name / file).read_bytes() == (BENCH_SLICE / name / file).read_bytes()


@pytest.mark.parametrize("name", SETS)
def test_each_set_of_the_slice_loads_with_queries_of_both_splits(name: str) -> None:
    data = load_dataset(BENCH_SLICE, name)
    splits = {split_of(q.id) for q in data.queries}
    assert splits == {"dev", "test"}
    assert len(data.queries) >= min(2 * bench_slice.PER_SPLIT, 150)


def test_a_sampled_set_keeps_only_the_tools_its_queries_name(tmp_path: Path) -> None:
    queries, tools = bench_slice.slice_set(BENCH_SLICE, "sealtools", tmp_path)
    data = load_dataset(tmp_path, "sealtools")
    assert {t.name for t in data.tools} == {g for q in data.queries for g in q.gold}
    assert (queries, tools) == (len(data.queries), len(data.tools))
