"""A real user message is never bad input, however long: its request is found (or it is
cut), ranked and answered."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.support import ROOT, SAMPLE_TOOLS, ServiceProcess, wait_until, warm_catalog
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_ID_HEADER

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


def _cut(service: ServiceProcess, kind: str) -> float:
    """``tool_selector_patterns_cut_total{kind=...}`` as the service reports it now."""
    for line in httpx.get(service.url + "/metrics").text.splitlines():
        if line.startswith(f'tool_selector_patterns_cut_total{{kind="{kind}"}}'):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no patterns_cut sample for {kind}")


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (MESSAGE, "request_found"),
        (LOG * 3 + "\nThe nightly build of the orders service, again\n" + LOG, "prose_fallback"),
        ((LOG * 3).replace("step", "2026-11-27 10:00:00 INFO step"), "positional_cut"),
    ],
    ids=["request", "prose", "cut"],
)
def test_each_reading_of_a_long_message_is_counted_and_logged(
    service: ServiceProcess, message: str, kind: str
) -> None:
    before = {k: _cut(service, k) for k in ("request_found", "prose_fallback", "positional_cut")}
    body = {"pattern": message, "tools": TOOLS}
    assert httpx.post(service.url + "/v1/tool-discovery/search", json=body).status_code == 200
    after = {k: _cut(service, k) for k in before}
    assert {k: after[k] - before[k] for k in before} == {k: float(k == kind) for k in before}
    logged = service.searches()
    assert logged[-1]["pattern_kind"] == kind
    assert logged[-1]["pattern_chars"] == len(message)


#: Context Gateway v0.4.3's real pre-filter body: 150 BFCL tools, ``max_tools: 25``.
PREFILTER = ROOT / "tests" / "fixtures" / "context-gateway" / "B-v0.4.3-prefilter.json"
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


#: Requests v0.4.3's pre-filter sends that a finder can lose, with their tool in its BFCL catalog.
ISSUE_REQUESTS = [
    (
        "Calculate the return on equity for a company with a net income of $2,000,000, "
        "shareholder's equity of $10,000,000 and dividends of $200,000.",
        "calculate_return_on_equity",
    ),
    (
        "Unrelated to that log, my actual question: Translate 'Where is the train station?' "
        "into Spanish.",
        "translate",
    ),
]
#: nginx access lines (the client's IP first) and a CSV export: 20 KB of paste.
NGINX_CSV = "".join(
    f'198.51.100.{i % 250} - - [27/Nov/2026:10:{i % 60:02d}:07 +0000] "GET /api/v1/items/{i} '
    f'HTTP/1.1" 200 {900 + i} "-" "Mozilla/5.0"\n2026-11-{i % 28 + 1:02d},EMEA,Pro,{i},'
    f"{i * 13}.00,renewal\n"
    for i in range(200)
)


@pytest.mark.parametrize("placement", ["start", "middle", "end"])
@pytest.mark.parametrize(("ask", "gold"), ISSUE_REQUESTS, ids=["money", "second-opening"])
def test_the_issues_lost_requests_keep_their_tool_in_the_25(
    service: ServiceProcess, placement: str, ask: str, gold: str
) -> None:
    body = json.loads(PREFILTER.read_text())
    warm_prefilter(service.url, body)
    half = NGINX_CSV[:10_000].rsplit("\n", 1)[0]
    body["query"] = {
        "start": f"{ask}\n\n{NGINX_CSV}",
        "middle": f"{half}\n\n{ask}\n\n{half}",
        "end": f"{NGINX_CSV}\n\n{ask}",
    }[placement]
    assert len(body["query"]) > 20_000
    r = httpx.post(service.url + "/api/compress/tool-discovery/", json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert gold in r.json()["data"]["relevant_tools"]


def _logged(service: ServiceProcess, sid: str) -> dict[str, Any]:
    """The search log line of search ``sid`` (waits for it to be written)."""

    def find() -> dict[str, Any]:
        return next((r for r in service.searches() if r.get("search_id") == sid), {})

    return wait_until(find, 10, f"the log line of search {sid}")


@pytest.mark.parametrize(
    "tag",
    ["[a1b2c3] ", "[JIRA-123] ", "(urgent) ", "@bot ", "#ops "],
    ids=["id", "ticket", "marker", "mention", "channel"],
)
def test_a_request_behind_a_tag_opening_a_long_paste_is_ranked_as_the_request(
    service: ServiceProcess, tag: str
) -> None:
    body = json.loads(PREFILTER.read_text())
    warm_prefilter(service.url, body)
    alone = httpx.post(service.url + COMPRESS_PATH, json={**body, "query": REQUEST}, timeout=30)
    body["query"] = f"{tag}{REQUEST}\n\n{NGINX_CSV}"
    assert len(body["query"]) > 20_000
    r = httpx.post(service.url + COMPRESS_PATH, json=body, timeout=30)
    assert r.status_code == alone.status_code == 200, r.text
    assert r.json()["data"]["relevant_tools"].index("capacitance_calculator_calculate") < 5
    tagged = _logged(service, r.headers[SEARCH_ID_HEADER])
    assert tagged["pattern_kind"] == "request_found"
    # the log redacts patterns to a keyed hash that equal patterns share: the request alone's
    assert tagged["pattern"] == _logged(service, alone.headers[SEARCH_ID_HEADER])["pattern"]
