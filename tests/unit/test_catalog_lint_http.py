"""``POST /v1/catalog/lint``: guarded like the searches, by key or by body, JSON or text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from tool_selector.http import handlers
from tool_selector.http.app import create_app
from tool_selector.offline.cli import main
from tool_selector.offline.lint_cli import AUTO_HYBRID_TOOLS, chosen_ranking
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import LINT_PATH

KEY = "lint-key-0123456789"
AUTH = {"X-API-Key": KEY}
TOOLS = [
    {"name": "a__search", "description": "Search GitHub issues."},
    {"name": "b__search"},
    {"name": "get_weather", "description": "Weather forecast for a city."},
]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    settings = Settings(encoder="none", api_keys=KEY, max_tools=10)
    with TestClient(create_app(settings)) as client:
        yield client


def kinds(body: dict[str, Any]) -> set[str]:
    return {f["kind"] for f in body["findings"]}


@pytest.mark.parametrize("path", [LINT_PATH, LINT_PATH + "/"], ids=["plain", "trailing-slash"])
def test_the_report_needs_a_token(client: TestClient[Any], path: str) -> None:
    assert client.post(path, json={"tools": TOOLS}).status_code == 401


def test_a_catalog_sent_by_body_is_reported(client: TestClient[Any]) -> None:
    answer = client.post(LINT_PATH, json={"tools": TOOLS}, headers=AUTH)
    assert answer.status_code == 200
    assert {"collision", "no_description"} <= kinds(answer.json())


def test_a_catalog_the_service_has_seen_is_reported_by_its_key(client: TestClient[Any]) -> None:
    search = {"pattern": "weather", "tools": TOOLS}
    client.post("/v1/tool-discovery/search", json=search, headers=AUTH)
    key = client.post(LINT_PATH, json={"tools": TOOLS}, headers=AUTH).json()["catalog"]
    by_key = client.post(LINT_PATH, json={"catalog": key}, headers=AUTH)
    assert by_key.json()["catalog"] == key
    assert kinds(by_key.json()) >= {"collision"}


def test_the_text_report(client: TestClient[Any]) -> None:
    answer = client.post(f"{LINT_PATH}?format=text", json={"tools": TOOLS}, headers=AUTH)
    assert answer.headers["content-type"].startswith("text/plain")
    assert "[collision] a__search, b__search" in answer.text


@pytest.mark.parametrize(
    ("query", "body", "status", "code"),
    [
        ("", {"catalog": "nope"}, 404, "unknown_catalog"),
        ("", {}, 400, "invalid_request"),
        ("", {"catalog": "k", "tools": TOOLS}, 400, "invalid_request"),
        ("?format=xml", {"tools": TOOLS}, 400, "invalid_format"),
        ("", {"tools": [{"name": f"t{i}"} for i in range(11)]}, 400, "too_many_tools"),
        ("", {"tools": [{"name": "t", "search_text": 3}]}, 400, "invalid_request"),
    ],
    ids=["unknown-key", "neither", "both", "format", "too-many", "search-text-type"],
)
def test_bad_requests_get_the_error_shape(
    client: TestClient[Any], query: str, body: dict[str, Any], status: int, code: str
) -> None:
    answer = client.post(LINT_PATH + query, json=body, headers=AUTH)
    assert (answer.status_code, answer.json()["code"]) == (status, code)


def test_search_text_over_the_description_limit_is_refused_naming_the_field() -> None:
    settings = Settings(encoder="none", max_description_chars=10)
    with TestClient(create_app(settings)) as client:
        body = {"pattern": "x", "tools": [{"name": "t", "search_text": "y" * 11}]}
        answer = client.post("/v1/tool-discovery/search", json=body)
    assert answer.status_code == 400
    assert "tools[0].search_text" in answer.json()["detail"]


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_the_cli_writes_each_format(tmp_path: Path, fmt: str) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps(TOOLS))
    out = tmp_path / f"report.{fmt}"
    argv = ["lint", "--catalog", str(catalog), "--ranking", "lexical", "--format", fmt]
    assert main([*argv, "-o", str(out)]) == 0
    assert "b__search" in out.read_text()


@pytest.mark.parametrize(
    ("asked", "tools", "used"),
    [
        ("auto", 300, "hybrid"),
        ("auto", AUTO_HYBRID_TOOLS + 1, "static"),
        ("hybrid", 4000, "hybrid"),
        ("lexical", 10, "lexical"),
    ],
    ids=["auto-small", "auto-large", "asked-hybrid", "asked-lexical"],
)
def test_auto_ranking_lints_large_catalogs_with_the_static_arm(
    asked: str, tools: int, used: str
) -> None:
    assert chosen_ranking(asked, tools) == used


def test_reports_in_progress_never_hold_the_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reports of a large catalog took both search worker threads (and kept them past
    their deadline, the work abandoned but running): every search meanwhile was a 503. Now
    one report runs at a time on a thread of its own; the second waits, then is refused."""
    release = threading.Event()
    running = threading.Event()

    def slow_report(*args: Any) -> Any:
        running.set()
        release.wait(30)
        return {"findings": []}

    monkeypatch.setattr(handlers, "lint_body", slow_report)
    settings = Settings(
        encoder="none", max_tools=10, request_deadline_seconds=5.0, admission_wait_ms=50
    )
    with TestClient(create_app(settings)) as client, ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, LINT_PATH, json={"tools": TOOLS})
        try:
            assert running.wait(30)
            second = client.post(LINT_PATH, json={"tools": TOOLS})
            assert (second.status_code, second.json()["code"]) == (503, "overloaded")
            metrics = client.get("/metrics").text  # a search's wait only, not a report's
            assert "tool_selector_admission_wait_seconds_count" not in metrics
            searches = [
                client.post(
                    "/v1/tool-discovery/search", json={"pattern": "weather", "tools": TOOLS}
                )
                for _ in range(6)
            ]
            assert [s.status_code for s in searches] == [200] * 6
            assert all(s.json()["selected_names"] == ["get_weather"] for s in searches)
        finally:
            release.set()
        assert first.result(30).status_code == 200


def test_a_bad_scope_header_is_refused_whether_learning_is_on(client: TestClient[Any]) -> None:
    """As a search refuses it (``handlers._who``): the report read the header only with
    learning on, and answered 200 to one a search would refuse."""
    headers = {**AUTH, "X-Tool-Selector-Scope": "two words"}
    answer = client.post(LINT_PATH, json={"tools": TOOLS}, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_scope")
