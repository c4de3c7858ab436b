"""A real user message is never bad input, however long: it is cut, ranked and answered."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import SAMPLE_TOOLS, ServiceProcess, warm_catalog

TOOLS: list[dict[str, Any]] = list(SAMPLE_TOOLS)
LOG = "".join(f"step {i:05d}: compiled unit {i % 97} in 0.{i % 9}s\n" for i in range(700))
#: A pasted build log between the request's opening and its closing question.
MESSAGE = (
    "Our nightly build broke again. Here is the whole output:\n"
    + (LOG * 2)[:19_800]
    + "\nPlease post a short summary of this failure to our Slack channel."
)


@pytest.fixture(scope="module", autouse=True)
def warm(service: ServiceProcess) -> None:
    warm_catalog(service.url, TOOLS)


@pytest.mark.parametrize(
    ("path", "body", "read"),
    [
        (
            "/v1/tool-discovery/search",
            {"pattern": MESSAGE, "tools": TOOLS, "top_k": 3},
            lambda j: j["selected_names"],
        ),
        (
            "/api/compress/tool-discovery/",
            {"query": MESSAGE, "tools": TOOLS, "max_tools": 3, "source": "gateway:anthropic"},
            lambda j: j["data"]["relevant_tools"],
        ),
    ],
    ids=["pattern", "query"],
)
def test_a_20000_character_message_gets_a_sensible_pick(
    service: ServiceProcess, path: str, body: dict[str, Any], read: Any
) -> None:
    assert len(MESSAGE) > 19_900
    r = httpx.post(service.url + path, json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert read(r.json())[0] == "mcp__slack__send_message"


def test_cut_patterns_are_counted(service: ServiceProcess) -> None:
    body = {"pattern": MESSAGE, "tools": TOOLS}
    assert httpx.post(service.url + "/v1/tool-discovery/search", json=body).status_code == 200
    metrics = httpx.get(service.url + "/metrics").text
    assert "tool_selector_patterns_cut_total 0.0" not in metrics
    assert "tool_selector_patterns_cut_total" in metrics
