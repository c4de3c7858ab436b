"""The service's /metrics after real requests: every family present, errors timed too."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support import ServiceProcess

SEARCH = "/v1/tool-discovery/search"
FAMILIES = (
    "tool_selector_request_duration_seconds",
    "tool_selector_stage_duration_seconds",
    "tool_selector_errors",
    "tool_selector_tools_per_request",
    "tool_selector_selected_tools",
    "tool_selector_no_match",
    "tool_selector_ranking_path",
    "tool_selector_embedded_answers",
    "tool_selector_embedding_cache",
    "tool_selector_in_flight_requests",
    "tool_selector_build_info",
)


@pytest.fixture(scope="module")
def families(lexical_service: ServiceProcess) -> dict[str, object]:
    url = lexical_service.url
    tools = [{"name": "read_file", "description": "Read a file"}]
    httpx.post(url + SEARCH, json={"pattern": "read a file", "tools": tools})
    httpx.post(url + SEARCH, json={"pattern": "qqqzzz", "tools": tools})
    httpx.post(url + SEARCH, content=b"{not json", headers={"content-type": "application/json"})
    text = httpx.get(url + "/metrics").text
    return {f.name: f for f in text_string_to_metric_families(text)}


@pytest.mark.parametrize("name", FAMILIES)
def test_family_is_exported(families: dict[str, object], name: str) -> None:
    assert name in families


def _value(families: dict[str, object], family: str, sample: str, **labels: str) -> float:
    return next(
        s.value
        for s in families[family].samples  # type: ignore[attr-defined]
        if s.name == sample and s.labels == labels
    )


@pytest.mark.parametrize(
    ("family", "sample", "labels"),
    [
        (
            "tool_selector_request_duration_seconds",
            "tool_selector_request_duration_seconds_count",
            {"outcome": "match", "contract": "search"},
        ),
        (
            "tool_selector_request_duration_seconds",
            "tool_selector_request_duration_seconds_count",
            {"outcome": "no_match", "contract": "search"},
        ),
        (
            "tool_selector_request_duration_seconds",
            "tool_selector_request_duration_seconds_count",
            {"outcome": "error", "contract": "search"},
        ),
        (
            "tool_selector_errors",
            "tool_selector_errors_total",
            {"code": "malformed_json", "route": "search"},
        ),
        ("tool_selector_ranking_path", "tool_selector_ranking_path_total", {"path": "lexical"}),
        (
            "tool_selector_embedded_answers",
            "tool_selector_embedded_answers_total",
            {"embedded": "none"},
        ),
        (
            "tool_selector_stage_duration_seconds",
            "tool_selector_stage_duration_seconds_count",
            {"stage": "decode"},
        ),
    ],
    ids=["match", "no_match", "error_latency", "errors_by_code", "path", "embedded", "stage"],
)
def test_requests_are_counted(
    families: dict[str, object], family: str, sample: str, labels: dict[str, str]
) -> None:
    assert _value(families, family, sample, **labels) >= 1


def test_repeated_tools_hit_the_memory_cache(service: ServiceProcess) -> None:
    """A tool seen in one catalog is read from the embedding cache in another (the same
    catalog again is answered from its held matrix and asks no cache)."""
    tool = {"name": "cache_probe_tool", "description": "A tool only this test sends"}
    other = {"name": "cache_probe_other", "description": "A second tool only this test sends"}
    for tools in ([tool], [tool, other]):
        r = httpx.post(service.url + SEARCH, json={"pattern": "probe", "tools": tools})
        assert r.status_code == 200
    text = httpx.get(service.url + "/metrics").text
    assert 'tool_selector_embedding_cache_total{result="hit",tier="memory"}' in text
