"""Auth, overload, body/header timeouts, deadline and graceful shutdown, over real loopback."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.e2e.rawhttp import BODY, SEARCH, closed_within, connect, head, read_response
from tests.support import ServiceProcess, start_service, wait_until

KEYS = {"old": "old-key-0123456789", "new": "new-key-9876543210"}
AUTH = {"Authorization": f"Bearer {KEYS['new']}"}
LEXICAL = {"TOOL_SELECTOR_ENCODER": "none"}
BODY_TIMEOUT = 3


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """Lexical service with two keys, one search slot, 1 s header and 3 s body timeouts."""
    env = {
        **LEXICAL,
        "TOOL_SELECTOR_API_KEYS": f"{KEYS['old']},{KEYS['new']}",
        "TOOL_SELECTOR_MAX_IN_FLIGHT": "1",
        "TOOL_SELECTOR_RETRY_AFTER_SECONDS": "2",
        "TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS": "1",
        "TOOL_SELECTOR_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
        "TOOL_SELECTOR_MAX_BODY_BYTES": "100000",
    }
    proc = start_service(tmp_path_factory.mktemp("guarded"), env, wait_ready=False)
    yield proc
    proc.stop()


def post(service: ServiceProcess, headers: dict[str, str], body: bytes = BODY) -> httpx.Response:
    headers = {"Content-Type": "application/json", **headers}
    return httpx.post(service.url + SEARCH, content=body, headers=headers, timeout=10)


def slot_free(service: ServiceProcess) -> bool:
    return post(service, AUTH).status_code == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": f"Basic {KEYS['new']}"}, 401),
        ({"X-API-Key": KEYS["old"][:-1]}, 401),
        ({"Authorization": f"Bearer {KEYS['old']}"}, 200),
        ({"Authorization": f"Bearer {KEYS['new']}"}, 200),
        ({"X-API-Key": KEYS["new"]}, 200),
        ({"Authorization": "Bearer wrong", "X-API-Key": KEYS["new"]}, 401),
    ],
    ids=[
        "none",
        "wrong-bearer",
        "basic-scheme",
        "key-prefix",
        "old-key",
        "new-key",
        "x-api-key",
        "wrong-bearer-wins",
    ],
)
def test_search_auth(guarded: ServiceProcess, headers: dict[str, str], status: int) -> None:
    assert post(guarded, headers).status_code == status


def test_401_names_the_scheme_and_the_error_code(guarded: ServiceProcess) -> None:
    r = post(guarded, {})
    assert (r.headers["www-authenticate"], r.json()["code"]) == ("Bearer", "unauthorized")


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"], ids=str)
def test_probes_and_metrics_need_no_token(guarded: ServiceProcess, path: str) -> None:
    assert httpx.get(guarded.url + path).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("TRACE", "/healthz", "GET"), ("GET", SEARCH, "POST")],
    ids=["trace-healthz", "get-search"],
)
def test_405_lists_the_allowed_methods(
    guarded: ServiceProcess, method: str, path: str, allow: str
) -> None:
    r = httpx.request(method, guarded.url + path)
    assert r.status_code == 405
    assert allow in r.headers["allow"]


def test_auth_is_checked_before_the_body_is_read(guarded: ServiceProcess) -> None:
    with connect(guarded) as sock:
        sock.sendall(head(50_000))
        assert read_response(sock).status == 401


def test_declared_oversize_body_is_refused_before_it_is_read(guarded: ServiceProcess) -> None:
    with connect(guarded) as sock:
        sock.sendall(head(10_000_000, AUTH))
        r = read_response(sock)
    assert (r.status, json.loads(r.body)["code"]) == (413, "payload_too_large")


def test_stalled_body_gets_408_and_the_connection_closes(guarded: ServiceProcess) -> None:
    wait_until(lambda: slot_free(guarded), 10, "a free slot")
    with connect(guarded) as sock:
        sock.sendall(head(len(BODY), AUTH) + BODY[:10])
        r = read_response(sock)
        assert (r.status, json.loads(r.body)["code"]) == (408, "request_timeout")
        assert closed_within(sock, 5)


def test_slow_headers_are_cut_off(guarded: ServiceProcess) -> None:
    with connect(guarded) as sock:
        sock.sendall(b"POST " + SEARCH.encode() + b" HTTP/1.1\r\nHost: te")
        assert closed_within(sock, 8)


def heavy(tag: str, tools: int = 1200) -> bytes:
    """A body whose catalog nobody has built yet (tens of ms to rank), distinct per ``tag``."""
    listed = [{"name": f"{tag}_{i}", "description": f"does thing {i} well"} for i in range(tools)]
    return json.dumps({"pattern": "thing 42", "tools": listed}).encode()


def concurrently(service: ServiceProcess, n: int) -> list[httpx.Response]:
    """``n`` heavy requests at once, each with its own catalog."""

    def one(i: int) -> httpx.Response:
        return post(service, AUTH, heavy(f"t{time.monotonic_ns()}_{i}"))

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_over_the_cap_gets_a_503_with_retry_after_once_the_wait_is_over(
    guarded: ServiceProcess,
) -> None:
    refused = [r for r in concurrently(guarded, 8) if r.status_code == 503]
    assert refused, "one slot, eight heavy requests at once: some must be refused"
    r = refused[0]
    text = httpx.get(guarded.url + "/metrics").text
    waited = re.search(r'admission_wait_seconds_count\{result="refused"\} (\S+)', text)
    assert (r.headers["retry-after"], r.json()["code"]) == ("2", "overloaded")
    assert "connection" not in r.headers  # the body was read: the connection stays usable
    assert waited  # it waited its turn (the admission wait), then was refused
    assert float(waited.group(1)) >= len(refused)


def test_a_request_over_the_cap_is_served_when_a_slot_frees_in_time(tmp_path: Path) -> None:
    env = {**LEXICAL, "TOOL_SELECTOR_MAX_IN_FLIGHT": "1", "TOOL_SELECTOR_ADMISSION_WAIT_MS": "5000"}
    service = start_service(tmp_path, env, wait_ready=False)
    try:
        statuses = [r.status_code for r in concurrently(service, 3)]
        text = httpx.get(service.url + "/metrics").text
    finally:
        service.stop()
    admitted = re.search(r'admission_wait_seconds_count\{result="admitted"\} (\S+)', text)
    assert statuses == [200, 200, 200]
    assert admitted
    assert float(admitted.group(1)) >= 1


def test_refusals_are_counted_by_code(guarded: ServiceProcess) -> None:
    post(guarded, {})
    text = httpx.get(guarded.url + "/metrics").text
    assert 'tool_selector_errors_total{code="unauthorized",route="search"}' in text


def test_deadline_cancels_slow_work_with_503(tmp_path: Path) -> None:
    env = {**LEXICAL, "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "0.005"}
    service = start_service(tmp_path, env, wait_ready=False)
    try:
        tools = [{"name": f"tool_{i}", "description": f"does thing {i} well"} for i in range(3000)]
        body = json.dumps({"pattern": "thing 42", "tools": tools}).encode()
        r = post(service, {}, body)
    finally:
        service.stop()
    assert (r.status_code, r.json()["code"]) == (503, "deadline_exceeded")


def test_an_abandoned_search_gives_its_worker_back(tmp_path: Path) -> None:
    """Filters costly enough to read (256 globs of a star and a long literal run against 2,000
    names of that letter: about a minute) answer 503 at the deadline; the work stopped there
    too, so the one worker serves the next search (it kept computing, and every search
    meanwhile was a 503)."""
    env = {
        **LEXICAL,
        "TOOL_SELECTOR_WORKER_THREADS": "1",
        "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "1",
        "TOOL_SELECTOR_ADMISSION_WAIT_MS": "1000",
    }
    service = start_service(tmp_path, env, wait_ready=False)
    try:
        tools = [{"name": "a" * 200 + str(i), "description": "d"} for i in range(2_000)]
        deny = ["*" + "a" * 150 + f"b{i}" for i in range(256)]
        costly = {"pattern": "find the file", "tools": tools, "filters": {"deny": deny}}
        first = post(service, {}, json.dumps(costly).encode())
        after = post(service, {}, BODY)
    finally:
        service.stop()
    assert (first.status_code, first.json()["code"]) == (503, "deadline_exceeded")
    assert (after.status_code, after.json()["selected_names"][0]) == (200, "slack_send")


def test_sigterm_finishes_the_request_in_flight(tmp_path: Path) -> None:
    service = start_service(tmp_path, LEXICAL, wait_ready=False)
    try:
        with connect(service) as sock:
            sock.sendall(head(len(BODY)) + BODY[:10])
            time.sleep(0.3)
            service.proc.terminate()
            time.sleep(0.5)
            sock.sendall(BODY[10:])
            r = read_response(sock)
        assert (r.status, json.loads(r.body)["selected_names"][0]) == (200, "slack_send")
        assert service.proc.wait(20) == 0
    finally:
        service.stop()
