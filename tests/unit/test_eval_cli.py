"""``tool-selector eval`` on the command line: bad arguments and bad data exit 2 with a reason."""

import json
from pathlib import Path

import pytest

from tests.fakes import HashingEncoder
from tool_selector.offline.cli import main

MINI = Path(__file__).parents[1] / "fixtures" / "agent_mini"


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hashing encoder instead of the bundled model, no multilingual arm (the CLI asks
    the factory)."""
    monkeypatch.setattr(
        "tool_selector.embeddings.factory.encoder_from_settings", lambda _: HashingEncoder()
    )
    monkeypatch.setattr(
        "tool_selector.embeddings.factory.multilingual_from_settings", lambda _: None
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--limit", "0"], "must be >= 1"),
        (["--k", "0"], "must be >= 1"),
        (["--k", "-3"], "must be >= 1"),
        (["--catalog", "t.jsonl"], "go together"),
        (["--dataset", "no-such-set"], "unknown dataset 'no-such-set'"),
    ],
    ids=["limit-0", "k-0", "k-negative", "catalog-alone", "unknown-set"],
)
def test_eval_rejects_bad_arguments(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", *args, "--output", "-", "--no-progress"]) == 2
    assert says in capsys.readouterr().err


def test_catalog_and_queries_files_are_evaluated(
    fake_encoder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q.json"
    files = ["--catalog", str(MINI / "tools.jsonl"), "--queries", str(MINI / "queries.jsonl")]
    assert main(["eval", *files, "--split", "all", "--no-progress", "--output", str(out)]) == 0
    [result] = json.loads(out.read_text())["results"]
    assert (result["dataset"], result["tools"], result["queries"]) == ("agent_mini", 5, 5)
    assert "| service lexical |" in out.with_suffix(".md").read_text()


def test_a_gold_name_missing_from_the_catalog_names_the_line(
    fake_encoder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "queries.jsonl"
    lines = (MINI / "queries.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace("github.create_issue", "gitlab.create_issue")
    queries.write_text("\n".join(lines) + "\n")
    args = ["--catalog", str(MINI / "tools.jsonl"), "--queries", str(queries)]
    assert main(["eval", *args, "--output", "-", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{queries}:2: gold 'gitlab.create_issue' not in the catalog" in err
    assert "Traceback" not in err


def _queries(tmp_path: Path, keep: set[str], *, twice: str | None = None) -> Path:
    """agent_mini's queries with these ids (``twice``: one of them on a second line too)."""
    rows = [line for line in (MINI / "queries.jsonl").read_text().splitlines() if line]
    kept = [r for r in rows if json.loads(r)["id"] in keep]
    kept += [r for r in rows if json.loads(r)["id"] == twice]
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(kept) + "\n")
    return path


def _eval(queries: Path, *extra: str) -> int:
    files = ["--catalog", str(MINI / "tools.jsonl"), "--queries", str(queries)]
    return main(["eval", *files, "--output", "-", "--no-progress", *extra])


def test_a_split_with_no_query_is_refused_in_one_line(
    fake_encoder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a table of zero queries and status 0 (these three ids are all dev)."""
    queries = _queries(tmp_path, {"mini-kw-1", "mini-name-1", "mini-sent-1"})
    assert _eval(queries, "--split", "test") == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"tool-selector eval: {tmp_path.name} ({tmp_path}): none of its 3 queries is in the "
        "test split (--split all takes every one)"
    ]


def test_a_query_id_on_two_lines_is_refused_naming_both(
    fake_encoder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was counted twice (two test queries in the table for one)."""
    queries = _queries(tmp_path, {"mini-para-1", "mini-none-1"}, twice="mini-para-1")
    assert _eval(queries, "--split", "test") == 2
    err = capsys.readouterr().err
    assert f"{queries}:3: query id 'mini-para-1' repeats line 1" in err
