"""Every encoder reads the relevance bar, through the real service with its shipped models:
an English need MiniLM reads weakly but bge-small reads well is answered, its tool first
(issue 37, part 5: "will I need an umbrella in Porto tomorrow" was answered empty over the
agent catalog, MiniLM's evidence 0.13-0.14 under its floor 0.15); a pattern that has nothing
in common with any tool is still "no useful match"."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from loadtests.budget import agent_catalog

from tests.support import ServiceProcess, warm_catalog

TOOLS: list[dict[str, Any]] = agent_catalog()


@pytest.fixture(scope="module", autouse=True)
def warm(service: ServiceProcess) -> None:
    warm_catalog(service.url, TOOLS)


def search(service: ServiceProcess, pattern: str) -> httpx.Response:
    body = {"pattern": pattern, "tools": TOOLS, "top_k": 5, "explain": True}
    r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["x-tool-selector-embedded"] == "complete"
    return r


def test_a_need_the_first_model_reads_weakly_is_answered(service: ServiceProcess) -> None:
    found = search(service, "will I need an umbrella in Porto tomorrow").json()
    assert found["selected_names"][0] == "get_weather"


def test_nothing_in_common_is_still_no_useful_match(service: ServiceProcess) -> None:
    found = search(service, "knit a scarf for my grandmother").json()
    assert found["selected_names"] == []
