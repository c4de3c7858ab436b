"""A real user message is never bad input, however long: its request is found (or it is
cut), ranked and answered."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.support import ROOT, SAMPLE_TOOLS, ServiceProcess, warm_catalog

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


#: Context Gateway v0.4.3's real pre-filter body: 150 BFCL tools, ``max_tools: 25``.
PREFILTER = ROOT.parent / "shared" / "fixtures" / "context-gateway" / "requests"
PREFILTER = PREFILTER / "B-v0.4.3-prefilter.json"
REQUEST = (
    "Calculate the capacitance of a parallel plate capacitor where the area of the plate is "
    "10 square meters, the distance between plates is 0.01 meters and the dielectric "
    "constant K is 1.0."
)
TRACE = "".join(
    f"2026-03-14 09:{i // 60 % 60:02d}:{i % 60:02d},120 ERROR [app.worker] job {i} failed, "
    "please check the worker\nTraceback (most recent call last):\n"
    f'  File "/srv/app/worker.py", line {i % 300}, in run\n'
    "    result = self.handler(payload)\nKeyError: 'customer_id'\n"
    for i in range(200)
)


@pytest.mark.skipif(not PREFILTER.is_file(), reason=f"proxy fixture not found at {PREFILTER}")
def test_a_request_in_the_middle_of_20_kb_of_log_keeps_its_tool(service: ServiceProcess) -> None:
    body = json.loads(PREFILTER.read_text())
    warm_prefilter(service.url, body)
    half = TRACE[:10_000].rsplit("\n", 1)[0]
    body["query"] = f"{half}\n\nWhat I need now: {REQUEST}\n\n{half}"
    assert len(body["query"]) > 20_000
    r = httpx.post(service.url + "/api/compress/tool-discovery/", json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert "capacitance_calculator_calculate" in r.json()["data"]["relevant_tools"]


def warm_prefilter(url: str, body: dict[str, Any], timeout: float = 120) -> None:
    """Post the pre-filter's catalog until it is answered on the hybrid path."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.post(url + "/api/compress/tool-discovery/", json=body, timeout=60)
        if r.status_code == 200 and r.headers["x-tool-selector-ranking"] == "hybrid":
            return
        time.sleep(0.2)
    raise TimeoutError("the pre-filter's catalog never answered on the hybrid path")
