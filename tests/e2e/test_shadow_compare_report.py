"""``tool-selector shadow-compare``: the report from a fixture capture, with and without replay."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.support import ROOT, ServiceProcess
from tool_selector.offline.cli import main
from tool_selector.offline.shadow_compare import Case, parse_case, read_input

CAPTURE = ROOT / "tests" / "fixtures" / "shadow_capture.jsonl"
PROXY = ROOT / "tests" / "fixtures" / "context-gateway"
SECTIONS = ("summary", "latency", "outcomes", "agreement", "abstentions", "disagreements")


def _report(tmp_path: Path, *extra: str, source: Path = CAPTURE) -> tuple[dict[str, Any], str]:
    html, summary = tmp_path / "r.html", tmp_path / "s.json"
    code = main(
        ["shadow-compare", str(source), "--html", str(html), "--json", str(summary), *extra]
    )
    assert code == 0
    return json.loads(summary.read_text()), html.read_text()


def test_capture_report_summary(tmp_path: Path) -> None:
    summary, _ = _report(tmp_path)
    assert summary["decisions"] == 6
    assert summary["lines"]["unusable"] == {"not JSON": 1, "blank line": 1}
    assert summary["outcomes"] == {"ok": 4, "timeout": 1, "empty_selection": 1}
    assert summary["agreement"]["compared"] == 5
    assert summary["agreement"]["top1_rate"] == 0.75
    assert summary["abstentions"] == {"none": 4, "selector": 0, "relevance": 0, "both": 1}
    assert summary["latency_ms"]["p50"] == 12.5
    assert [d["pattern"] for d in summary["disagreements"]] == ["open a bug report"]


def test_capture_report_html_is_self_contained_with_sections(tmp_path: Path) -> None:
    _, html = _report(tmp_path)
    assert all(f'id="{s}"' in html for s in SECTIONS)
    svgs = re.findall(r"<svg.*?</svg>", html, re.DOTALL)
    assert len(svgs) >= 5
    assert all(ElementTree.fromstring(svg) is not None for svg in svgs)
    assert "open a bug report" in html
    assert not re.search(r"(src|href)\s*=|<link|url\(", html)  # nothing loaded from outside


def test_replay_report_against_the_service(tmp_path: Path, lexical_service: ServiceProcess) -> None:
    summary, html = _report(tmp_path, "--url", lexical_service.url)
    assert (summary["source"], summary["decisions"], summary["skipped_redacted"]) == (
        "replay",
        5,
        1,
    )
    assert set(summary["outcomes"]) <= {"ok", "empty_selection"}
    assert summary["latency_ms"]["count"] == 5
    assert lexical_service.url in html


def test_proxy_log_report_without_replay(tmp_path: Path) -> None:
    summary, html = _report(tmp_path, source=PROXY / "tool_discovery.jsonl")
    assert summary["lines"] == {
        "total": 104,
        "used": {"proxy search": 56, "proxy request filtering": 36, "proxy lazy_loading": 12},
        "unusable": {},
    }
    assert summary["proxy_replay"]["not_replayed"] == {"no --url given": 56}
    assert 'id="proxy"' in html
    assert "api_fallback_empty_selection" in html


def test_proxy_log_replayed_over_its_tool_list(
    tmp_path: Path, lexical_service: ServiceProcess
) -> None:
    catalog = PROXY / "D-v0.5.3-search.json"
    summary, html = _report(
        tmp_path,
        *("--catalog", str(catalog), "--url", lexical_service.url),
        source=PROXY / "tool_discovery.jsonl",
    )
    replay = summary["proxy_replay"]
    assert (replay["replayed"], replay["not_replayed"], replay["catalog_tools"]) == (56, {}, 150)
    assert summary["decisions"] == 56
    assert summary["agreement"]["compared"] > 0
    assert "calculate_displacement" in html


def test_missing_capture_exits_2_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal was printed on standard output."""
    assert main(["shadow-compare", str(tmp_path / "absent.jsonl")]) == 2
    said = capsys.readouterr()
    assert (said.out, said.err) == (
        "",
        f"tool-selector: no such capture file: {tmp_path}/absent.jsonl\n",
    )


