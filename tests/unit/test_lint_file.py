"""``tool-selector lint`` reports what its catalog file holds that a search does not take.

It dropped entries with no name and repeated names without a word, and linted a name the
service refuses (301 characters: every search over the catalog a 400) as any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tool_selector.offline.cli import main

READ = {"name": "read_file", "description": "Read a file from disk"}
WRITE = {"name": "write_file", "description": "Write a file to disk"}
LONG = "x" * 301


def _lint(tmp_path: Path, entries: list[Any]) -> dict[str, Any]:
    catalog, out = tmp_path / "tools.json", tmp_path / "report.json"
    catalog.write_text(json.dumps(entries))
    argv = ["lint", "--catalog", str(catalog), "--ranking", "lexical", "--format", "json"]
    assert main([*argv, "-o", str(out)]) == 0
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def _found(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["kind"] == kind]


def test_entries_with_no_name_are_one_finding_naming_them(tmp_path: Path) -> None:
    report = _lint(tmp_path, [READ, "a string", {"description": "no name"}, WRITE])
    [finding] = _found(report, "unusable_entry")
    assert finding["tools"] == []
    assert "2 tool entries hold no name" in finding["detail"]
    assert finding["detail"].endswith("are left out: entry 2; entry 3")
    assert report["tools"] == 2


def test_a_gemini_declaration_that_is_not_an_object_is_found_in_its_wrapper(
    tmp_path: Path,
) -> None:
    """They were dropped without a word ("oops", 42), and the one found was numbered as
    an entry of the file's list (``entries 2``: the file's second entry is a tool)."""
    gemini = {"functionDeclarations": [READ, "oops", 42, {"description": "no name"}]}
    [finding] = _found(_lint(tmp_path, [gemini, WRITE]), "unusable_entry")
    assert finding["detail"].startswith("3 tool entries hold no name")
    assert finding["detail"].endswith(
        "are left out: entry 1, declaration 2; entry 1, declaration 3; entry 1, declaration 4"
    )


def test_one_entry_with_no_name_is_said_in_the_singular(tmp_path: Path) -> None:
    [finding] = _found(_lint(tmp_path, [READ, 42]), "unusable_entry")
    assert finding["detail"].startswith("1 tool entry holds no name")
    assert finding["detail"].endswith("is left out: entry 2")


@pytest.mark.parametrize(
    ("entries", "detail"),
    [
        ([READ, READ, WRITE], "given 2 times: the first is linted"),
        (
            [READ, {**READ, "description": "Other"}, READ, WRITE],
            "given 3 times; the definitions differ",
        ),
    ],
    ids=["alike", "differing"],
)
def test_a_repeated_name_is_a_finding(tmp_path: Path, entries: list[Any], detail: str) -> None:
    [finding] = _found(_lint(tmp_path, entries), "duplicate_name")
    assert finding["tools"] == ["read_file"]
    assert finding["detail"].startswith(detail)


@pytest.mark.parametrize(
    ("name", "code"),
    [(LONG, "name_too_long"), ("bad\nname", "invalid_name"), ("  ", "invalid_name")],
    ids=["too-long", "line-break", "blank"],
)
def test_a_name_the_service_refuses_is_a_finding_first(
    tmp_path: Path, name: str, code: str
) -> None:
    report = _lint(tmp_path, [READ, {"name": name, "description": "Delete a file"}, WRITE])
    first = report["findings"][0]
    assert (first["kind"], first["tools"]) == ("invalid_name", [name])
    assert f"(400 {code})" in first["detail"]
    assert report["tools"] == 2  # left out of the probes: the service would rank nothing


def test_the_length_limit_is_the_services_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_MAX_NAME_CHARS", "9")  # read_file has 9, write_file 10
    refused = _found(_lint(tmp_path, [READ, WRITE]), "invalid_name")
    assert [f["tools"] for f in refused] == [["write_file"]]


def test_a_clean_file_has_none_of_these_findings(tmp_path: Path) -> None:
    report = _lint(tmp_path, [READ, WRITE])
    kinds = {f["kind"] for f in report["findings"]}
    assert not kinds & {"invalid_name", "unusable_entry", "duplicate_name"}


def test_a_file_with_only_refused_names_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps([{"name": LONG}]))
    assert main(["lint", "--catalog", str(catalog), "--ranking", "lexical"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == f"tool-selector lint: {catalog}: no tool with a name a search takes (1 refused)"
