"""Every Context Gateway release's real request, on the path and with the header it uses.

The bodies are ``tests/fixtures/context-gateway/``: what the proxy itself put on
the wire (``PROXY.md`` there). Each answer must be one that release parses and accepts: its shape,
names it knows (a subset of the request's), at most its limit, and never empty for a real
need (every release reads an empty answer as a failure and falls back).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import ROOT, ServiceProcess, start_service

FIXTURES = ROOT / "tests" / "fixtures" / "context-gateway"
KEY = "cg-release-key"
SEARCH = "/v1/tool-discovery/search"
COMPRESS = "/api/compress/tool-discovery/"

#: (fixture, path the release posts to, auth header it sends, field it reads, limit field)
RELEASES = [
    ("A-v0.4.1-search.json", SEARCH, "Authorization", "selected_names", "top_k"),
    ("B-v0.4.3-prefilter.json", COMPRESS, "X-API-Key", "relevant_tools", "max_tools"),
    ("C-v0.5.2-search.json", COMPRESS, "Authorization", "selected_names", "top_k"),
    ("D-v0.5.3-search.json", COMPRESS, "X-API-Key", "relevant_tools", "max_tools"),
]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    proc = start_service(tmp_path_factory.mktemp("keyed"), {"TOOL_SELECTOR_API_KEYS": KEY})
    yield proc
    proc.stop()


def auth(header: str, key: str = KEY) -> dict[str, str]:
    value = f"Bearer {key}" if header == "Authorization" else key
    return {header: value, "Content-Type": "application/json", "User-Agent": "Go-http-client/1.1"}


def post_until_hybrid(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """The proxy resends its catalog every turn; the answer it gets once it is embedded."""
    deadline = time.monotonic() + 120
    while True:
        r = httpx.post(url, content=body, headers=headers, timeout=30)
        if r.status_code != 200 or r.headers["x-tool-selector-ranking"] == "hybrid":
            return r
        if time.monotonic() > deadline:
            raise TimeoutError("the fixture catalog was never embedded")
        time.sleep(0.2)


def picked(response: httpx.Response, field: str) -> list[str]:
    """The names the release reads, after checking the envelope it checks."""
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = response.json()
    if field == "relevant_tools":
        assert payload["success"] is True
        names: list[str] = payload["data"]["relevant_tools"]
    else:
        names = payload["selected_names"]
    return names


@pytest.mark.parametrize(
    ("fixture", "path", "header", "field", "limit"), RELEASES, ids=[r[0][0] for r in RELEASES]
)
def test_each_release_gets_an_answer_it_accepts(
    keyed: ServiceProcess, fixture: str, path: str, header: str, field: str, limit: str
) -> None:
    body = (FIXTURES / fixture).read_bytes()
    request = json.loads(body)
    names = picked(post_until_hybrid(keyed.url + path, body, auth(header)), field)
    assert names, "an empty answer makes every release fall back"
    assert len(names) == len(set(names)) <= request[limit]
    assert set(names) <= {t["name"] for t in request["tools"]}
    assert names[0] == "capacitance_calculator_calculate"


def test_the_duplicated_tool_lists_are_merged(keyed: ServiceProcess) -> None:
    body = (FIXTURES / "A-v0.4.1-search.json").read_bytes()
    r = httpx.post(keyed.url + SEARCH, content=body, headers=auth("Authorization"), timeout=30)
    assert r.status_code == 200
    metrics = httpx.get(keyed.url + "/metrics").text
    dropped = next(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith("tool_selector_duplicate_tools_total ")
    )
    assert dropped >= 150


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"X-API-Key": "wrong"}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": "Basic " + KEY}, 401),
        ({"X-API-Key": KEY}, 200),
        ({"Authorization": "Bearer " + KEY}, 200),
    ],
    ids=["none", "wrong-api-key", "wrong-bearer", "basic", "api-key", "bearer"],
)
@pytest.mark.parametrize("path", [COMPRESS, COMPRESS.rstrip("/")], ids=["slash", "no-slash"])
def test_auth_on_the_compress_path(
    keyed: ServiceProcess, path: str, headers: dict[str, str], status: int
) -> None:
    body = {"query": "capacitance", "tools": [{"name": "read_file"}], "max_tools": 5}
    r = httpx.post(keyed.url + path, json=body, headers=headers, timeout=10)
    assert r.status_code == status
    if status == 401:
        assert r.json() == {
            "success": False,
            "error": "unauthorized",
            "message": r.json()["detail"],
            "code": "unauthorized",
            "detail": r.json()["detail"],
        }
        assert r.headers["www-authenticate"] == "Bearer"
