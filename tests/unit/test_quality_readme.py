"""The quality table of docs/quality.md is generated from reports/quality.json and kept in sync."""

import json

import pytest

from tests.support import ROOT
from tool_selector.offline.evaluation.readme import BLOCK, table, update

RESULTS = ROOT / "reports" / "quality.json"
PAGE = ROOT / "docs" / "quality.md"


def test_the_quality_block_matches_the_committed_results() -> None:
    page = PAGE.read_text()
    fresh = update(page, json.loads(RESULTS.read_text()))
    assert fresh == page, "run: python -m tool_selector.offline.evaluation.readme"


def test_the_block_shows_every_set_and_ranker_of_the_results() -> None:
    data = json.loads(RESULTS.read_text())
    header, *rows = [line for line in table(data).splitlines() if line.startswith("| ")]
    assert all(f" {res['dataset']} (" in header for res in data["results"])
    rankers = {name for res in data["results"] for name in res["rankers"]}
    assert rankers <= {row.split(" | ")[0].removeprefix("| ") for row in rows}


def test_a_page_without_the_block_is_refused() -> None:
    with pytest.raises(ValueError, match="quality:start"):
        update("no block here", json.loads(RESULTS.read_text()))


def test_the_block_pattern_spans_start_to_end() -> None:
    text = "a\n<!-- quality:start (x) -->\nold\n<!-- quality:end -->\nb"
    assert BLOCK.search(text) is not None
