"""The guard in front of every route that routes to search or metrics, in process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from tool_selector.http.app import create_app
from tool_selector.settings import Settings

KEY = "route-key-0123456789"
BODY = {"pattern": "slack", "tools": [{"name": "slack_send"}]}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    settings = Settings(encoder="none", api_keys=KEY, auth_metrics=True)
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize(
    "path",
    [
        "/v1/tool-discovery/search",
        "/v1/tool-discovery/search/",
        "/v1/tool-discovery//search",
        "/v1/tool-discovery/%73earch",
        "/v1/tool-discovery/search?x=1",
    ],
    ids=["plain", "trailing-slash", "double-slash-mid", "percent", "query"],
)
def test_every_spelling_of_the_search_path_needs_a_token(
    client: TestClient[Any], path: str
) -> None:
    without = client.post(path, json=BODY)
    with_key = client.post(path, json=BODY, headers={"X-API-Key": KEY})
    assert (without.status_code, with_key.status_code) == (401, 200)


@pytest.mark.parametrize("path", ["/metrics", "/metrics/"], ids=["plain", "trailing-slash"])
def test_auth_metrics_puts_metrics_behind_the_token(client: TestClient[Any], path: str) -> None:
    without = client.get(path)
    with_key = client.get(path, headers={"Authorization": f"Bearer {KEY}"})
    assert (without.status_code, with_key.status_code) == (401, 200)


@pytest.mark.parametrize("path", ["/healthz", "/health"], ids=["healthz", "health"])
def test_liveness_stays_open_with_auth_metrics(client: TestClient[Any], path: str) -> None:
    assert client.get(path).status_code == 200
