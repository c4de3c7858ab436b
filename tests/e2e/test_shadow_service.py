"""Service-side shadow compare: TOOL_SELECTOR_SHADOW=relevance exports agreement metrics."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support import ServiceProcess, start_service, wait_until

SEARCH = "/v1/tool-discovery/search"
TOOLS = [
    {"name": "slack_send_message", "description": "Send a message to a Slack channel"},
    {"name": "read_file", "description": "Read a file from disk"},
    {"name": "create_issue", "description": "Open an issue in a GitHub repository"},
]


@pytest.fixture(scope="module")
def shadow_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    proc = start_service(
        tmp_path_factory.mktemp("shadow"),
        {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_SHADOW": "relevance"},
        wait_ready=False,
    )
    yield proc
    proc.stop()


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(url + "/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_shadow_metrics_follow_the_answers(shadow_service: ServiceProcess) -> None:
    patterns = ["send a slack message", "qqqzzz xxyyzz", "read_file"]
    answers = [
        httpx.post(shadow_service.url + SEARCH, json={"pattern": p, "tools": TOOLS}).json()
        for p in patterns
    ]
    assert answers[0]["selected_names"][0] == "slack_send_message"

    def compared() -> bool:
        key = ("tool_selector_shadow_comparisons_total", ())
        return _samples(shadow_service.url).get(key) == len(patterns)

    wait_until(compared, 10, "shadow comparisons")
    samples = _samples(shadow_service.url)
    assert samples[("tool_selector_shadow_top1_total", (("result", "agree"),))] == 2
    assert samples[("tool_selector_shadow_abstain_total", (("side", "both"),))] == 1
    assert samples[("tool_selector_shadow_jaccard_ratio_count", ())] == 2
    assert samples[("tool_selector_shadow_errors_total", ())] == 0


def test_a_resent_catalog_is_compared_from_its_cached_catalog(
    shadow_service: ServiceProcess,
) -> None:
    """Large enough to be recognised by its bytes: the second request's tools are not decoded."""
    tools = [
        {"name": f"tool_{i}", "description": f"Does task number {i} for the user, carefully"}
        for i in range(80)
    ]
    key = ("tool_selector_shadow_comparisons_total", ())
    before = _samples(shadow_service.url).get(key, 0.0)
    for _ in range(2):
        r = httpx.post(shadow_service.url + SEARCH, json={"pattern": "task 7", "tools": tools})
        assert r.json()["selected_names"][0] == "tool_7"
    wait_until(lambda: _samples(shadow_service.url).get(key) == before + 2, 10, "comparisons")
    samples = _samples(shadow_service.url)
    assert samples[("tool_selector_catalog_cache_total", (("result", "hit"),))] >= 1
    assert samples[("tool_selector_shadow_errors_total", ())] == 0


def test_shadow_is_off_by_default(lexical_service: ServiceProcess) -> None:
    httpx.post(lexical_service.url + SEARCH, json={"pattern": "read", "tools": TOOLS})
    assert (
        "tool_selector_shadow_comparisons_total"
        not in httpx.get(lexical_service.url + "/metrics").text
    )
