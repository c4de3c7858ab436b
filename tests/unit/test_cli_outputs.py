"""Every output a command writes is checked before its work: one line naming it, status 2.

Each was found after the work: ``eval --output X`` wrote X.json, then failed on X.md (a
directory) after the whole run; ``shadow-compare`` wrote its JSON, then failed on the HTML;
``lint -o`` linted the whole catalog first; ``fetch-model`` and ``distill-static`` downloaded
or built before finding their folder was a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tool_selector.offline.cli import main

ROOT = Path(__file__).parents[2]
MINI = ROOT / "tests" / "fixtures" / "agent_mini"
CAPTURE = ROOT / "tests" / "fixtures" / "shadow_capture.jsonl"
EVAL = ["eval", "--catalog", str(MINI / "tools.jsonl"), "--queries", str(MINI / "queries.jsonl")]


def _no_work(*_: object, **__: object) -> None:
    raise AssertionError("the work started before the outputs were checked")


@pytest.fixture(autouse=True)
def work_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """What each command does first after its checks fails the test if it is reached."""
    for target in (
        "tool_selector.embeddings.factory.encoder_from_settings",
        "tool_selector.offline.lint_cli.lint_selector",
        "tool_selector.offline.fetch_model.download",
        "tool_selector.embeddings.distill.distill",
    ):
        monkeypatch.setattr(target, _no_work)


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    [line] = capsys.readouterr().err.splitlines()
    return line


def test_eval_checks_the_markdown_next_to_its_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "q.md").mkdir()
    assert main([*EVAL, "--no-progress", "--output", str(tmp_path / "q.json")]) == 2
    assert _one_line(capsys) == f"tool-selector eval: {tmp_path}/q.md: Is a directory"
    assert not (tmp_path / "q.json").exists()


@pytest.mark.parametrize(
    ("flag", "path", "reason"),
    [
        ("--answers", "a-file/answers.jsonl", "Not a directory"),
        ("--update-readme", "absent.md", "No such file or directory"),
    ],
    ids=["answers-under-a-file", "readme-missing"],
)
def test_eval_checks_its_other_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, path: str, reason: str
) -> None:
    (tmp_path / "a-file").write_text("")
    argv = [*EVAL, "--no-progress", "--output", "-", flag, str(tmp_path / path)]
    assert main(argv) == 2
    assert _one_line(capsys) == f"tool-selector eval: {tmp_path / path}: {reason}"


def test_eval_learn_checks_its_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "learn.json").mkdir()
    argv = [*EVAL, "--learn", "--no-progress", "--output", str(tmp_path / "learn.json")]
    assert main(argv) == 2
    assert _one_line(capsys) == f"tool-selector eval: {tmp_path}/learn.json: Is a directory"


def test_shadow_compare_checks_both_reports_before_writing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, html = tmp_path / "s.json", tmp_path / "missing" / "r.html"
    argv = ["shadow-compare", str(CAPTURE), "--json", str(summary), "--html", str(html)]
    assert main(argv) == 2
    assert _one_line(capsys) == f"tool-selector shadow-compare: {html}: No such file or directory"
    assert not summary.exists()


def test_lint_checks_its_output_before_the_probes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    out = tmp_path / "a-file" / "report.txt"
    catalog = str(MINI / "tools.jsonl")
    assert main(["lint", "--catalog", catalog, "--ranking", "lexical", "-o", str(out)]) == 2
    assert _one_line(capsys) == f"tool-selector lint: {out}: Not a directory"


@pytest.mark.parametrize(
    "argv",
    [["fetch-model", "bge-small-en-v1.5", "--force"], ["distill-static", "--force"]],
    ids=["fetch-model", "distill-static"],
)
def test_a_folder_output_that_is_a_file_is_refused_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    folder = tmp_path / "model"
    folder.write_text("")
    assert main([*argv, "-o", str(folder)]) == 2
    assert _one_line(capsys) == f"tool-selector {argv[0]}: {folder}: Not a directory"
