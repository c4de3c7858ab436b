"""The proxy's own ``tool_discovery.jsonl``: every line used or counted by reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT
from tool_selector.offline.proxy_log import Filtering, Search, outcomes, parse_event
from tool_selector.offline.shadow_compare import classify, read_input

LOG = ROOT / "tests" / "fixtures" / "context-gateway" / "tool_discovery.jsonl"


def test_the_fixture_log_is_read_in_full() -> None:
    found = read_input(LOG)
    assert found.lines == len(LOG.read_text().splitlines()) == 104
    assert found.unusable.total() == 0
    assert found.used == {
        "proxy search": 56,
        "proxy request filtering": 36,
        "proxy lazy_loading": 12,
    }


def test_fixture_outcomes_name_the_fail_open_reasons_with_details() -> None:
    summary = outcomes(read_input(LOG).events)
    assert summary["searches"]["by_status"] == {
        "api_fallback_api_error": 26,
        "api_fallback_empty_selection": 18,
        "answered": 12,
    }
    api_error = summary["fail_open_reasons"][0]
    assert api_error["status"] == "api_fallback_api_error"
    assert api_error["details"][0] == {
        "detail": 'status=404 body={"code":"not_found","detail":"Not Found"}',
        "count": 15,
    }
    assert summary["timeline"]["undated"] == 26  # releases before v0.5.3 write no timestamp


def test_fixture_kept_versus_deferred() -> None:
    requests = outcomes(read_input(LOG).events)["requests"]
    assert (requests["count"], requests["kept"] + requests["deferred"]) == (36, requests["tools"])
    assert requests["by_status"] == {"filtered": 24, "passthrough": 12}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {
                "tool_name": "gateway_search_tools",
                "original_content": "uv index tokyo",
                "compressed_content": "selected_names was empty",
                "original_bytes": 100,
                "compressed_bytes": 100,
                "status": "api_fallback_empty_selection",
            },
            Search(
                line=1,
                query="uv index tokyo",
                status="api_fallback_empty_selection",
                detail="selected_names was empty",
                deferred=100,
                returned=100,
            ),
        ),
        (
            {
                "event_type": "tool_search_result",
                "query": "light travel",
                "deferred_count": 50,
                "results_count": 2,
                "selected_tools": ["light_travel_time", "get_current_time"],
            },
            Search(
                line=1,
                query="light travel",
                status="answered",
                deferred=50,
                returned=2,
                selected=("light_travel_time", "get_current_time"),
            ),
        ),
        (
            {"event_type": "tool_search_result", "query": "q", "deferred_count": 50},
            Search(line=1, query="q", status="answered", deferred=50, returned=0),
        ),
        (
            {
                "all_tools": ["a", "b", "c"],
                "selected_tools": ["gateway_search_tools", "b"],
                "status": "filtered",
            },
            Filtering(line=1, kind="request", status="filtered", tools=3, kept=1, deferred=2),
        ),
        (
            {"event_type": "lazy_loading", "status": "filtered", "tool_count": 9, "stub_count": 7},
            Filtering(line=1, kind="lazy_loading", status="filtered", tools=9, kept=2, deferred=7),
        ),
        (
            {"event_type": "tool_description_compress", "status": "compressed"},
            "proxy event_type 'tool_description_compress', not a search or a tool filtering",
        ),
        ({"pattern": "q", "tools": ["a"]}, None),
    ],
    ids=[
        "v0.4_fallback",
        "v0.5.3_answered",
        "zero_results_omitted",
        "request",
        "lazy",
        "other",
        "capture",
    ],
)
def test_parse_event_kinds(record: dict[str, Any], expected: object) -> None:
    assert parse_event(1, record) == expected


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("   \n", "blank line"),
        ("{not json\n", "not JSON"),
        ("[1, 2]\n", "JSON but not an object"),
        ('{"status": "ok"}\n', "neither a decision (pattern + tools) nor a proxy event"),
    ],
    ids=["blank", "not_json", "array", "unknown_object"],
)
def test_unusable_lines_are_counted_by_reason(line: str, reason: str) -> None:
    assert classify(1, line) == reason


def test_unusable_lines_are_counted_not_dropped(tmp_path: Path) -> None:
    log = tmp_path / "tool_discovery.jsonl"
    log.write_text(LOG.read_text() + "garbage\n\n")
    found = read_input(log)
    assert (found.lines, found.unusable) == (106, {"not JSON": 1, "blank line": 1})
