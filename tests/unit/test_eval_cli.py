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
