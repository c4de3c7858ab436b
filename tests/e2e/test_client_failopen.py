"""Every fail-open path of the client, against real misbehaving servers on loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.misbehaving import MisbehavingServer
from tests.support import free_port
from tool_selector_client import AsyncSelectorClient, CircuitBreaker, Selection, SelectorClient
from tool_selector_client import client as client_module
from tool_selector_client.core import prepare

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file"}},
    {"name": "slack_send", "description": "Send a Slack message", "input_schema": {}},
]
Select = Callable[..., Selection]


@pytest.fixture(scope="module")
def bad_server() -> Iterator[MisbehavingServer]:
    server = MisbehavingServer()
    yield server
    server.close()


def _sync(url: str, **options: Any) -> Select:
    def run(pattern: str, tools: Any = TOOLS, **kw: Any) -> Selection:
        with SelectorClient(url, **options) as client:
            return client.select(pattern, tools, **kw)

    return run


def _async(url: str, **options: Any) -> Select:
    def run(pattern: str, tools: Any = TOOLS, **kw: Any) -> Selection:
        async def go() -> Selection:
            async with AsyncSelectorClient(url, **options) as client:
                return await client.select(pattern, tools, **kw)

        return asyncio.run(go())

    return run


KINDS = pytest.mark.parametrize("make", [_sync, _async], ids=["sync", "async"])


@KINDS
@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("trickle", "timeout"),
        ("trickle_headers", "timeout"),
        ("hang", "timeout"),
        ("reset", "connect_error"),
        ("status_500", "http_status"),
        ("invalid_json", "bad_response"),
        ("huge", "bad_response"),
        ("unknown_names", "unknown_names"),
        ("empty", "empty_selection"),
        ("   ", "empty_pattern"),
    ],
    ids=[
        "trickle",
        "trickle_headers",
        "hang",
        "reset",
        "500",
        "invalid_json",
        "huge",
        "unknown_names",
        "empty",
        "blank",
    ],
)
def test_misbehaving_server_fails_open_with_reason(
    bad_server: MisbehavingServer, make: Callable[..., Select], behaviour: str, reason: str
) -> None:
    selection = make(bad_server.url, timeout_s=0.3)(behaviour)
    assert (selection.reason, selection.tools, selection.names) == (reason, TOOLS, ())


@KINDS
def test_refused_connection_fails_open_with_connect_error(make: Callable[..., Select]) -> None:
    selection = make(f"http://127.0.0.1:{free_port()}", timeout_s=1)("read a file")
    assert (selection.reason, selection.tools) == ("connect_error", TOOLS)


@KINDS
def test_disabled_client_fails_open_without_calling(
    bad_server: MisbehavingServer, make: Callable[..., Select]
) -> None:
    before = len(bad_server.requests)
    selection = make(bad_server.url, enabled=False)("read a file")
    assert (selection.reason, selection.tools, len(bad_server.requests)) == (
        "disabled",
        TOOLS,
        before,
    )


def test_open_circuit_fails_open_without_calling(bad_server: MisbehavingServer) -> None:
    with SelectorClient(bad_server.url, breaker=CircuitBreaker(threshold=1)) as client:
        first = client.select("status_500", TOOLS)
        before = len(bad_server.requests)
        second = client.select("read a file", TOOLS)
    assert (first.reason, second.reason, second.tools) == ("http_status", "circuit_open", TOOLS)
    assert len(bad_server.requests) == before


def test_async_open_circuit_fails_open(bad_server: MisbehavingServer) -> None:
    async def go() -> tuple[Selection, Selection]:
        breaker = CircuitBreaker(threshold=1)
        async with AsyncSelectorClient(bad_server.url, breaker=breaker) as client:
            return await client.select("hang", TOOLS), await client.select("x", TOOLS)

    first, second = asyncio.run(go())
    assert (first.reason, second.reason) == ("timeout", "circuit_open")


def test_bearer_token_is_sent(bad_server: MisbehavingServer) -> None:
    with SelectorClient(bad_server.url, token="s3cret") as client:
        selection = client.select("read", TOOLS)
    assert selection.names == ("read_file",)
    assert bad_server.requests[-1]["headers"]["authorization"] == "Bearer s3cret"


def test_raw_definitions_travel_as_definition(bad_server: MisbehavingServer) -> None:
    with SelectorClient(bad_server.url) as client:
        client.select("read", TOOLS)
    sent = bad_server.requests[-1]["body"]["tools"]
    assert sent == [
        {"name": "read_file", "description": "Read a file", "definition": TOOLS[0]},
        {"name": "slack_send", "description": "Send a Slack message", "definition": TOOLS[1]},
    ]


@KINDS
@pytest.mark.parametrize(
    ("tools", "reason", "returned"),
    [
        (None, "empty_selection", []),
        (42, "empty_selection", []),
        (lambda: (t for t in TOOLS), None, [TOOLS[0]]),
    ],
    ids=["none", "not_iterable", "generator"],
)
def test_tools_that_are_not_a_list_never_raise(
    bad_server: MisbehavingServer,
    make: Callable[..., Select],
    tools: Any,
    reason: str | None,
    returned: list[Any],
) -> None:
    selection = make(bad_server.url)("read", tools() if callable(tools) else tools)
    assert (selection.reason, selection.tools) == (reason, returned)


@pytest.mark.parametrize(
    ("status", "next_reason"),
    [
        ("400", None),
        ("413", None),
        ("408", "circuit_open"),
        ("429", "circuit_open"),
        ("503", "circuit_open"),
    ],
    ids=["400", "413", "408", "429", "503"],
)
def test_only_server_side_statuses_open_the_circuit(
    bad_server: MisbehavingServer, status: str, next_reason: str | None
) -> None:
    with SelectorClient(bad_server.url, breaker=CircuitBreaker(threshold=1)) as client:
        first = client.select(f"status_{status}", TOOLS)
        second = client.select("read", TOOLS)
    assert (first.reason, first.status, second.reason) == ("http_status", int(status), next_reason)


def test_a_call_past_its_deadline_frees_its_worker(bad_server: MisbehavingServer) -> None:
    with SelectorClient(bad_server.url, timeout_s=0.5, workers=1) as client:
        first = client.select("trickle_headers", TOOLS)
        time.sleep(0.2)
        second = client.select("read", TOOLS)
    assert (first.reason, second.reason) == ("timeout", None)


@KINDS
def test_the_deadline_counts_from_the_call_not_from_the_request(
    bad_server: MisbehavingServer, make: Callable[..., Select], monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow_prepare(*args: Any) -> Any:
        time.sleep(0.3)  # building the body ate the whole budget
        return prepare(*args)

    monkeypatch.setattr(client_module, "prepare", slow_prepare)
    assert make(bad_server.url, timeout_s=0.2)("read").reason == "timeout"


def test_default_workers_carry_a_burst_of_concurrent_calls(bad_server: MisbehavingServer) -> None:
    with SelectorClient(bad_server.url, timeout_s=1.0) as client, ThreadPoolExecutor(24) as pool:
        reasons = list(pool.map(lambda _: client.select("slow", TOOLS).reason, range(24)))
    assert reasons == [None] * 24
