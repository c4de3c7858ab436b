"""The eval runner on a tiny hand-made bench with the fake encoder (fast, no model)."""

import dataclasses
import json
from pathlib import Path

import pytest

from tests.fakes import HashingEncoder
from tool_selector.offline.evaluation.dataset import load_dataset
from tool_selector.offline.evaluation.metrics import MetricSums
from tool_selector.offline.evaluation.runner import (
    SERVICE,
    SERVICE_COLD,
    SERVICE_LEXICAL,
    SERVICE_OWN,
    SERVICE_SHORTLIST,
    EvalConfig,
    Evaluator,
)
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector_client.wire import SearchRequest

TOOLS = {
    "bfcl": ["send_email", "read_file", "get_weather", "book_flight"],
    "metatool": ["StockPrices", "NewsReader", "RecipeFinder"],
    "sealtools": ["translateText", "convertCurrency", "playMusic"],
}


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    for dataset, names in TOOLS.items():
        folder = tmp_path / dataset
        folder.mkdir()
        tools = [{"name": n, "description": f"{n} tool", "parameters": None} for n in names]
        _write(folder, "tools.jsonl", tools)
        queries = [
            {"id": f"{dataset}-{i}", "query": n, "gold": [n], "catalog": [*names[:2], n]}
            for i, n in enumerate(names * 3)
        ]
        _write(folder, "queries.jsonl", queries)
        if dataset == "bfcl":
            catalogs = [{"id": q["id"], "tools": tools} for q in queries]
            _write(folder, "catalogs.jsonl", catalogs)
    return tmp_path


def run(bench: Path, **overrides: object) -> dict:  # type: ignore[type-arg]
    config = EvalConfig(bench_dir=bench, datasets=("bfcl",), split="all", progress=False)
    config = dataclasses.replace(config, **overrides)  # type: ignore[arg-type]
    return Evaluator(HashingEncoder(), config).run().as_dict()


def test_named_tools_are_found_first(bench: Path) -> None:
    result = run(bench)["results"][0]
    assert result["rankers"][SERVICE]["r@1"] == 100.0


def test_negatives_come_from_the_other_datasets_and_bfcl_irrelevance(bench: Path) -> None:
    result = run(bench, negatives=2)["results"][0]
    assert result["negatives"] == 2 + 2 + 2


def test_per_query_catalogs_add_a_row(bench: Path) -> None:
    rankers = run(bench, per_query_catalogs=True)["results"][0]["rankers"]
    assert rankers[SERVICE_OWN]["r@1"] == 100.0


def test_limit_caps_the_queries(bench: Path) -> None:
    assert run(bench, limit=5)["results"][0]["queries"] == 5


def test_a_dataset_without_queries_in_the_split_reports_zero_queries(bench: Path) -> None:
    (bench / "bfcl" / "queries.jsonl").write_text("")
    result = run(bench, negatives=0)["results"][0]
    assert result["queries"] == 0


MINI = Path(__file__).parents[1] / "fixtures" / "agent_mini"


@pytest.fixture
def mini() -> dict:  # type: ignore[type-arg]
    config = EvalConfig(bench_dir=MINI, datasets=(str(MINI),), split="all", progress=False)
    return Evaluator(HashingEncoder(), config).run().as_dict()["results"][0]


def test_no_match_queries_are_counted_apart_from_real_needs(mini: dict) -> None:  # type: ignore[type-arg]
    assert (mini["queries"], mini["no_match_queries"]) == (5, 1)
    assert "abstain%" in mini["rankers"][SERVICE]


def test_every_row_is_reported_per_category(mini: dict) -> None:  # type: ignore[type-arg]
    cats = mini["categories"]
    assert set(cats) == {"keyword", "tool_name", "sentence", "paraphrase", "no_match"}
    assert cats["keyword"]["queries"] == 2
    assert set(cats["no_match"]["rankers"]) == set(mini["rankers"])


def test_the_lexical_row_is_the_selector_without_an_encoder(mini: dict) -> None:  # type: ignore[type-arg]
    data = load_dataset(MINI, str(MINI))
    selector, sums = Selector(), MetricSums(k=5)
    for q in data.queries:
        request = SearchRequest(pattern=q.text, tools=list(data.tools), top_k=5)
        sums.add(selector.select(request).ranking.names, q.gold)
    expected = sums.summary()
    del expected["ms/query"]
    got = {key: mini["rankers"][SERVICE_LEXICAL][key] for key in expected}
    assert got == expected


def test_without_a_static_arm_there_is_no_cold_row(mini: dict) -> None:  # type: ignore[type-arg]
    assert SERVICE_COLD not in mini["rankers"]


class StaticTable(HashingEncoder):
    """A stand-in static arm: the fake encoder under another model id, as the table is."""

    model_id = "test/static-table"


@pytest.mark.parametrize(
    ("row", "arm"),
    [(SERVICE_COLD, "static"), (SERVICE_SHORTLIST, "shortlist")],
    ids=["static", "shortlist"],
)
def test_the_cold_rows_are_the_static_path_and_never_embed_the_tools(row: str, arm: str) -> None:
    """``service cold (static)``: the static arm's answer (re-read by the model only where
    it says no match); ``service cold (shortlist)``: its leaders re-ranked by the model.
    Neither has the catalog's vectors where the dense arm looks."""
    data = load_dataset(MINI, str(MINI))
    config = EvalConfig(bench_dir=MINI, datasets=(str(MINI),), split="all", progress=False)
    evaluator = Evaluator(HashingEncoder(), config, static=StaticTable())
    got = evaluator.run().as_dict()["results"][0]["rankers"][row]
    cold = {SERVICE_COLD: evaluator.cold, SERVICE_SHORTLIST: evaluator.shortlist}[row]
    assert cold is not None
    sums, arms = MetricSums(k=5), set()
    for q in data.queries:  # after the whole run: still cold, nothing embedded behind it
        outcome = cold.select(SearchRequest(pattern=q.text, tools=list(data.tools), top_k=5))
        sums.add(outcome.ranking.names, q.gold)
        arms.add((outcome.path, outcome.provenance.arm))
    entry = cold.entry(ToolSource.of(list(data.tools))).entry
    assert entry.matrix(HashingEncoder().model_id) is None  # the dense arm never had it
    expected = sums.summary()
    del expected["ms/query"]
    assert arms == {("static", arm)}
    assert {key: got[key] for key in expected} == expected
