"""``tool_selector_errors_total`` counts each refusal under its route, in process: the search
paths under their contract (as ``tool_selector_request_duration_seconds`` counts every request
on them, so a share of searches divides counts of the same paths), the rest apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient
from prometheus_client import CollectorRegistry

from tool_selector.http.app import create_app
from tool_selector.http.edge import route_of
from tool_selector.metrics import ROUTES
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import COMPRESS_PATH, FEEDBACK_PATH, SEARCH_PATH

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[TestClient[Any], CollectorRegistry]]:
    registry = CollectorRegistry()
    with TestClient(create_app(Settings(encoder="none"), registry=registry)) as client:
        yield client, registry


@pytest.mark.parametrize(
    ("path", "route"),
    [
        (SEARCH_PATH, "search"),
        (COMPRESS_PATH, "compress"),
        (COMPRESS_PATH.rstrip("/"), "compress"),
        (FEEDBACK_PATH, "feedback"),
        (LINT_PATH, "lint"),
        ("/metrics", "other"),
        ("/no/such/path", "other"),
    ],
    ids=["search", "compress", "compress-no-slash", "feedback", "lint", "metrics", "unknown"],
)
def test_a_path_s_route_is_one_of_the_metric_s(path: str, route: str) -> None:
    assert route_of(path) == route
    assert route in ROUTES


@pytest.mark.parametrize(
    ("path", "route"),
    [(SEARCH_PATH, "search"), (COMPRESS_PATH, "compress"), (FEEDBACK_PATH, "feedback")],
    ids=["search", "compress", "feedback"],
)
def test_a_refusal_is_counted_under_its_route(
    app: tuple[TestClient[Any], CollectorRegistry], path: str, route: str
) -> None:
    client, registry = app
    labels = {"code": "malformed_json", "route": route}
    before = registry.get_sample_value("tool_selector_errors_total", labels) or 0
    assert client.post(path, content=b"{", headers=JSON).status_code == 400
    assert registry.get_sample_value("tool_selector_errors_total", labels) == before + 1


def test_a_refusal_before_the_body_is_counted_under_its_route(
    app: tuple[TestClient[Any], CollectorRegistry],
) -> None:
    client, registry = app
    labels = {"code": "payload_too_large", "route": "feedback"}
    body = b"x" * (Settings().max_body_bytes + 1)
    assert client.post(FEEDBACK_PATH, content=body, headers=JSON).status_code == 413
    assert registry.get_sample_value("tool_selector_errors_total", labels) == 1
