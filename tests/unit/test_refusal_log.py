"""Every search or feedback request not answered 2xx has one log line joining its id: the
error edge's answers and the guard's refusals, in process; never the body's text."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from litestar.testing import TestClient

from tool_selector.http.app import create_app
from tool_selector.http.auth import KeyRing
from tool_selector.http.guard import Guard, GuardState
from tool_selector.logs import ACCESS_LOGGER
from tool_selector.settings import Settings
from tool_selector_client.wire import COMPRESS_PATH, FEEDBACK_PATH, SEARCH_ID_HEADER, SEARCH_PATH

KEY = "refusal-key-0123456789"
SECRET = "secret words of the user"
AUTH = {"X-API-Key": KEY, "content-type": "application/json"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    settings = Settings(encoder="none", api_keys=KEY, max_body_bytes=2000, max_top_k=50)
    with TestClient(create_app(settings)) as client:
        yield client


def lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == ACCESS_LOGGER]


CASES: list[tuple[str, dict[str, Any], tuple[int, str, str | None]]] = [
    (
        SEARCH_PATH,
        {"content": b'{"pattern": "' + SECRET.encode()},
        (400, "malformed_json", "search"),
    ),
    (
        COMPRESS_PATH,
        {"json": {"query": SECRET, "max_tools": 99, "tools": []}},
        (400, "top_k_out_of_range", "compress"),
    ),
    (SEARCH_PATH, {"json": {"pattern": SECRET}, "headers": {}}, (401, "unauthorized", "search")),
    (
        SEARCH_PATH,
        {"json": {"pattern": SECRET, "tools": [{"name": "x" * 3000}]}},
        (413, "payload_too_large", "search"),
    ),
    (
        SEARCH_PATH,
        {"content": SECRET.encode(), "headers": {"X-API-Key": KEY}},
        (415, "unsupported_media_type", "search"),
    ),
    (FEEDBACK_PATH, {"content": SECRET.encode()}, (400, "malformed_json", None)),
]


@pytest.mark.parametrize(
    ("path", "kw", "expected"),
    CASES,
    ids=["malformed", "compress-invalid", "unauthorized", "too-large", "media-type", "feedback"],
)
def test_a_refused_request_has_a_log_line_with_its_id(
    client: TestClient[Any],
    caplog: pytest.LogCaptureFixture,
    path: str,
    kw: dict[str, Any],
    expected: tuple[int, str, str | None],
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    r = client.post(path, **{"headers": AUTH, **kw})
    (line,) = lines(caplog)
    assert (r.status_code, r.json()["code"]) == expected[:2]
    assert line.pop("ms") >= 0
    assert line == {
        "event": "error",
        "search_id": r.headers[SEARCH_ID_HEADER],
        "route": path.rstrip("/"),  # the route's: the compress path's slash is optional
        "contract": expected[2],
        "status": expected[0],
        "code": expected[1],
    }
    assert SECRET not in caplog.text


def test_an_answered_search_has_its_own_line_alone(
    client: TestClient[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    body = {"pattern": "slack", "tools": [{"name": "slack_send"}]}
    r = client.post(SEARCH_PATH, json=body, headers=AUTH)
    assert [line["event"] for line in lines(caplog)] == ["search"]
    assert lines(caplog)[0]["search_id"] == r.headers[SEARCH_ID_HEADER]


async def hang(scope: Any, receive: Any, send: Any) -> None:
    await anyio.sleep_forever()


@pytest.mark.parametrize(
    ("busy", "code"), [(False, "deadline_exceeded"), (True, "overloaded")], ids=["deadline", "busy"]
)
def test_a_503_of_the_guard_has_a_log_line_with_its_id(
    caplog: pytest.LogCaptureFixture, busy: bool, code: str
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    settings = Settings(
        encoder="none", request_deadline_seconds=0.01, max_in_flight=1, admission_wait_ms=0
    )
    slots = GuardState()
    slots.in_flight = 1 if busy else 0
    guard = Guard(hang, create_app(settings).state.runtime, KeyRing(), slots)
    scope = {"type": "http", "method": "POST", "path": COMPRESS_PATH, "headers": []}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(guard, scope, receive, send)  # type: ignore[arg-type]
    (line,) = lines(caplog)
    assert (sent[0]["status"], line["status"], line["code"]) == (503, 503, code)
    assert (line["contract"], line["search_id"]) == (
        "compress",
        scope["state"]["tool_selector.search_id"],
    )