@pytest.mark.parametrize("latency", ["NaN", "Infinity", "-Infinity"])
def test_a_latency_that_is_not_a_finite_number_is_left_out(tmp_path: Path, latency: str) -> None:
    """A ``NaN`` latency (Python's JSON reader takes it) made the summary's mean, p50 and max
    ``NaN``: not JSON, and not a latency."""
    capture = tmp_path / "c.jsonl"
    capture.write_text(
        f'{{"pattern": "q", "tools": ["a", "b"], "selected": ["a"], "latency_ms": {latency}}}\n'
        '{"pattern": "r", "tools": ["a", "b"], "selected": ["b"], "latency_ms": 3}\n'
    )
    summary, _ = _report(tmp_path, source=capture)
    assert summary["decisions"] == 2
    assert {k: summary["latency_ms"][k] for k in ("count", "mean", "p50", "max")} == {
        "count": 1,
        "mean": 3.0,
        "p50": 3.0,
        "max": 3.0,
    }
    json.loads((tmp_path / "s.json").read_text(), parse_constant=_refuse)


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} in the summary")


def test_unreadable_catalog_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("{}\n{oops\n")
    log = str(PROXY / "tool_discovery.jsonl")
    assert main(["shadow-compare", log, "--catalog", str(catalog)]) == 2
    said = capsys.readouterr()
    assert "tools.jsonl:2: not JSON" in said.err
    assert said.out == ""


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"query": "q", "deferred_tools": ["a", {"name": "b"}], "max_results": 2},
            Case(pattern="q", tools=[{"name": "a"}, {"name": "b"}], top_k=2),
        ),
        (
            {
                "pattern": "q",
                "tools": [{"type": "function", "function": {"name": "a"}}],
                "selected_names": ["a"],
            },
            Case(
                pattern="q", tools=[{"type": "function", "function": {"name": "a"}}], selected=["a"]
            ),
        ),
        ({"pattern": "q", "tools": []}, None),
        (["not", "a", "record"], None),
    ],
    ids=["proxy_log", "client_capture", "no_tools", "not_an_object"],
)
def test_parse_case_shapes(record: Any, expected: Case | None) -> None:
    assert parse_case(record) == expected


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"pattern": "q", "tools": ["a"], "latency_ms": 1' + "0" * 400 + "}",
    ],
    ids=["too_deep", "latency_overflows_float"],
)
def test_unreadable_lines_are_counted_not_fatal(tmp_path: Path, line: str) -> None:
    capture = tmp_path / "c.jsonl"
    capture.write_text(line + "\n" + CAPTURE.read_text())
    unusable = read_input(capture).unusable
    assert unusable.total() == 3  # this one, the fixture's bad line and its blank line


def test_a_replay_nothing_answered_fails_and_writes_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every replayed request refused (a wrong address) reported "5 decisions ... wrote"
    with exit 0, the connect errors counted as the replay's latency."""
    html, summary = tmp_path / "r.html", tmp_path / "s.json"
    args = ["--url", "http://127.0.0.1:9", "--html", str(html), "--json", str(summary)]
    assert main(["shadow-compare", str(CAPTURE), *args]) == 1
    assert "answered none of the replayed requests: 5 connect_error" in capsys.readouterr().err
    assert not html.exists()
    assert not summary.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["shadow-compare", str(CAPTURE), "--html", "{dir}"],
        ["export-openapi", "-o", "{dir}"],
        ["lint", "--catalog", "{catalog}", "--ranking", "lexical", "-o", "{dir}"],
    ],
    ids=["shadow-compare", "export-openapi", "lint"],
)
def test_an_output_that_cannot_be_written_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """A directory as the output was a Python traceback (after a whole lint, for lint)."""
    catalog = tmp_path / "tools.json"
    catalog.write_text('[{"name": "read_file", "description": "Read a file"}]')
    argv = [a.format(dir=tmp_path, catalog=catalog) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tool-selector {argv[0]}: {tmp_path}: Is a directory"]
