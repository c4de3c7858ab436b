"""Hostile and broken clients against the real server: broken bodies, refusals that close,
slow senders, two credential headers, the body-byte budget, and the client's pools."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.rawhttp import (
    BODY,
    SEARCH,
    closed_within,
    connect,
    head,
    read_response,
)
from tests.support import ServiceProcess, start_service, wait_until
from tool_selector_client import AsyncSelectorClient, SelectorClient
from tool_selector_client.wire import COMPRESS_PATH

KEY, OTHER = "hostile-key-0123456789", "other-key-9876543210"
BUFFER = 4000
REDACT_KEY = "per-deployment-secret"
BUFFERED = "tool_selector_request_body_bytes"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """Lexical service: two keys, one search slot, 4,000 buffered body bytes, 3 s body timeout."""
    env = {
        "TOOL_SELECTOR_ENCODER": "none",
        "TOOL_SELECTOR_API_KEYS": f"{KEY},{OTHER}",
        "TOOL_SELECTOR_MAX_IN_FLIGHT": "1",
        "TOOL_SELECTOR_BODY_BUFFER_BYTES": str(BUFFER),
        "TOOL_SELECTOR_BODY_TIMEOUT_SECONDS": "3",
        "TOOL_SELECTOR_MAX_BODY_BYTES": "3000",
        "TOOL_SELECTOR_LOG_REDACT_KEY": REDACT_KEY,
    }
    proc = start_service(tmp_path_factory.mktemp("hostile"), env, wait_ready=False)
    yield proc
    proc.stop()


AUTH = {"Authorization": f"Bearer {KEY}"}
CHUNKED = (
    f"POST {SEARCH} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    f"Authorization: Bearer {KEY}\r\nTransfer-Encoding: chunked\r\n\r\n"
).encode()


def post(service: ServiceProcess, headers: dict[str, str], body: bytes = BODY) -> httpx.Response:
    headers = {"Content-Type": "application/json", **headers}
    return httpx.post(service.url + SEARCH, content=body, headers=headers, timeout=10)


def metric(service: ServiceProcess, name: str) -> float:
    text = httpx.get(service.url + "/metrics").text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def errors(service: ServiceProcess, code: str) -> float:
    return metric(service, f'tool_selector_errors_total{{code="{code}",route="search"}}')


@pytest.mark.parametrize(
    ("raw", "half_close"),
    [
        (CHUNKED + b"zz\r\nabc\r\n0\r\n\r\n", False),
        (CHUNKED + b"-5\r\nabc\r\n0\r\n\r\n", False),
        (CHUNKED + b"ffffffffffffffffffff\r\nabc\r\n0\r\n\r\n", False),
        (CHUNKED + b"3\r\nabcXX0\r\n\r\n", False),
        (CHUNKED + b"3\r\nabc\r\nzz\r\nabc\r\n0\r\n\r\n", False),
        (CHUNKED + b"3\r\nabc\r\n", True),
        (head(len(BODY), AUTH) + BODY[:10], True),
    ],
    ids=[
        "size-zz",
        "size-negative",
        "size-overflow",
        "chunk-without-crlf",
        "good-then-bad",
        "half-close-chunked",
        "half-close-content-length",
    ],
)
def test_a_broken_body_gets_a_400_json_error_counted_and_closed(
    service: ServiceProcess, raw: bytes, half_close: bool
) -> None:
    before = errors(service, "malformed_body")
    with connect(service) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        r = read_response(sock)
        assert (r.status, json.loads(r.body)["code"]) == (400, "malformed_body")
        assert r.headers["connection"] == "close"
        assert closed_within(sock, 5)
    assert errors(service, "malformed_body") == before + 1


def test_a_broken_body_on_the_compress_path_gets_that_paths_error_shape(
    service: ServiceProcess,
) -> None:
    raw = CHUNKED.replace(SEARCH.encode(), COMPRESS_PATH.encode()) + b"zz\r\nabc\r\n0\r\n\r\n"
    with connect(service) as sock:
        sock.sendall(raw)
        r = read_response(sock)
    body = json.loads(r.body)
    assert (r.status, body["success"], body["code"]) == (400, False, "malformed_body")


def test_a_refusal_before_the_body_closes_the_connection(service: ServiceProcess) -> None:
    with connect(service) as sock:
        sock.sendall(head(len(BODY)) + BODY)  # no credentials
        r = read_response(sock)
        assert (r.status, r.headers["connection"]) == (401, "close")
        assert closed_within(sock, 5)


def test_a_refusal_after_the_body_keeps_the_connection(service: ServiceProcess) -> None:
    with connect(service) as sock:
        sock.sendall(head(5, AUTH) + b"{nope")
        assert read_response(sock).status == 400
        sock.sendall(head(len(BODY), AUTH) + BODY)
        assert read_response(sock).status == 200


def test_slow_senders_hold_no_ranking_slot(service: ServiceProcess) -> None:
    """One slot; three connections sending their bodies slowly; a full request still ranks."""
    holders = [connect(service) for _ in range(3)]
    try:
        for sock in holders:
            sock.sendall(head(len(BODY), AUTH) + BODY[:10])
        assert post(service, AUTH).status_code == 200
    finally:
        for sock in holders:
            sock.close()


def test_bodies_past_the_buffer_budget_get_503_and_close(service: ServiceProcess) -> None:
    holders = [connect(service) for _ in range(2)]
    try:
        for sock in holders:  # 2 x 2,000: all 4,000 bytes, held until the 3 s body timeout
            sock.sendall(head(2900, AUTH) + b" " * 2000)
        wait_until(lambda: metric(service, BUFFERED) == BUFFER, 2, "the budget taken")
        with connect(service) as sock:
            sock.sendall(head(len(BODY), AUTH) + BODY)
            r = read_response(sock)
    finally:
        for sock in holders:
            sock.close()
    assert (r.status, json.loads(r.body)["code"]) == (503, "overloaded")
    assert (r.headers["connection"], r.headers["retry-after"]) == ("close", "1")


def test_every_body_byte_is_given_back(service: ServiceProcess) -> None:
    """After answers, refusals, broken bodies and clients that left, the budget is whole."""
    post(service, AUTH)
    post(service, {})
    with connect(service) as sock:
        sock.sendall(CHUNKED + b"3\r\nabc\r\nzz\r\n")
        read_response(sock)
    with connect(service) as sock:
        sock.sendall(head(len(BODY), AUTH) + BODY[:20])
    wait_until(lambda: metric(service, BUFFERED) == 0, 5, "every body byte given back")


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Authorization": f"Bearer {KEY}", "X-API-Key": OTHER}, 200),
        ({"Authorization": f"Bearer {KEY}", "X-API-Key": "wrong"}, 401),
        ({"X-API-Key": "wrong", "Authorization": f"Bearer {KEY}"}, 401),
        ({"X-API-Key": KEY, "Authorization": "Basic abc"}, 401),
    ],
    ids=["both-accepted", "bearer-good-key-wrong", "key-wrong-bearer-good", "other-scheme"],
)
def test_every_credential_presented_must_be_accepted(
    service: ServiceProcess, headers: dict[str, str], status: int
) -> None:
    assert post(service, headers).status_code == status


def test_the_client_pool_survives_a_refusal_before_the_body(service: ServiceProcess) -> None:
    big: list[Any] = [{"name": f"tool_{i}", "description": "x" * 40} for i in range(60)]
    small: list[Any] = [{"name": "read_file"}, {"name": "slack_send"}]
    with SelectorClient(service.url, token=KEY, timeout_s=5) as client:
        refused = client.select("send slack message", big)  # 413 from Content-Length
        answered = [client.select("send slack message", small) for _ in range(3)]
    assert refused.reason == "http_status"
    assert [s.names[:1] for s in answered] == [("slack_send",)] * 3


def test_the_async_client_pool_survives_a_refusal_before_the_body(
    service: ServiceProcess,
) -> None:
    big: list[Any] = [{"name": f"tool_{i}", "description": "x" * 40} for i in range(60)]
    small: list[Any] = [{"name": "read_file"}, {"name": "slack_send"}]

    async def go() -> tuple[str | None, list[tuple[str, ...]]]:
        async with AsyncSelectorClient(service.url, token=KEY, timeout_s=5) as client:
            refused = await client.select("send slack message", big)
            answered = [await client.select("send slack message", small) for _ in range(3)]
        return refused.reason, [s.names[:1] for s in answered]

    assert asyncio.run(go()) == ("http_status", [("slack_send",)] * 3)


def test_redacted_patterns_are_a_keyed_hash(service: ServiceProcess) -> None:
    pattern = "confirm-me-if-you-can"
    post(service, AUTH, json.dumps({"pattern": pattern, "tools": [{"name": "a"}]}).encode())
    mac = hmac.new(REDACT_KEY.encode(), pattern.encode(), hashlib.sha256).hexdigest()[:16]
    plain = hashlib.sha256(pattern.encode()).hexdigest()[:12]
    log = service.log()
    assert f"hmac={mac}" in log
    assert plain not in log
