"""``tool-selector eval`` end to end with the real model, on a small MetaTool sample."""

import json
from pathlib import Path

import pytest

from tests.support import BENCH_SLICE
from tool_selector.offline.cli import main

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("eval") / "quality.json"
    args = ["eval", "--bench-dir", str(BENCH_SLICE), "--dataset", "metatool", "--limit", "20"]
    args += ["--negatives", "5"]
    assert main([*args, "--no-progress", "--output", str(out)]) == 0
    data: dict[str, object] = json.loads(out.read_text())
    data["markdown"] = out.with_suffix(".md").read_text()
    return data


def test_eval_reports_the_service_and_every_reference(results: dict) -> None:  # type: ignore[type-arg]
    rankers = results["results"][0]["rankers"]
    assert set(rankers) == {
        "service",
        "service lexical",
        "service (no abstention)",
        "service cold (static)",
        "service cold (shortlist)",
        "relevance",
        "bm25",
        "bm25+params",
        "dense",
        "rrf",
    }


def test_eval_measures_the_test_split_at_k5(results: dict) -> None:  # type: ignore[type-arg]
    assert (results["split"], results["k"], results["results"][0]["queries"]) == ("test", 5, 20)


def test_the_service_finds_most_metatool_tools(results: dict) -> None:  # type: ignore[type-arg]
    assert results["results"][0]["rankers"]["service"]["r@5"] >= 50


def test_eval_reports_abstention_on_negatives(results: dict) -> None:  # type: ignore[type-arg]
    result = results["results"][0]
    assert result["negatives"] == 10
    assert 0 <= result["abstain_negative_pct"] <= 100


def test_eval_writes_the_markdown_table(results: dict) -> None:  # type: ignore[type-arg]
    assert "| service | " in results["markdown"]


def test_eval_rejects_a_missing_bench_dir(tmp_path: Path) -> None:
    assert main(["eval", "--bench-dir", str(tmp_path), "--output", "-", "--no-progress"]) == 2
