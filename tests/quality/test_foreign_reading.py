"""No English query of the seven sets reads as foreign (``ranking/language.py``): only the
non-English ones meet the multilingual arm and the glossary, so English answers cannot move.
Read on the suite's slice of the bench (every non-English query and 200 others a set), and on
the whole bench too where it lies beside the checkout."""

from pathlib import Path

import pytest

from tests.support import BENCH_SLICE
from tool_selector.offline.evaluation.dataset import DATASETS, default_bench_dir, load_dataset
from tool_selector.ranking.language import reads_foreign

#: BFCL's Chinese and Korean queries and Arcade's one Spanish query.
EXPECTED = {"bfcl": 13, "arcade": 1}
BENCHES = [BENCH_SLICE, *([default_bench_dir()] if (default_bench_dir() / "bfcl").is_dir() else [])]


@pytest.mark.parametrize("bench", BENCHES, ids=["slice", "bench"][: len(BENCHES)])
def test_only_the_non_english_queries_of_the_seven_sets_read_as_foreign(bench: Path) -> None:
    for name in DATASETS:
        queries = load_dataset(bench, name).queries
        foreign = [q.text for q in queries if reads_foreign(q.text)]
        assert len(foreign) == EXPECTED.get(name, 0), name
        assert not any(text.isascii() for text in foreign), foreign
