"""No English query of the seven sets reads as foreign (``ranking/language.py``): only the
non-English ones meet the multilingual arm and the glossary, so English answers cannot move."""

import pytest

from tool_selector.offline.evaluation.dataset import DATASETS, default_bench_dir, load_dataset
from tool_selector.ranking.language import reads_foreign

BENCH = default_bench_dir()
pytestmark = pytest.mark.skipif(not (BENCH / "bfcl").is_dir(), reason=f"no benchmark at {BENCH}")

#: BFCL's Chinese and Korean queries and Arcade's one Spanish query.
EXPECTED = {"bfcl": 13, "arcade": 1}


def test_only_the_non_english_queries_of_the_seven_sets_read_as_foreign() -> None:
    for name in DATASETS:
        queries = load_dataset(default_bench_dir(), name).queries
        foreign = [q.text for q in queries if reads_foreign(q.text)]
        assert len(foreign) == EXPECTED.get(name, 0), name
        assert not any(text.isascii() for text in foreign), foreign
